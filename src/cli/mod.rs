//! The command line (clap): `serve`, and the administration commands `org`, `key`, `log` and
//! `dashboard-token`,
//! which work whether the service runs (through its admin socket) or not (on the store).
//! This is the binary's edge: errors are `anyhow` here and nowhere below, said in the CLI's
//! language by [`describe_error`] (`errors.rs`); `--help` and clap's words are `help.rs`'s.

mod admin_commands;
mod args;
mod backup_commands;
mod config_check;
mod database;
mod demo;
mod device_commands;
mod embedded;
mod errors;
mod export;
mod help;
mod intent_commands;
mod invoice_view;
mod key_commands;
mod notice_commands;
mod org_commands;
mod restore_check;
mod serve;
mod state_dir;
mod store_commands;
mod stored_devices;

use std::ffi::OsString;

use clap::error::ErrorKind;
use clap::FromArgMatches;

use crate::config::{env_vars, Config, Overrides};
use crate::i18n::default_lang;
pub use args::{
    AnomaliesCommand, Cli, Command, ConfigCommand, CsvSeparator, DashboardTokenCommand,
    DeviceCommand, ExportFormat, IndexCommand, IntentCommand, KeyCommand, LogCommand, OrgCommand,
    ServeArgs, StoreCommand,
};
pub use notice_commands::NoticeCommand;

/// An error of [`main`] as a person reads it, in the CLI's language, and the exit status.
pub fn describe_error(error: &anyhow::Error) -> (String, u8) {
    errors::describe(error, default_lang())
}

/// Parses the command line and runs it. `--help` and `--version` print and exit here.
pub fn main() -> anyhow::Result<()> {
    let args: Vec<OsString> = std::env::args_os().collect();
    let lang = help::early_lang(&args);
    crate::i18n::set_default_lang(lang);
    let matches = match help::command(lang).try_get_matches_from(&args) {
        Ok(matches) => matches,
        Err(error)
            if matches!(
                error.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) =>
        {
            error.exit()
        }
        Err(error) => return Err(errors::Usage(error).into()),
    };
    let cli = Cli::from_arg_matches(&matches).map_err(errors::Usage)?;
    let overrides = Overrides {
        state_dir: cli.state_dir.clone(),
        listen: match &cli.command {
            Command::Serve(args) => args.listen,
            _ => None,
        },
        language: cli.lang,
    };
    let config = match Config::resolve(cli.config.as_deref(), env_vars(), &overrides) {
        Ok(config) => config,
        // A configuration `serve` would refuse is the first thing `config check` reports.
        Err(error) => match cli.command {
            Command::Config(ConfigCommand::Check { smtp, json }) => {
                return config_check::run(Err(error), smtp, json)
            }
            _ => return Err(error.into()),
        },
    };
    crate::i18n::set_default_lang(config.language);
    match cli.command {
        Command::Serve(args) => serve::run(config, args.capture),
        Command::Org(command) => org_commands::run(&config, command),
        Command::Key(command) => key_commands::key(&config, command),
        Command::Log(command) => admin_commands::log(&config, command),
        Command::Index(IndexCommand::Rebuild { force }) => {
            database::refuse_for_embedded_only(&config, "index rebuild")?;
            admin_commands::rebuild_index(&config, force)
        }
        Command::Store(command) => store_commands::run(&config, command),
        Command::DashboardToken(command) => key_commands::dashboard_token(&config, command),
        Command::Device(command) => device_commands::run(&config, command),
        Command::Intent(command) => intent_commands::run(&config, command),
        Command::Config(ConfigCommand::Check { smtp, json }) => {
            config_check::run(Ok(config), smtp, json)
        }
        Command::Notice(command) => notice_commands::run(&config, command),
        Command::Backup {
            check: Some(backup_commands::BackupCommand::Verify { dir }),
            ..
        } => backup_commands::verify(&dir),
        Command::Backup { dest, check: None } => {
            database::refuse_for_embedded_only(&config, "backup")?;
            backup_commands::backup(&config, dest)
        }
        Command::Restore {
            src,
            force,
            config_in_place,
        } => {
            database::refuse_for_embedded_only(&config, "restore")?;
            backup_commands::restore(&config, &src, force, config_in_place)
        }
    }
}
