//! `store migrate`: the schema of the PostgreSQL database of `[store]` created or upgraded, by
//! the role the configuration names (the database's owner: docs/postgresql.md, "The roles").
//! `store import --from-state-dir DIR` and `store export --to-state-dir DIR`: a register moved
//! between the embedded store and the PostgreSQL database of `[store]`, then checked
//! (`store::transfer`; docs/postgresql.md, "Moving a register"). Each prints what it wrote
//! and what it compared; a difference is said line by line, exit status 1.

use std::path::Path;

use super::database;
use super::errors::Say;
use super::StoreCommand;
use crate::config::Config;
use crate::i18n::{default_lang, Lang};
use crate::model::Environment;
use crate::msg;
use crate::store::postgres::{PgSettings, PgStore};
use crate::store::transfer::{self, Checked, QuotaRules, TransferError};

/// Runs a `store` command.
pub(super) fn run(config: &Config, command: StoreCommand) -> anyhow::Result<()> {
    let lang = default_lang();
    match command {
        StoreCommand::Migrate => migrate(config, lang),
        StoreCommand::Import { from_state_dir } => moved(config, "import", &from_state_dir, |pg| {
            import(config, pg, &from_state_dir, lang)
        }),
        StoreCommand::Export { to_state_dir } => moved(config, "export", &to_state_dir, |pg| {
            export(pg, &to_state_dir, lang)
        }),
        StoreCommand::RotateKey => super::stored_devices::rotate_key(config),
    }
}

/// `what` (import or export) of the register between `dir` and the database of `[store]`.
fn moved(
    config: &Config,
    what: &str,
    dir: &Path,
    work: impl FnOnce(&PgStore) -> Result<(), TransferError>,
) -> anyhow::Result<()> {
    let Some(settings) = database::settings(config)? else {
        anyhow::bail!(msg!("cli-store-needs-database", command = what));
    };
    let pg = open(&settings)?;
    match work(&pg) {
        Err(TransferError::NotImported(error)) => {
            let dir = dir.display().to_string();
            Err(error).say(|| msg!("cli-store-not-imported", dir = dir))
        }
        done => done.map_err(|error| said(error, dir)),
    }
}

/// Opens the database, which brings its schema to this binary's migrations, and says so.
fn migrate(config: &Config, lang: Lang) -> anyhow::Result<()> {
    let Some(settings) = database::settings(config)? else {
        anyhow::bail!(msg!("cli-store-needs-database", command = "migrate"));
    };
    let (_, migrated) = PgStore::open_blocking(&settings)
        .say(|| msg!("cli-database-open", url = settings.url.clone()))?;
    let said = if migrated.applied.is_empty() {
        msg!("cli-store-migrated-already", version = migrated.version)
    } else {
        msg!(
            "cli-store-migrated",
            version = migrated.version,
            applied = migrated.applied.len() as i64
        )
    };
    println!("{}", said.render(lang));
    Ok(())
}

fn open(settings: &PgSettings) -> anyhow::Result<PgStore> {
    let (store, _) = PgStore::open_blocking(settings)
        .say(|| msg!("cli-database-open", url = settings.url.clone()))?;
    Ok(store)
}

/// A failed move in the catalogue's words.
fn said(error: TransferError, dir: &Path) -> anyhow::Error {
    let dir = dir.display().to_string();
    match error {
        TransferError::NoRegister(_) => msg!("cli-store-no-register", dir = dir).into(),
        TransferError::DatabaseNotEmpty => msg!("cli-store-database-not-empty").into(),
        TransferError::DirectoryNotEmpty(_) => msg!("cli-store-dir-not-empty", dir = dir).into(),
        TransferError::Differs { differences } => msg!(
            "cli-store-differs",
            differences = differences
                .iter()
                .map(|line| format!("  {}", line.render(default_lang())))
                .collect::<Vec<_>>()
                .join("\n")
        )
        .into(),
        // Said around its cause by `run`.
        TransferError::NotImported(error) => anyhow::Error::new(error),
        TransferError::Store(error) => anyhow::Error::new(error),
    }
}

fn env_name(env: Environment) -> &'static str {
    env.as_str()
}

fn checked(checked: &Checked, lang: Lang) {
    println!(
        "{}",
        msg!(
            "cli-store-checked",
            entries = checked.entries,
            chains = checked.chains,
            years = checked.quota_years,
            open = checked.open_intents
        )
        .render(lang)
    );
}

fn import(config: &Config, pg: &PgStore, dir: &Path, lang: Lang) -> Result<(), TransferError> {
    let (plans, zone) = (config.clone(), config.clone());
    let quotas = QuotaRules {
        quota_of: Box::new(move |org| plans.quota_for(org.plan, org.quota_override)),
        year_of: Box::new(move |at| zone.quota_year(at)),
    };
    let done = transfer::import(dir, pg, &quotas)?;
    let c = &done.counts;
    println!(
        "{}",
        msg!(
            "cli-store-imported",
            dir = dir.display().to_string(),
            records = c.records,
            organizations = c.organizations,
            keys = c.keys,
            tokens = c.tokens,
            intents = c.intents,
            abandoned = c.abandoned,
            entries = c.entries,
            anomalies = c.anomalies
        )
        .render(lang)
    );
    for (org, env, entries) in &c.per_register {
        println!(
            "{}",
            msg!(
                "cli-store-register-count",
                org = org.clone(),
                environment = env_name(*env),
                entries = *entries
            )
            .render(lang)
        );
    }
    checked(&done.checked, lang);
    Ok(())
}

fn export(pg: &PgStore, dir: &Path, lang: Lang) -> Result<(), TransferError> {
    let done = transfer::export(pg, dir)?;
    println!(
        "{}",
        msg!(
            "cli-store-exported",
            dir = dir.display().to_string(),
            records = done.records,
            entries = done.entries
        )
        .render(lang)
    );
    if done.renumbered > 0 {
        println!(
            "{}",
            msg!("cli-store-renumbered", count = done.renumbered).render(lang)
        );
    }
    checked(&done.checked, lang);
    Ok(())
}
