//! The paths of the API, under its base (`https://edef.dgirdc.cd`...), and the case of the
//! confirm/cancel action word (integrations differ: `confirm` or `CONFIRM`).

/// The e-MCF's status (`GET`) and the invoice request (`POST`).
pub const INVOICE: &str = "/api/invoice";
/// The VAT rates.
pub const TAX_GROUPS: &str = "/api/info/taxGroups";
/// The taxpayer and its e-MCFs.
pub const INFO_STATUS: &str = "/api/info/status";

/// How the action word of confirm and cancel is written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ActionCase {
    /// `confirm`, `cancel` (the DGI's OpenAPI file, per the integration that checked it).
    #[default]
    Lower,
    /// `CONFIRM`, `CANCEL`.
    Upper,
}

/// What to do with a pending request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Finalize it.
    Confirm,
    /// Drop it.
    Cancel,
}

/// The path of `action` on the pending request `uid` (which is percent-encoded where needed).
pub fn action(uid: &str, action: Action, case: ActionCase) -> String {
    let word = match (action, case) {
        (Action::Confirm, ActionCase::Lower) => "confirm",
        (Action::Confirm, ActionCase::Upper) => "CONFIRM",
        (Action::Cancel, ActionCase::Lower) => "cancel",
        (Action::Cancel, ActionCase::Upper) => "CANCEL",
    };
    format!("{INVOICE}/{}/{word}", encode_segment(uid))
}

/// Percent-encodes everything but unreserved characters (RFC 3986) in one path segment.
fn encode_segment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn action_paths_in_both_cases() {
        assert_eq!(
            action("a1-b2", Action::Confirm, ActionCase::Lower),
            "/api/invoice/a1-b2/confirm"
        );
        assert_eq!(
            action("a1-b2", Action::Cancel, ActionCase::Upper),
            "/api/invoice/a1-b2/CANCEL"
        );
    }

    #[test]
    fn a_uid_cannot_escape_its_segment() {
        assert_eq!(
            action("../x?y", Action::Confirm, ActionCase::Lower),
            "/api/invoice/..%2Fx%3Fy/confirm"
        );
    }
}
