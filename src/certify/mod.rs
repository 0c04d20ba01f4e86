//! Certification: the use case. Validates a request, reserves quota, runs the invoice on the
//! device as one session, journals intent and certification, answers.

pub mod request;
pub mod validate;
