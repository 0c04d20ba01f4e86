//! `device add`, `device update`, `device remove`, `device list`, `store rotate-key`: web API
//! e-MCFs kept as data in the PostgreSQL store (issue 29; `src/admin/devices.rs` does the
//! work). The embedded store refuses them: its devices are the configuration's `[[devices]]`
//! blocks. A token is read from its file, sealed with the first key of
//! `[store] secret_key_file`, and never printed.

use std::path::Path;
use std::sync::Arc;

use anyhow::bail;

use super::admin_commands::{print_json, print_table, quota_settings};
use super::database;
use super::errors::Say;
use crate::admin::devices::DeviceToken;
use crate::admin::Admin;
use crate::certify::KeySource;
use crate::config::{Config, DeviceKind};
use crate::i18n::{default_lang, format};
use crate::msg;
use crate::store::sealed::Keyring;
use crate::store::StoredDevice;

/// The administration of the PostgreSQL store, or the refusal of the embedded store's.
fn admin(config: &Config) -> anyhow::Result<Admin> {
    let Some(settings) = database::settings(config)? else {
        bail!(msg!("cli-device-embedded"));
    };
    let store = database::open_blocking(&settings)?;
    Ok(Admin::new(Arc::new(store), quota_settings(config)))
}

/// The keys of `[store] secret_key_file`, required to seal or open a token.
fn keyring(config: &Config) -> anyhow::Result<Keyring> {
    match config.store_keyring()? {
        Some(keyring) => Ok(keyring),
        None => bail!(msg!("cli-device-no-key")),
    }
}

/// The token in `file`.
fn token(file: &Path) -> anyhow::Result<DeviceToken> {
    let text = std::fs::read_to_string(file).say(|| {
        msg!(
            "cli-device-token-unreadable",
            file = file.display().to_string()
        )
    })?;
    Ok(DeviceToken::from_text(&text)?)
}

/// `device add NAME --kind web_api --url URL --token-file FILE`.
pub(super) fn add(
    config: &Config,
    name: &str,
    kind: &str,
    url: &str,
    token_file: &Path,
) -> anyhow::Result<()> {
    match kind.trim() {
        "web_api" | "edef" => {}
        "box" | "serial" => bail!(msg!("cli-device-kind-box")),
        other => bail!(msg!("cli-device-kind-unknown", kind = other)),
    }
    let admin = admin(config)?;
    let keyring = keyring(config)?;
    let token = token(token_file)?;
    let in_file: Vec<&str> = config.devices.iter().map(|d| d.name.as_str()).collect();
    let added = admin.device_add(name, url, &token, &keyring, &in_file)?;
    let said = msg!(
        "cli-device-added",
        device = added.name.as_str(),
        key = added.key_id.as_str()
    );
    println!("{}", said.render(default_lang()));
    Ok(())
}

/// `device update NAME [--url URL] [--token-file FILE]`.
pub(super) fn update(
    config: &Config,
    name: &str,
    url: Option<&str>,
    token_file: Option<&Path>,
) -> anyhow::Result<()> {
    if url.is_none() && token_file.is_none() {
        bail!(msg!("cli-device-update-nothing"));
    }
    let admin = admin(config)?;
    let sealing = match token_file {
        Some(file) => Some((token(file)?, keyring(config)?)),
        None => None,
    };
    let sealing = sealing.as_ref().map(|(token, keyring)| (token, keyring));
    let updated = admin.device_update(name, url, sealing)?;
    let said = msg!(
        "cli-device-updated",
        device = updated.name.as_str(),
        key = updated.key_id.as_str()
    );
    println!("{}", said.render(default_lang()));
    Ok(())
}

/// `device remove NAME`.
pub(super) fn remove(config: &Config, name: &str) -> anyhow::Result<()> {
    admin(config)?.device_remove(name)?;
    let said = msg!("cli-device-removed", device = name);
    println!("{}", said.render(default_lang()));
    Ok(())
}

/// The names of the devices kept in the store; none on the embedded store.
pub(super) fn kept_names(config: &Config) -> anyhow::Result<Vec<String>> {
    if database::settings(config)?.is_none() {
        return Ok(Vec::new());
    }
    let devices = admin(config)?.device_list()?;
    Ok(devices.into_iter().map(|device| device.name).collect())
}

/// `device list [--json]`: never a token.
pub(super) fn list(config: &Config, json: bool) -> anyhow::Result<()> {
    let devices = admin(config)?.device_list()?;
    if json {
        return print_json(&serde_json::to_value(&devices)?);
    }
    print_devices(config, &devices);
    Ok(())
}

fn print_devices(config: &Config, devices: &[StoredDevice]) {
    let lang = default_lang();
    if devices.is_empty() {
        println!("{}", msg!("cli-device-list-none").render(lang));
        return;
    }
    let rows = devices
        .iter()
        .map(|device| {
            [
                device.name.clone(),
                DeviceKind::WebApi.as_str().to_owned(),
                device.key_id.clone(),
                format::date_time(device.updated_at, config.offset(), lang),
                device.url.clone(),
            ]
        })
        .collect();
    let header = msg!("cli-device-list-header").render(lang);
    print_table(&[16, 8, 18, 20], &header, rows);
}

/// The keys of `[store] secret_key_file` for `serve`'s devices kept in the store: read now (a
/// file others can read, or that holds no key, stops the start), then again at each change
/// of the devices, so that a key added to the file is used without a restart.
pub(super) fn key_source(config: &Config) -> anyhow::Result<KeySource> {
    config.store_keyring()?;
    let config = config.clone();
    Ok(Arc::new(move || {
        config.store_keyring().map_err(|error| error.to_string())
    }))
}

/// `store rotate-key`: every kept token sealed again with the first key, in one transaction.
pub(super) fn rotate_key(config: &Config) -> anyhow::Result<()> {
    let admin = admin(config)?;
    let keyring = keyring(config)?;
    let count = admin.rotate_device_key(&keyring)?;
    let said = msg!(
        "cli-store-key-rotated",
        count = count,
        key = keyring.sealing().id()
    );
    println!("{}", said.render(default_lang()));
    Ok(())
}
