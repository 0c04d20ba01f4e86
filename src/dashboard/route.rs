//! Which page a dashboard path names.

use super::invoices;
use crate::model::Environment;

/// Where a path leads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Route {
    Root,
    Style,
    Lang,
    Login,
    Logout,
    Overview,
    Keys,
    KeysToggle,
    KeyDisable,
    ResolveInDoubt,
    Invoices,
    InvoicesCsv,
    Invoice(Environment, u64),
    /// The printable fiscal block of an entry (`receipt.rs`).
    Receipt(Environment, u64),
    NotFound,
}

pub(super) fn route(path: &str) -> Route {
    match path {
        "/dashboard" => Route::Root,
        "/dashboard/" => Route::Overview,
        "/dashboard/style.css" => Route::Style,
        "/dashboard/lang" => Route::Lang,
        "/dashboard/login" => Route::Login,
        "/dashboard/logout" => Route::Logout,
        "/dashboard/keys" => Route::Keys,
        "/dashboard/keys/toggle" => Route::KeysToggle,
        "/dashboard/keys/disable" => Route::KeyDisable,
        "/dashboard/in-doubt/resolve" => Route::ResolveInDoubt,
        "/dashboard/invoices" => Route::Invoices,
        "/dashboard/invoices.csv" => Route::InvoicesCsv,
        _ => {
            let Some(rest) = path.strip_prefix("/dashboard/invoices/") else {
                return Route::NotFound;
            };
            let mut parts = rest.split('/');
            let (Some(env), Some(seq), view, None) =
                (parts.next(), parts.next(), parts.next(), parts.next())
            else {
                return Route::NotFound;
            };
            match (invoices::parse_env(env), seq.parse::<u64>(), view) {
                (Some(env), Ok(seq), None) => Route::Invoice(env, seq),
                (Some(env), Ok(seq), Some("receipt")) => Route::Receipt(env, seq),
                _ => Route::NotFound,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_route_to_pages() {
        assert_eq!(route("/dashboard"), Route::Root);
        assert_eq!(route("/dashboard/"), Route::Overview);
        assert_eq!(route("/dashboard/keys/toggle"), Route::KeysToggle);
        assert_eq!(route("/dashboard/keys/disable"), Route::KeyDisable);
        assert_eq!(route("/dashboard/lang"), Route::Lang);
        assert_eq!(route("/dashboard/in-doubt/resolve"), Route::ResolveInDoubt);
        assert_eq!(
            route("/dashboard/invoices/production/12"),
            Route::Invoice(Environment::Production, 12)
        );
        assert_eq!(
            route("/dashboard/invoices/sandbox/1"),
            Route::Invoice(Environment::Sandbox, 1)
        );
        assert_eq!(
            route("/dashboard/invoices/production/12/receipt"),
            Route::Receipt(Environment::Production, 12)
        );
        for path in [
            "/dashboard/invoices/prod/1",
            "/dashboard/invoices/production/x",
            "/dashboard/invoices/production/1/2",
            "/dashboard/invoices/production/1/receipt/",
            "/dashboard/invoices/production/x/receipt",
            "/dashboard/invoices/production/",
            "/dashboard/nope",
            "/dashboardx",
        ] {
            assert_eq!(route(path), Route::NotFound, "{path}");
        }
    }
}
