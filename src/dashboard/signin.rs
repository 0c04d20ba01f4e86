//! Sign-in with a dashboard token, and sign-out. The sign-in form carries a random value that
//! is also set as a cookie (double submit) and kept on the server for the address that loaded
//! the form (`nonces`): a form posted from another site, or with a value the server did not
//! give that address, is refused, so nobody can sign a browser in to their own organization
//! behind its user's back. Failed attempts slow the next ones (`throttle`). Both count by the
//! client's address: the connection's, or behind a trusted proxy the one it appended to
//! `X-Forwarded-For` (`web::Peer::client`), so that one client behind the proxy cannot slow
//! or void everyone's sign-in.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use hyper::body::Incoming;
use hyper::header::{HeaderValue, RETRY_AFTER};
use hyper::{Request, Response, StatusCode};
use tracing::{info, warn};

use super::html::{self, csrf_input, notice, t};
use super::lang::Reader;
use super::session::{self, Lookup};
use super::session_file::Kept;
use super::throttle::PEER_FREE_FAILURES;
use super::web::{self, Body};
use super::{Dashboard, SESSION_COOKIE, SIGNIN_COOKIE};
use crate::http_request;
use crate::i18n::Message;
use crate::msg;

/// What checking a token said.
enum Checked {
    /// A valid token of `org`.
    Valid { org: String, token_id: String },
    /// Not a valid token; `org` when its id names one of an organization's tokens.
    Refused { org: Option<String> },
}

impl Dashboard {
    pub(super) async fn login_form(
        &self,
        request: &Request<Incoming>,
        peer: SocketAddr,
        reader: &Reader,
    ) -> Response<Body> {
        let secure = self.secure(request);
        let query = http_request::query(request);
        let message = if http_request::field(&query, "expired").is_some() {
            if self.sessions_kept() == Kept::NotReadAtStart {
                Some(("info", msg!("dash-signin-lost-at-restart")))
            } else {
                Some(("info", msg!("dash-signin-expired")))
            }
        } else if http_request::field(&query, "signed_out").is_some() {
            Some(("ok", msg!("dash-signin-signed-out")))
        } else {
            None
        };
        let page = LoginPage {
            reader,
            secure,
            status: StatusCode::OK,
        };
        self.login_page(web::client_ip(request, peer), &page, message)
            .await
    }

    pub(super) async fn sign_in(
        &self,
        request: Request<Incoming>,
        peer: SocketAddr,
        reader: &Reader,
    ) -> Response<Body> {
        let ip = web::client_ip(&request, peer);
        let secure = self.secure(&request);
        let refuse = |status, text: Message| async move {
            let page = LoginPage {
                reader,
                secure,
                status,
            };
            self.login_page(ip, &page, Some(("error", text))).await
        };
        if !web::same_origin(&request) {
            crate::metrics::dashboard_sign_in("bad_form");
            return refuse(StatusCode::FORBIDDEN, msg!("dash-signin-foreign")).await;
        }
        let wait = match self.peer_wait(ip).await {
            Ok(wait) => wait,
            Err(error) => return self.failure(reader, None, &error),
        };
        if !wait.is_zero() {
            return self
                .throttled(ip, reader, secure, wait, Whose::Address)
                .await;
        }
        let nonce = web::cookie(&request, SIGNIN_COOKIE);
        let form = match self.read_form(request, web::SIGN_IN_LIMIT, reader).await {
            Ok(form) => form,
            Err(response) => return response,
        };
        let paired = match (nonce.as_deref(), http_request::field(&form, "csrf")) {
            (Some(cookie), Some(field)) if !cookie.is_empty() && session::equal(cookie, field) => {
                match self.sign_in_value_taken(field, ip).await {
                    Ok(taken) => taken,
                    Err(error) => return self.failure(reader, None, &error),
                }
            }
            _ => false,
        };
        if !paired {
            crate::metrics::dashboard_sign_in("bad_form");
            return refuse(StatusCode::FORBIDDEN, msg!("dash-signin-cookie")).await;
        }
        let token = http_request::field(&form, "token")
            .unwrap_or("")
            .trim()
            .to_string();
        if token.is_empty() {
            return refuse(StatusCode::BAD_REQUEST, msg!("dash-signin-empty")).await;
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
            let wait = match self.org_wait(org).await {
                Ok(wait) => wait,
                Err(error) => return self.failure(reader, None, &error),
            };
            if !wait.is_zero() {
                return self
                    .throttled(ip, reader, secure, wait, Whose::Organization)
                    .await;
            }
        }
        match checked {
            Ok(Checked::Valid { org, token_id }) => {
                if let Err(error) = self.sign_in_succeeded(ip, &org).await {
                    warn!(%error, "dashboard sign-in: the failed attempts before it not cleared");
                }
                let id = match self.session_open(&org, &token_id).await {
                    Ok(id) => id,
                    Err(error) => return self.failure(reader, None, &error),
                };
                crate::metrics::dashboard_sign_in("ok");
                info!(%org, token = %token_id, %peer, client = %ip, "dashboard sign-in");
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
                let failures = match self.sign_in_failed(ip, org.as_deref()).await {
                    Ok(failures) => failures,
                    Err(error) => {
                        warn!(%error, "dashboard sign-in: a failed attempt not counted");
                        0
                    }
                };
                if failures >= PEER_FREE_FAILURES {
                    warn!(%peer, client = %ip, failures, org = org.as_deref().unwrap_or("-"), "dashboard sign-in refused again: next attempts from this address are slowed");
                } else {
                    info!(%peer, client = %ip, "dashboard sign-in refused: not a valid token");
                }
                refuse(StatusCode::UNAUTHORIZED, msg!("dash-signin-invalid")).await
            }
            Err(error) => self.failure(reader, None, &error),
        }
    }

    pub(super) async fn sign_out(
        &self,
        request: Request<Incoming>,
        reader: &Reader,
    ) -> Response<Body> {
        let secure = self.secure(&request);
        if let Some(cookie) = web::cookie(&request, SESSION_COOKIE) {
            let found = match self.session_lookup(&cookie).await {
                Ok(found) => found,
                Err(error) => return self.failure(reader, None, &error),
            };
            if let Lookup::Live(session) = found {
                if let Err(response) = self.checked_form(request, &session, reader).await {
                    return response;
                }
                if let Err(error) = self.session_close(&cookie).await {
                    return self.failure(reader, None, &error);
                }
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
    async fn throttled(
        &self,
        ip: IpAddr,
        reader: &Reader,
        secure: bool,
        wait: Duration,
        whose: Whose,
    ) -> Response<Body> {
        crate::metrics::dashboard_sign_in("throttled");
        let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
        let (logged, shown) = match whose {
            Whose::Address => ("this address", msg!("dash-signin-whose-address")),
            Whose::Organization => ("this organization", msg!("dash-signin-whose-org")),
        };
        info!(client = %ip, wait_secs = seconds, whose = logged, "dashboard sign-in throttled");
        let text = msg!(
            "dash-signin-throttled",
            whose = shown.render(reader.lang),
            seconds = seconds
        );
        let page = LoginPage {
            reader,
            secure,
            status: StatusCode::TOO_MANY_REQUESTS,
        };
        let mut response = self.login_page(ip, &page, Some(("error", text))).await;
        if let Ok(value) = HeaderValue::from_str(&seconds.max(1).to_string()) {
            response.headers_mut().insert(RETRY_AFTER, value);
        }
        response
    }

    /// The sign-in page with a fresh double-submit value (form field and cookie), kept for
    /// `ip`, and `message` (a notice's kind and text) above the form.
    async fn login_page(
        &self,
        ip: IpAddr,
        page: &LoginPage<'_>,
        message: Option<(&str, Message)>,
    ) -> Response<Body> {
        let not_kept = self.sessions_kept() == Kept::NotWritten;
        match self.sign_in_value(ip).await {
            Ok(value) => page.render(&value, message, not_kept),
            Err(error) => self.failure(page.reader, None, &error),
        }
    }

    /// Whether sessions survive a restart now.
    fn sessions_kept(&self) -> Kept {
        self.session_file
            .as_ref()
            .map_or(Kept::Yes, |file| file.kept())
    }
}

/// Whose wrong tokens slowed a sign-in.
#[derive(Debug, Clone, Copy)]
enum Whose {
    Address,
    Organization,
}

/// How a sign-in page is answered.
struct LoginPage<'a> {
    reader: &'a Reader,
    secure: bool,
    status: StatusCode,
}

impl LoginPage<'_> {
    /// The page with `nonce` as its double-submit value (form field and cookie), and a
    /// warning when sessions cannot be kept across a restart now (`not_kept`).
    fn render(
        &self,
        nonce: &str,
        message: Option<(&str, Message)>,
        not_kept: bool,
    ) -> Response<Body> {
        let lang = self.reader.lang;
        let mut message =
            message.map_or_else(String::new, |(kind, text)| notice(kind, &text.render(lang)));
        if not_kept {
            message.push_str(&format!(
                "<p class=\"notice warn\" role=\"status\" id=\"sessions-not-kept\">{}</p>",
                t(lang, msg!("dash-signin-not-kept"))
            ));
        }
        let body = format!(
            "{message}<p>{}</p>\
             <form method=\"post\" action=\"/dashboard/login\" id=\"sign-in-form\">{}\
             <p><label for=\"token\">{}</label><br>\
             <input type=\"password\" name=\"token\" id=\"token\" autocomplete=\"off\" \
             required autofocus></p><p><button type=\"submit\" id=\"sign-in\">{}</button></p>\
             </form><details id=\"operator\"><summary>{}</summary><p>{} \
             <code>emcf-gateway dashboard-token issue --org &lt;id&gt;</code></p></details>",
            t(lang, msg!("dash-signin-intro")),
            csrf_input(nonce),
            t(lang, msg!("dash-signin-token")),
            t(lang, msg!("dash-signin-submit")),
            t(lang, msg!("dash-signin-operator")),
            t(lang, msg!("dash-signin-operator-how")),
        );
        let title = msg!("dash-sign-in-title").render(lang);
        let mut response = web::html(self.status, html::page(self.reader, &title, None, &body));
        web::set_cookie(
            &mut response,
            &web::cookie_text(SIGNIN_COOKIE, nonce, Some(3600), self.secure),
        );
        response
    }
}
