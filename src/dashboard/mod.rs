//! The organization dashboard (docs/design.md §8), served by the gateway under `/dashboard`: plain
//! HTML forms, no script, no build step.
//!
//! French first, English too: every text comes from `locales/<lang>/dashboard.ftl` (ids
//! `dash-*`), in the reader's language (`lang`: the FR / EN switch's cookie, else
//! `Accept-Language`, else the installation's default); amounts and times as that reader
//! writes them, times in the organization's zone (the configured `timezone_offset`, the quota
//! year's) with the offset shown. Every page fits a phone's width (`style`).
//!
//! # Routes
//!
//! | method | path | what |
//! |---|---|---|
//! | GET | `/dashboard` | redirect to `/dashboard/` |
//! | GET | `/dashboard/style.css` | the stylesheet (public) |
//! | GET | `/dashboard/lang?to=fr\|en&back=` | keeps the reader's language choice (cookie), goes back |
//! | GET, POST | `/dashboard/login` | sign-in form; sign in with a dashboard token |
//! | POST | `/dashboard/logout` | sign out |
//! | GET | `/dashboard/` | overview: organization, quota gauge, devices in plain words (their protocol values under "technical details"), alerts, invoices in doubt, counters |
//! | GET, POST | `/dashboard/keys` | API keys; POST issues one (secret shown once) |
//! | GET | `/dashboard/keys/disable?id=` | asks to confirm disabling a key (its tills are cut off) |
//! | POST | `/dashboard/keys/disable` | disables a key (`id`), the confirmation's form |
//! | POST | `/dashboard/keys/toggle` | enables a key (`id`, `enabled=true`); `enabled=false` leads to the confirmation |
//! | POST | `/dashboard/in-doubt/resolve` | settles an invoice in doubt |
//! | GET | `/dashboard/invoices` | LogInvoices: `env`, `rn`, `from`, `to`, `before` (paging) |
//! | GET | `/dashboard/invoices/{env}/{seq}` | one entry, security elements, QR code |
//! | GET | `/dashboard/invoices/{env}/{seq}/receipt?layout=a4\|80mm\|58mm` | its printable fiscal block |
//! | GET | `/dashboard/invoices.csv?env=` | the organization's register of `env` as CSV |
//!
//! # Security
//!
//! * Sign-in: a token from `emcf-gateway dashboard-token issue --org ID` (only its SHA-256 is
//!   stored; compared in constant time; see `admin::token`). The sign-in form itself carries a
//!   random value also set as a cookie (double submit), against login CSRF.
//! * Session: cookie `emcf_session` = 256 random bits, `Path=/dashboard; HttpOnly;
//!   SameSite=Strict`, plus `Secure` when the request came through a TLS proxy
//!   (`X-Forwarded-Proto: https` from a peer of `[http] trusted_proxies`) or
//!   [`SecureCookies::Always`] is set. Server-side (`session`): 8 h idle, 24 h at most, ended
//!   on sign-out or when the token is revoked or the organization removed; kept across a
//!   restart in `<state_dir>/dashboard-sessions.json` (`session_file`: the SHA-256 of each
//!   id, never the id; the CSRF token is derived from the id). On PostgreSQL, in the
//!   database for every replica instead (`shared`), as are the sign-in form's values and
//!   the failed sign-ins' counts.
//! * CSRF: every POST must carry the session's CSRF token, and its `Origin` (else `Referer`),
//!   when sent, must name the requested host (`Host`, or `X-Forwarded-Host` from a trusted
//!   proxy); otherwise 403 and nothing is done. Forwarding headers from any other peer are
//!   ignored (`web::Peer`). A trusted proxy must set (replace) `X-Forwarded-Host`,
//!   `X-Forwarded-Proto` and `X-Forwarded-For`; if it appends to a list instead, only the
//!   last element, its own, is read. A range that reaches past a local network is logged at
//!   start (`0.0.0.0/0` trusts every client).
//! * Sign-in protections (failures slowing the next attempts, the form's values per address)
//!   count by the client's address: behind a trusted proxy the right-most `X-Forwarded-For`
//!   entry, never from another peer. The HTTP layer's connection cap per address
//!   (`max_connections_per_peer`) cannot read headers before a request: behind a proxy it
//!   counts the proxy.
//! * Isolation: the organization comes from the session only; every admin request is an
//!   `Org*` one scoped to it, so another organization's key or entry is "not found".
//! * Disabling a key cuts off the tills using it: it is asked, then confirmed (a page with
//!   the key's id and label, and a POST form with the CSRF token); enabling is one click.
//! * Output: every dynamic value is HTML-escaped (`html::esc`); the CSP forbids scripts.
//!   Tokens, keys and session ids are never logged. Every text is the catalogue's, an error's
//!   too (`errors`): never an error's `Display`, which is for the log.

mod alerts;
mod devices;
mod errors;
mod html;
mod in_doubt;
mod invoice_page;
mod invoices;
mod keys;
mod lang;
mod nonces;
mod overview;
mod proxies;
mod receipt;
mod route;
mod session;
mod session_file;
mod shared;
mod signin;
mod style;
mod throttle;
mod web;

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use tracing::{info, warn};

use crate::admin::{Admin, AdminError};
use crate::alerts::AlertEngine;
use crate::certify::Certifier;
use crate::http_body::BodyLimits;
use crate::http_request;
use crate::i18n::{Lang, Message};
use crate::model::Organization;
use crate::msg;
use crate::notices::Notices;
pub use html::esc as escape;
use html::{Shell, Tab};
use lang::Reader;
pub use lang::LANG_COOKIE;
pub use proxies::{IpRange, ProxyReach, TrustedProxies};
use route::{route, Route};
use session::{Lookup, Session, Sessions};
use session_file::SessionFile;
use web::Body;

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "emcf_session";
/// The sign-in form's double-submit cookie.
pub const SIGNIN_COOKIE: &str = "emcf_signin";

/// When session cookies get the `Secure` attribute.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SecureCookies {
    /// Only for requests that came through a TLS-terminating proxy (`X-Forwarded-Proto: https`).
    #[default]
    Auto,
    /// Always (the dashboard is reached over HTTPS only).
    Always,
}

/// Dashboard settings.
#[derive(Debug, Clone)]
pub struct DashboardOptions {
    /// `Secure` cookies.
    pub secure_cookies: SecureCookies,
    /// The reverse proxies whose `X-Forwarded-Host`, `X-Forwarded-Proto` and
    /// `X-Forwarded-For` are believed (`[http] trusted_proxies`); from any other peer they are
    /// ignored.
    pub trusted_proxies: TrustedProxies,
    /// Requests in progress at once; more are answered 503 at once.
    pub max_requests: usize,
    /// What a form body may be (its size is the dashboard's own: [`web::FORM_LIMIT`], and
    /// [`web::SIGN_IN_LIMIT`] before sign-in).
    pub body: BodyLimits,
}

impl Default for DashboardOptions {
    fn default() -> Self {
        DashboardOptions {
            secure_cookies: SecureCookies::default(),
            trusted_proxies: TrustedProxies::default(),
            max_requests: 32,
            body: BodyLimits::default(),
        }
    }
}

/// The dashboard's state: what it reads and changes goes through `Admin`.
pub struct Dashboard {
    admin: Arc<Admin>,
    certifier: Arc<Certifier>,
    sessions: Arc<Sessions>,
    /// Where sessions are kept across a restart (none: in memory only).
    session_file: Option<Arc<SessionFile>>,
    nonces: nonces::SignInNonces,
    throttle: throttle::SignInThrottle,
    /// Sessions, sign-in values and failed sign-ins are kept by the store for every replica
    /// (PostgreSQL), not by this process (`shared`).
    shared: bool,
    busy: tokio::sync::Semaphore,
    options: DashboardOptions,
    /// The raised alerts (the overview's banners); none without an engine (tests).
    alerts: Option<Arc<AlertEngine>>,
    /// The change notices (the overview's banners until their date); none in tests.
    notices: Option<Arc<Notices>>,
}

/// A signed-in request: its session, organization and reader.
struct Ctx {
    session: Session,
    org: Organization,
    reader: Reader,
    /// The page asked for (what an error page names).
    route: Route,
}

impl Ctx {
    fn shell(&self, tab: Tab) -> Shell<'_> {
        Shell {
            org_name: &self.org.name,
            org_id: &self.org.id,
            csrf: &self.session.csrf,
            tab,
        }
    }

    fn lang(&self) -> Lang {
        self.reader.lang
    }

    /// `message` in the reader's language (plain text).
    fn text(&self, message: Message) -> String {
        message.render(self.reader.lang)
    }

    /// A signed-in page: `title` (plain text), the navigation with `tab` current, `body`.
    fn page(&self, title: &str, tab: Tab, body: &str) -> Response<Body> {
        web::html(
            StatusCode::OK,
            html::page(&self.reader, title, Some(&self.shell(tab)), body),
        )
    }
}

impl Dashboard {
    /// A dashboard over `admin` (organizations, keys, register) and `certifier` (device state).
    pub fn new(admin: Arc<Admin>, certifier: Arc<Certifier>) -> Dashboard {
        Dashboard::with_options(admin, certifier, DashboardOptions::default())
    }

    /// The same, with settings. A trusted proxy range that reaches past a local network is
    /// said in the log (it is accepted: a CDN's published ranges are public).
    pub fn with_options(
        admin: Arc<Admin>,
        certifier: Arc<Certifier>,
        options: DashboardOptions,
    ) -> Dashboard {
        for (range, reach) in options.trusted_proxies.wide() {
            match reach {
                ProxyReach::Everyone => {
                    warn!(%range, "http.trusted_proxies trusts EVERY address: any client can claim another host, TLS and another client address to the dashboard (its same-origin check, Secure cookies and sign-in protections); list only your reverse proxy's address")
                }
                ProxyReach::Public => {
                    warn!(%range, "http.trusted_proxies includes internet addresses: any host there can claim another host, TLS and another client address to the dashboard; right for a CDN's published ranges only, else list only your reverse proxy's address")
                }
            }
        }
        Dashboard {
            shared: admin.shares_sessions(),
            admin,
            certifier,
            sessions: Arc::new(Sessions::new()),
            session_file: None,
            nonces: nonces::SignInNonces::new(),
            throttle: throttle::SignInThrottle::new(),
            busy: tokio::sync::Semaphore::new(options.max_requests.max(1)),
            options,
            alerts: None,
            notices: None,
        }
    }

    /// The overview shows the change notices of `notices` until their effective date.
    pub fn with_notices(mut self, notices: Arc<Notices>) -> Dashboard {
        self.notices = Some(notices);
        self
    }

    /// The overview shows the alerts `engine` raised for the signed-in organization.
    pub fn with_alerts(mut self, engine: Arc<AlertEngine>) -> Dashboard {
        self.alerts = Some(engine);
        self
    }

    /// Handles a request whose path starts with `/dashboard`, from `peer`. At most
    /// `max_requests` are handled at once: the dashboard cannot take the connections the API
    /// needs (issue 14); over it, 503 at once and the connection closes.
    pub async fn handle(
        &self,
        mut request: Request<Incoming>,
        peer: SocketAddr,
    ) -> Response<Full<Bytes>> {
        let via_proxy = self.options.trusted_proxies.contains(peer.ip());
        let marked = web::Peer::new(request.headers(), peer.ip(), via_proxy);
        request.extensions_mut().insert(marked);
        let reader = Reader::of(&request);
        let Ok(_permit) = self.busy.try_acquire() else {
            crate::metrics::connection_refused("dashboard_busy");
            let mut response = self.error_page(
                &reader,
                None,
                StatusCode::SERVICE_UNAVAILABLE,
                msg!("dash-err-busy-title"),
                msg!("dash-err-busy"),
            );
            response.headers_mut().insert(
                hyper::header::RETRY_AFTER,
                hyper::header::HeaderValue::from_static("2"),
            );
            return web::closing(response);
        };
        self.route(request, peer, reader).await
    }

    async fn route(
        &self,
        request: Request<Incoming>,
        peer: SocketAddr,
        reader: Reader,
    ) -> Response<Full<Bytes>> {
        let method = request.method().clone();
        let route = route(request.uri().path());
        let get = method == Method::GET || method == Method::HEAD;
        let post = method == Method::POST;
        match route {
            Route::Root if get => web::redirect("/dashboard/"),
            Route::Style if get => web::response(StatusCode::OK, "text/css", style::STYLE),
            Route::Lang if get => lang::switch(&request, self.secure(&request)),
            Route::Login if get => self.login_form(&request, peer, &reader).await,
            Route::Login if post => self.sign_in(request, peer, &reader).await,
            Route::Logout if post => self.sign_out(request, &reader).await,
            Route::NotFound => self.error_page(
                &reader,
                None,
                StatusCode::NOT_FOUND,
                msg!("dash-err-not-found-title"),
                msg!("dash-err-no-such-page"),
            ),
            Route::Overview
            | Route::Invoices
            | Route::InvoicesCsv
            | Route::Invoice(..)
            | Route::Receipt(..)
            | Route::Keys
            | Route::KeyDisable
                if get =>
            {
                match self.signed_in(&request, reader, route).await {
                    Ok(ctx) => self.get_page(route, &request, &ctx).await,
                    Err(response) => response,
                }
            }
            Route::ResolveInDoubt | Route::Keys | Route::KeysToggle | Route::KeyDisable if post => {
                let ctx = match self.signed_in(&request, reader, route).await {
                    Ok(ctx) => ctx,
                    Err(response) => return response,
                };
                let form = match self.checked_form(request, &ctx.session, &ctx.reader).await {
                    Ok(form) => form,
                    Err(response) => return response,
                };
                match route {
                    Route::ResolveInDoubt => self.resolve_in_doubt(&ctx, &form).await,
                    Route::Keys => self.issue_key(&ctx, &form).await,
                    Route::KeyDisable => self.disable_key(&ctx, &form).await,
                    _ => self.toggle_key(&ctx, &form).await,
                }
            }
            _ => self.error_page(
                &reader,
                None,
                StatusCode::METHOD_NOT_ALLOWED,
                msg!("dash-err-method-title"),
                msg!("dash-err-method"),
            ),
        }
    }

    async fn get_page(
        &self,
        route: Route,
        request: &Request<Incoming>,
        ctx: &Ctx,
    ) -> Response<Body> {
        match route {
            Route::Overview => self.overview(ctx, request).await,
            Route::Keys => self.keys_page(ctx, request).await,
            Route::KeyDisable => self.confirm_disable(ctx, request).await,
            Route::Invoices => self.invoices_page(ctx, request).await,
            Route::InvoicesCsv => self.invoices_csv(ctx, request).await,
            Route::Invoice(env, seq) => self.invoice_page(ctx, env, seq).await,
            Route::Receipt(env, seq) => self.receipt_page(ctx, request, env, seq).await,
            _ => self.error_in(
                ctx,
                StatusCode::NOT_FOUND,
                msg!("dash-err-not-found-title"),
                msg!("dash-err-no-such-page"),
            ),
        }
    }

    /// The signed-in context of a request, or the answer to give instead: to the sign-in page
    /// (saying the session ended when the cookie named one that is gone).
    async fn signed_in(
        &self,
        request: &Request<Incoming>,
        reader: Reader,
        route: Route,
    ) -> Result<Ctx, Response<Body>> {
        let Some(cookie) = web::cookie(request, SESSION_COOKIE).filter(|c| !c.is_empty()) else {
            return Err(web::redirect("/dashboard/login"));
        };
        let ended = || {
            let mut response = web::redirect("/dashboard/login?expired=1");
            let clear = web::cookie_text(SESSION_COOKIE, "", Some(0), self.secure(request));
            web::set_cookie(&mut response, &clear);
            response
        };
        let session = match self.session_lookup(&cookie).await {
            Ok(Lookup::Live(session)) => session,
            Ok(Lookup::Gone) => return Err(ended()),
            Err(error) => return Err(self.failure(&reader, None, &error)),
        };
        let (token_id, org_id) = (session.token_id.clone(), session.org.clone());
        let checked = self
            .blocking(move |admin| {
                if !admin.dashboard_token_valid(&token_id, &org_id)? {
                    return Ok(None);
                }
                admin.org_show(&org_id).map(Some)
            })
            .await;
        match checked {
            Ok(Some(shown)) => Ok(Ctx {
                session,
                org: shown.organization,
                reader,
                route,
            }),
            Ok(None) | Err(AdminError::Invalid(_)) => {
                info!(org = %session.org, token = %session.token_id, "dashboard session ended: token revoked or organization gone");
                if let Err(error) = self.session_close(&cookie).await {
                    warn!(%error, "dashboard session of a revoked token not deleted (refused on every request all the same)");
                }
                Err(ended())
            }
            Err(error) => Err(self.failure(&reader, None, &error)),
        }
    }

    /// The form of a POST after the same-origin and CSRF checks, or the 403 to answer.
    async fn checked_form(
        &self,
        request: Request<Incoming>,
        session: &Session,
        reader: &Reader,
    ) -> Result<Vec<(String, String)>, Response<Body>> {
        let forbidden = |why: &str| {
            warn!(org = %session.org, why, "dashboard form refused (CSRF check)");
            self.error_page(
                reader,
                None,
                StatusCode::FORBIDDEN,
                msg!("dash-err-csrf-title"),
                msg!("dash-err-csrf"),
            )
        };
        if !web::same_origin(&request) {
            return Err(forbidden("foreign origin"));
        }
        let form = self.read_form(request, web::FORM_LIMIT, reader).await?;
        if !session.csrf_ok(http_request::field(&form, "csrf")) {
            return Err(forbidden("missing or wrong CSRF token"));
        }
        Ok(form)
    }

    /// Whether cookies set in answer to `request` get `Secure` (per the options and the
    /// request).
    fn secure(&self, request: &Request<Incoming>) -> bool {
        self.options.secure_cookies == SecureCookies::Always || web::behind_tls(request)
    }

    /// Runs admin work off the async threads (it may touch the disk).
    async fn blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Admin) -> Result<T, AdminError> + Send + 'static,
    ) -> Result<T, AdminError> {
        let admin = Arc::clone(&self.admin);
        tokio::task::spawn_blocking(move || work(&admin))
            .await
            .map_err(|e| AdminError::Socket(format!("dashboard task failed: {e}")))?
    }
}
