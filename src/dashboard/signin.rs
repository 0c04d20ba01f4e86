//! Sign-in with a dashboard token, and sign-out. The sign-in form carries a random value that
//! is also set as a cookie (double submit) and kept on the server for the address that loaded
//! the form (`nonces`): a form posted from another site, or with a value the server did not
//! give that address, is refused, so nobody can sign a browser in to their own organization
//! behind its user's back. Failed attempts slow the next ones (`throttle`).

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use hyper::body::Incoming;
use hyper::header::{HeaderValue, RETRY_AFTER};
use hyper::{Request, Response, StatusCode};
use tracing::{info, warn};

use super::html::{self, csrf_input, notice};
use super::session::{self, Lookup};
use super::throttle::PEER_FREE_FAILURES;
use super::web::{self, Body};
use super::{Dashboard, SESSION_COOKIE, SIGNIN_COOKIE};

/// What checking a token said.
enum Checked {
    /// A valid token of `org`.
    Valid { org: String, token_id: String },
    /// Not a valid token; `org` when its id names one of an organization's tokens.
    Refused { org: Option<String> },
}

impl Dashboard {
    pub(super) fn login_form(
        &self,
        request: &Request<Incoming>,
        peer: SocketAddr,
    ) -> Response<Body> {
        let secure = self.secure(request);
        let query = web::query(request);
        let message = if web::field(&query, "expired").is_some() {
            notice(
                "info",
                "Your session has expired or was ended. Please sign in again.",
            )
        } else if web::field(&query, "signed_out").is_some() {
            notice("ok", "You are signed out.")
        } else {
            String::new()
        };
        self.login_page(peer.ip(), secure, StatusCode::OK, &message)
    }

    pub(super) async fn sign_in(
        &self,
        request: Request<Incoming>,
        peer: SocketAddr,
    ) -> Response<Body> {
        let ip = peer.ip();
        let secure = self.secure(&request);
        if !web::same_origin(&request) {
            crate::metrics::dashboard_sign_in("bad_form");
            let message = notice(
                "error",
                "This sign-in form was not sent from this dashboard.",
            );
            return self.login_page(ip, secure, StatusCode::FORBIDDEN, &message);
        }
        let wait = self.throttle.peer_wait(ip);
        if !wait.is_zero() {
            return self.throttled(ip, secure, wait, "this address");
        }
        let nonce = web::cookie(&request, SIGNIN_COOKIE);
        let form = match self.read_form(request, web::SIGN_IN_LIMIT).await {
            Ok(form) => form,
            Err(response) => return response,
        };
        let paired = match (nonce.as_deref(), web::field(&form, "csrf")) {
            (Some(cookie), Some(field)) => {
                !cookie.is_empty() && session::equal(cookie, field) && self.nonces.take(field, ip)
            }
            _ => false,
        };
        if !paired {
            crate::metrics::dashboard_sign_in("bad_form");
            let message = notice(
                "error",
                "Your browser did not send back this form's cookie (cookies are disabled, or the \
                 form was too old). Allow cookies for this site, then sign in again.",
            );
            return self.login_page(ip, secure, StatusCode::FORBIDDEN, &message);
        }
        let token = web::field(&form, "token").unwrap_or("").trim().to_string();
        if token.is_empty() {
            let message = notice("error", "Type or paste your dashboard token.");
            return self.login_page(ip, secure, StatusCode::BAD_REQUEST, &message);
        }
        let checked = self
            .blocking(move |admin| {
                Ok(match admin.dashboard_sign_in(&token)? {
                    Some(signed) => Checked::Valid {
                        org: signed.org,
                        token_id: signed.token_id,
                    },
                    None => Checked::Refused {
                        org: admin.dashboard_token_org(&token)?,
                    },
                })
            })
            .await;
        let org = match &checked {
            Ok(Checked::Valid { org, .. }) | Ok(Checked::Refused { org: Some(org) }) => Some(org),
            _ => None,
        };
        if let Some(org) = org {
            let wait = self.throttle.org_wait(org);
            if !wait.is_zero() {
                return self.throttled(ip, secure, wait, "this organization");
            }
        }
        match checked {
            Ok(Checked::Valid { org, token_id }) => {
                self.throttle.succeeded(ip, &org);
                crate::metrics::dashboard_sign_in("ok");
                let (id, _) = self.sessions.open(&org, &token_id);
                info!(%org, token = %token_id, %peer, "dashboard sign-in");
                let mut response = web::redirect("/dashboard/");
                web::set_cookie(
                    &mut response,
                    &web::cookie_text(SESSION_COOKIE, &id, None, secure),
                );
                web::set_cookie(
                    &mut response,
                    &web::cookie_text(SIGNIN_COOKIE, "", Some(0), secure),
                );
                response
            }
            Ok(Checked::Refused { org }) => {
                crate::metrics::dashboard_sign_in("bad_token");
                let failures = self.throttle.failed(ip, org.as_deref());
                if failures >= PEER_FREE_FAILURES {
                    warn!(%peer, failures, org = org.as_deref().unwrap_or("-"), "dashboard sign-in refused again: next attempts from this address are slowed");
                } else {
                    info!(%peer, "dashboard sign-in refused: not a valid token");
                }
                let message = notice(
                    "error",
                    "This dashboard token is not valid: it may be mistyped or cut, or it was \
                     revoked. Paste it again in full, or ask the gateway's operator for a new one.",
                );
                self.login_page(ip, secure, StatusCode::UNAUTHORIZED, &message)
            }
            Err(error) => self.failure(None, &error),
        }
    }

    pub(super) async fn sign_out(&self, request: Request<Incoming>) -> Response<Body> {
        let secure = self.secure(&request);
        if let Some(cookie) = web::cookie(&request, SESSION_COOKIE) {
            if let Lookup::Live(session) = self.sessions.get(&cookie) {
                if let Err(response) = self.checked_form(request, &session).await {
                    return response;
                }
                self.sessions.close(&cookie);
                info!(org = %session.org, token = %session.token_id, "dashboard sign-out");
            }
        }
        let mut response = web::redirect("/dashboard/login?signed_out=1");
        web::set_cookie(
            &mut response,
            &web::cookie_text(SESSION_COOKIE, "", Some(0), secure),
        );
        response
    }

    /// The answer to an attempt that came before its wait was over: 429, nothing checked.
    fn throttled(&self, ip: IpAddr, secure: bool, wait: Duration, whose: &str) -> Response<Body> {
        crate::metrics::dashboard_sign_in("throttled");
        let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
        info!(peer = %ip, wait_secs = seconds, whose, "dashboard sign-in throttled");
        let message = notice(
            "error",
            &format!(
                "Too many sign-ins with a wrong token from {whose}. Wait {seconds} s, then \
                 paste the token again in full."
            ),
        );
        let mut response = self.login_page(ip, secure, StatusCode::TOO_MANY_REQUESTS, &message);
        if let Ok(value) = HeaderValue::from_str(&seconds.max(1).to_string()) {
            response.headers_mut().insert(RETRY_AFTER, value);
        }
        response
    }

    /// The sign-in page with a fresh double-submit value (form field and cookie), kept for
    /// `ip`.
    fn login_page(
        &self,
        ip: IpAddr,
        secure: bool,
        status: StatusCode,
        message: &str,
    ) -> Response<Body> {
        login_page(&self.nonces.issue(ip), secure, status, message)
    }
}

/// The sign-in page with `nonce` as its double-submit value (form field and cookie).
fn login_page(nonce: &str, secure: bool, status: StatusCode, message: &str) -> Response<Body> {
    let body = format!(
        "{message}<p>Sign in with the dashboard token the gateway's operator gave you \
             (<code>emcf-gateway dashboard-token issue --org &lt;id&gt;</code>).</p>\
             <form method=\"post\" action=\"/dashboard/login\" id=\"sign-in-form\">{}\
             <p><label for=\"token\">Dashboard token</label>\
             <input type=\"password\" name=\"token\" id=\"token\" size=\"60\" autocomplete=\"off\" \
             required autofocus></p><p><button type=\"submit\" id=\"sign-in\">Sign in</button></p>\
             </form>",
        csrf_input(nonce)
    );
    let mut response = web::html(status, html::page("Sign in", None, &body));
    web::set_cookie(
        &mut response,
        &web::cookie_text(SIGNIN_COOKIE, nonce, Some(3600), secure),
    );
    response
}
