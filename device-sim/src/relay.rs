//! A fault relay between two serial lines (stub: being written).
