//! Error pages in the reader's language: what went wrong and the way back (the overview when
//! signed in, else the sign-in page). Every text comes from the catalogue: an error of another
//! layer is mapped to a message of its own here (`failure`), or shown through that layer's
//! own catalogue text (`describe(lang)`); never its `Display`, which is English, for the log.

use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use tracing::{info, warn};

use super::html::{self, notice};
use super::lang::Reader;
use super::route::Route;
use super::web::{self, Body};
use super::{Ctx, Dashboard};
use crate::admin::AdminError;
use crate::i18n::{Lang, Localized, Message};
use crate::msg;

/// What an error page explains.
pub(super) enum Text {
    /// A catalogue message, in the reader's language.
    Msg(Message),
    /// A text another layer already rendered from the catalogue in the reader's language
    /// (its `describe(lang)`), never a `Display`.
    Described(String),
}

impl Text {
    /// Another layer's catalogue text, rendered in the reader's language (`describe(lang)`).
    pub(super) fn described(text: String) -> Text {
        Text::Described(text)
    }

    fn render(&self, lang: Lang) -> String {
        match self {
            Text::Msg(message) => message.render(lang),
            Text::Described(text) => text.clone(),
        }
    }
}

impl From<Message> for Text {
    fn from(message: Message) -> Text {
        Text::Msg(message)
    }
}

impl Dashboard {
    /// An error page for `reader`, with the navigation of `ctx` when signed in.
    pub(super) fn error_page(
        &self,
        reader: &Reader,
        ctx: Option<&Ctx>,
        status: StatusCode,
        title: Message,
        text: impl Into<Text>,
    ) -> Response<Body> {
        let lang = reader.lang;
        let shell = ctx.map(|ctx| ctx.shell(html::Tab::None));
        let back = if ctx.is_some() {
            format!(
                "<p><a href=\"/dashboard/\" id=\"back\">{}</a></p>",
                html::t(lang, msg!("dash-back-overview"))
            )
        } else {
            format!(
                "<p><a href=\"/dashboard/login\" id=\"back\">{}</a></p>",
                html::t(lang, msg!("dash-signin-submit"))
            )
        };
        let body = format!("{}{back}", notice("error", &text.into().render(lang)));
        web::html(
            status,
            html::page(reader, &title.render(lang), shell.as_ref(), &body),
        )
    }

    /// An error page of a signed-in request.
    pub(super) fn error_in(
        &self,
        ctx: &Ctx,
        status: StatusCode,
        title: Message,
        text: impl Into<Text>,
    ) -> Response<Body> {
        self.error_page(&ctx.reader, Some(ctx), status, title, text)
    }

    /// "Not possible" (400) with `text`.
    pub(super) fn refused(&self, ctx: &Ctx, text: impl Into<Text>) -> Response<Body> {
        self.error_in(
            ctx,
            StatusCode::BAD_REQUEST,
            msg!("dash-err-not-possible-title"),
            text,
        )
    }

    /// The answer to a failed admin request: 404 for "not found" (saying what was not found
    /// in the page asked for), 400 for a refusal (the admin layer's own message, in the
    /// reader's language: which field and why), 503 when the register cannot be read.
    pub(super) fn failure(
        &self,
        reader: &Reader,
        ctx: Option<&Ctx>,
        error: &AdminError,
    ) -> Response<Body> {
        match error {
            AdminError::NotFound(_) => {
                info!(error = %error, "dashboard: not found");
                self.error_page(
                    reader,
                    ctx,
                    StatusCode::NOT_FOUND,
                    msg!("dash-err-not-found-title"),
                    not_found(ctx.map(|ctx| ctx.route)),
                )
            }
            AdminError::Invalid(_) | AdminError::BadName { .. } => {
                warn!(error = %error, "dashboard: admin request refused");
                self.error_page(
                    reader,
                    ctx,
                    StatusCode::BAD_REQUEST,
                    msg!("dash-err-not-possible-title"),
                    error.message(),
                )
            }
            other => {
                warn!(error = %other, "dashboard: admin request failed");
                let mut page = self.error_page(
                    reader,
                    ctx,
                    StatusCode::SERVICE_UNAVAILABLE,
                    msg!("dash-err-unavailable-title"),
                    msg!("dash-err-unavailable"),
                );
                // Every 503 says when to try again (a database away comes back in seconds).
                page.headers_mut().insert(
                    hyper::header::RETRY_AFTER,
                    hyper::header::HeaderValue::from_static("5"),
                );
                page
            }
        }
    }

    /// [`failure`](Self::failure) of a signed-in request: a "not found" names what the page
    /// asked for.
    pub(super) fn failure_in(&self, ctx: &Ctx, error: &AdminError) -> Response<Body> {
        self.failure(&ctx.reader, Some(ctx), error)
    }

    /// The form of a request, read under `limit`, or the error page to answer.
    pub(super) async fn read_form(
        &self,
        request: Request<Incoming>,
        limit: usize,
        reader: &Reader,
    ) -> Result<Vec<(String, String)>, Response<Body>> {
        let limits = self.options.body.with_limit(limit);
        let page = |status, title, text| self.error_page(reader, None, status, title, text);
        web::read_form(request, &limits)
            .await
            .map_err(|error| match error {
                web::FormError::ContentType => page(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    msg!("dash-err-form-type-title"),
                    msg!("dash-err-form-type"),
                ),
                web::FormError::TooLarge => page(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    msg!("dash-err-form-large-title"),
                    msg!("dash-err-form-large"),
                ),
                web::FormError::TooSlow => {
                    crate::metrics::connection_refused("body_too_slow");
                    web::closing(page(
                        StatusCode::REQUEST_TIMEOUT,
                        msg!("dash-err-form-slow-title"),
                        msg!("dash-err-form-slow"),
                    ))
                }
                web::FormError::Body => page(
                    StatusCode::BAD_REQUEST,
                    msg!("dash-err-form-cut-title"),
                    msg!("dash-err-form-cut"),
                ),
            })
    }
}

/// What was not found, in the words of the page asked for: the invoice of an entry page, else
/// the generic text.
fn not_found(route: Option<Route>) -> Message {
    match route {
        Some(Route::Invoice(env, sequence) | Route::Receipt(env, sequence)) => msg!(
            "dash-err-no-entry",
            sequence = sequence.to_string(),
            register = env.as_str()
        ),
        _ => msg!("dash-err-not-found"),
    }
}
