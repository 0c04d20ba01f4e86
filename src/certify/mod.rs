//! Certification: the use case.
