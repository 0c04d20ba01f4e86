//! The store: journal (truth) + sled index (projection).
