//! Sign-in with a dashboard token, and sign-out. The sign-in form carries a random value that
//! is also set as a cookie (double submit): a form posted from another site has neither, so
//! nobody can sign a browser in to their own organization behind its user's back.

use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use tracing::info;

use super::html::{self, csrf_input, notice};
use super::session::{self, Lookup};
use super::web::{self, Body};
use super::{Dashboard, SESSION_COOKIE, SIGNIN_COOKIE};

impl Dashboard {
    pub(super) fn login_form(&self, request: &Request<Incoming>, secure: bool) -> Response<Body> {
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
        login_page(secure, StatusCode::OK, &message)
    }

    pub(super) async fn sign_in(&self, request: Request<Incoming>) -> Response<Body> {
        let secure = self.secure(&request);
        if !web::same_origin(&request) {
            let message = notice(
                "error",
                "This sign-in form was not sent from this dashboard.",
            );
            return login_page(secure, StatusCode::FORBIDDEN, &message);
        }
        let nonce = web::cookie(&request, SIGNIN_COOKIE);
        let form = match self.read_form(request).await {
            Ok(form) => form,
            Err(response) => return response,
        };
        let paired = match (nonce.as_deref(), web::field(&form, "csrf")) {
            (Some(cookie), Some(field)) => !cookie.is_empty() && session::equal(cookie, field),
            _ => false,
        };
        if !paired {
            let message = notice(
                "error",
                "Your browser did not send back this form's cookie (cookies are disabled, or the \
                 form was too old). Allow cookies for this site, then sign in again.",
            );
            return login_page(secure, StatusCode::FORBIDDEN, &message);
        }
        let token = web::field(&form, "token").unwrap_or("").trim().to_string();
        if token.is_empty() {
            let message = notice("error", "Type or paste your dashboard token.");
            return login_page(secure, StatusCode::BAD_REQUEST, &message);
        }
        match self
            .blocking(move |admin| admin.dashboard_sign_in(&token))
            .await
        {
            Ok(Some(signed)) => {
                let (id, _) = self.sessions.open(&signed.org, &signed.token_id);
                info!(org = %signed.org, token = %signed.token_id, "dashboard sign-in");
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
            Ok(None) => {
                info!("dashboard sign-in refused: not a valid token");
                let message = notice(
                    "error",
                    "This dashboard token is not valid: it may be mistyped or cut, or it was \
                     revoked. Paste it again in full, or ask the gateway's operator for a new one.",
                );
                login_page(secure, StatusCode::UNAUTHORIZED, &message)
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
}

/// The sign-in page with a fresh double-submit value (form field and cookie).
fn login_page(secure: bool, status: StatusCode, message: &str) -> Response<Body> {
    let nonce = session::random_hex();
    let body = format!(
        "{message}<p>Sign in with the dashboard token the gateway's operator gave you \
             (<code>emcf-gateway dashboard-token issue --org &lt;id&gt;</code>).</p>\
             <form method=\"post\" action=\"/dashboard/login\" id=\"sign-in-form\">{}\
             <p><label for=\"token\">Dashboard token</label>\
             <input type=\"password\" name=\"token\" id=\"token\" size=\"60\" autocomplete=\"off\" \
             required autofocus></p><p><button type=\"submit\" id=\"sign-in\">Sign in</button></p>\
             </form>",
        csrf_input(&nonce)
    );
    let mut response = web::html(status, html::page("Sign in", None, &body));
    web::set_cookie(
        &mut response,
        &web::cookie_text(SIGNIN_COOKIE, &nonce, Some(3600), secure),
    );
    response
}
