//! Validation of the request body.
