//! The invoice request body.
