//! What the simulator answers to one call, before it becomes an HTTP response: a status,
//! a body, or the connection closed without any answer.

use hyper::{Method, StatusCode};

use super::dgi_error::{error_body, DgiError};

/// The HTML page a proxy in front of the DGI answers when the service is down.
const UNAVAILABLE_PAGE: &str = "<html>\r\n<head><title>503 Service Temporarily Unavailable</title></head>\r\n\
<body>\r\n<center><h1>503 Service Temporarily Unavailable</h1></center>\r\n<hr><center>nginx</center>\r\n\
</body>\r\n</html>\r\n";

/// The media type of a JSON answer.
pub(crate) const JSON: &str = "application/json; charset=utf-8";

/// The media type of an HTML answer.
pub(crate) const HTML: &str = "text/html";

/// The simulator's answer to one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Answer {
    /// HTTP status.
    pub status: StatusCode,
    /// `Content-Type`.
    pub content_type: &'static str,
    /// The body.
    pub body: String,
    /// Close the connection instead of answering (the work, if any, is done).
    pub drop_connection: bool,
}

impl Answer {
    /// A JSON answer.
    pub(crate) fn json(status: StatusCode, body: String) -> Answer {
        Answer {
            status,
            content_type: JSON,
            body,
            drop_connection: false,
        }
    }

    /// An HTTP-level error (401, 404, 405, 413...) in the DGI's error shape, the status as
    /// `errorCode`.
    pub(crate) fn http_error(status: StatusCode, description: &str) -> Answer {
        Answer::json(status, error_body(status.as_str(), description))
    }

    /// 404: nothing is served at `path`.
    pub(crate) fn not_found(path: &str) -> Answer {
        Answer::http_error(
            StatusCode::NOT_FOUND,
            &format!("ressource introuvable: {path}"),
        )
    }

    /// 405: `path` is served, but not with `method`.
    pub(crate) fn method_not_allowed(method: &Method, path: &str) -> Answer {
        Answer::http_error(
            StatusCode::METHOD_NOT_ALLOWED,
            &format!("méthode {method} non permise sur {path}"),
        )
    }

    /// A DGI refusal: HTTP 400, or 200 under the `errors_on_200` fault.
    pub(crate) fn refusal(error: &DgiError, on_200: bool) -> Answer {
        let status = if on_200 {
            StatusCode::OK
        } else {
            StatusCode::BAD_REQUEST
        };
        Answer::json(status, error.body())
    }

    /// The `fail_next_5xx` fault's answer.
    pub(crate) fn unavailable() -> Answer {
        Answer {
            status: StatusCode::SERVICE_UNAVAILABLE,
            content_type: HTML,
            body: UNAVAILABLE_PAGE.to_owned(),
            drop_connection: false,
        }
    }

    /// No answer at all: the connection is closed.
    pub(crate) fn dropped() -> Answer {
        Answer {
            status: StatusCode::OK,
            content_type: JSON,
            body: String::new(),
            drop_connection: true,
        }
    }
}
