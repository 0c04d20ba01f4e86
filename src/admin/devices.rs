//! Web API e-MCFs kept as data in the store (issue 29): `device add`, `update`, `remove`,
//! `list`, and `store rotate-key`. The token is sealed here, with the first key of
//! `[store] secret_key_file` and the device's name as associated data, before it reaches the
//! store: the database never holds it in clear, and nothing here shows it (`Debug` of
//! [`DeviceToken`] is redacted). Every running replica picks a change up within seconds
//! (`src/certify/stored_devices.rs`).

use crate::i18n::Message;
use crate::msg;
use crate::store::sealed::Keyring;
use crate::store::{StoreError, StoredDevice};

use super::{Admin, AdminError};

/// The name the bundled simulator takes; names starting with `sandbox-` are the sandboxes'.
const RESERVED: &str = "embedded";

/// A device's token, read from the file an administrator gave. Never shown.
pub struct DeviceToken(String);

impl std::fmt::Debug for DeviceToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DeviceToken(redacted)")
    }
}

impl DeviceToken {
    /// The token in a token file's text (as the `token_file` of a `[[devices]]` block: spaces
    /// and a `Bearer ` prefix left out): one line an HTTP header can carry.
    pub fn from_text(text: &str) -> Result<DeviceToken, AdminError> {
        let text = text.trim();
        let text = text.strip_prefix("Bearer ").unwrap_or(text).trim();
        if text.is_empty() {
            return Err(AdminError::Invalid(msg!("admin-device-token-empty")));
        }
        if !text.bytes().all(|b| b.is_ascii_graphic() || b == b' ') {
            return Err(AdminError::Invalid(msg!("admin-device-token-malformed")));
        }
        Ok(DeviceToken(text.to_owned()))
    }

    fn sealed(&self, keyring: &Keyring, device: &str) -> Result<(String, String), AdminError> {
        let sealed =
            keyring
                .seal(device, self.0.as_bytes())
                .map_err(|error| StoreError::Sealed {
                    device: device.to_owned(),
                    error,
                })?;
        Ok((sealed, keyring.sealing().id().to_owned()))
    }
}

impl Admin {
    /// The devices kept in the store, by name (their tokens never).
    pub fn device_list(&self) -> Result<Vec<StoredDevice>, AdminError> {
        Ok(self.store.stored_devices()?)
    }

    /// Keeps a new web API device `name` at `url` with `token`, sealed with `keyring`.
    /// `in_file`: the `[[devices]]` names of this replica's configuration, which a kept
    /// device must not take.
    pub fn device_add(
        &self,
        name: &str,
        url: &str,
        token: &DeviceToken,
        keyring: &Keyring,
        in_file: &[&str],
    ) -> Result<StoredDevice, AdminError> {
        check_name(name, in_file)?;
        let url = check_url(url)?;
        let (sealed, key_id) = token.sealed(keyring, name)?;
        Ok(self.store.add_stored_device(name, &url, &sealed, &key_id)?)
    }

    /// Changes a kept device's URL and/or token (the token sealed with `keyring`).
    pub fn device_update(
        &self,
        name: &str,
        url: Option<&str>,
        token: Option<(&DeviceToken, &Keyring)>,
    ) -> Result<StoredDevice, AdminError> {
        let url = url.map(check_url).transpose()?;
        let sealed = token
            .map(|(token, keyring)| token.sealed(keyring, name))
            .transpose()?;
        let sealed = sealed.as_ref().map(|(s, k)| (s.as_str(), k.as_str()));
        Ok(self
            .store
            .update_stored_device(name, url.as_deref(), sealed)?)
    }

    /// Removes a kept device; refused while an organization certifies on it or an intent on
    /// it is open (the error names them).
    pub fn device_remove(&self, name: &str) -> Result<(), AdminError> {
        Ok(self.store.remove_stored_device(name)?)
    }

    /// Seals every kept token again with the first key of `keyring`, in one transaction; how
    /// many changed.
    pub fn rotate_device_key(&self, keyring: &Keyring) -> Result<usize, AdminError> {
        Ok(self.store.reseal_stored_devices(keyring)?)
    }
}

/// A kept device's name: what organizations name, short, plain, and not one this replica's
/// file or the bundled simulators use.
fn check_name(name: &str, in_file: &[&str]) -> Result<(), AdminError> {
    let refused = |message: Message| Err(AdminError::Invalid(message));
    let plain = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
        && !name.starts_with(['-', '_']);
    if !plain {
        return refused(msg!("admin-device-bad-name", device = name));
    }
    if name == RESERVED || name.starts_with("sandbox-") {
        return refused(msg!("admin-device-reserved-name", device = name));
    }
    if in_file.contains(&name) {
        return refused(msg!("admin-device-in-file", device = name));
    }
    Ok(())
}

/// The API base: `http(s)://...`, one word, without a trailing `/`.
fn check_url(url: &str) -> Result<String, AdminError> {
    let url = url.trim().trim_end_matches('/');
    let scheme = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"));
    match scheme {
        Some(rest) if !rest.is_empty() && url.bytes().all(|b| b.is_ascii_graphic()) => {
            Ok(url.to_owned())
        }
        _ => Err(AdminError::Invalid(msg!("admin-device-bad-url", url = url))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_read_as_a_token_file_is_and_never_shown() {
        let token = DeviceToken::from_text("  Bearer eyJ.abc.def \n").expect("token");
        assert_eq!(token.0, "eyJ.abc.def");
        assert_eq!(format!("{token:?}"), "DeviceToken(redacted)");
        assert!(DeviceToken::from_text(" \n").is_err());
        assert!(DeviceToken::from_text("a\nb").is_err());
    }

    #[test]
    fn names_and_urls_are_checked() {
        assert!(check_name("shop-2", &["dgi"]).is_ok());
        for bad in ["", "Shop", "a b", "-x", "embedded", "sandbox-acme", "dgi"] {
            assert!(check_name(bad, &["dgi"]).is_err(), "{bad}");
        }
        assert_eq!(
            check_url(" https://api.example.cd/e-mcf/ ").expect("url"),
            "https://api.example.cd/e-mcf"
        );
        for bad in ["ftp://x", "https://", "http://a b", "api.example.cd"] {
            assert!(check_url(bad).is_err(), "{bad}");
        }
    }
}
