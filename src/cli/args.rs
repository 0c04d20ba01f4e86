//! The command line's grammar (clap): the commands, their arguments and the parsers of their
//! values. `help.rs` gives it its words in the reader's language; `mod.rs` runs it.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use super::{backup_commands, help, NoticeCommand};
use crate::i18n::{Lang, Message};
use crate::msg;

fn parse_lang(text: &str) -> Result<Lang, Message> {
    Lang::parse(text).ok_or_else(|| msg!("config-languages"))
}

/// emcf-gateway: certify invoices with the DRC e-MCF fiscal device.
#[derive(Debug, Parser)]
#[command(name = "emcf-gateway", version, about)]
pub struct Cli {
    /// Configuration file (default: $EMCF_CONFIG, else /etc/emcf-gateway/config.toml if it
    /// exists, else built-in defaults with the embedded simulator).
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// State directory: journal, index, admin socket (overrides the file and $EMCF_STATE_DIR).
    #[arg(long, global = true, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// Language of the messages: fr (default) or en (overrides the file's `language` and
    /// $EMCF_LANG).
    #[arg(long, global = true, value_name = "LANG", value_parser = parse_lang)]
    pub lang: Option<Lang>,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the gateway: HTTP API, device links, admin socket.
    Serve(ServeArgs),
    /// Organizations.
    #[command(subcommand)]
    Org(OrgCommand),
    /// API keys.
    #[command(subcommand)]
    Key(KeyCommand),
    /// The LogInvoices register.
    #[command(subcommand)]
    Log(LogCommand),
    /// The sled index (a projection of the journal).
    #[command(subcommand)]
    Index(IndexCommand),
    /// Move a register between the embedded store and PostgreSQL.
    #[command(subcommand)]
    Store(StoreCommand),
    /// Dashboard sign-in tokens of organization admins.
    #[command(subcommand)]
    DashboardToken(DashboardTokenCommand),
    /// Fiscal boxes: probe one (technicians), and the fiscal anomalies of their counters.
    #[command(subcommand)]
    Device(DeviceCommand),
    /// Invoices in doubt: listed, and settled by an administrator when the channel cannot
    /// tell (a web API confirm whose answer was lost). Through the running service.
    #[command(subcommand)]
    Intent(IntentCommand),
    /// The configuration as `serve` reads it, and what it names.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Change notices to every organization: e-mailed, shown on the dashboards, and in the
    /// headers of an API version they retire.
    #[command(subcommand)]
    Notice(NoticeCommand),
    /// Write a verified copy of the register, the state and the configuration (while the
    /// service runs or not), keep the last `[backup] keep`, then run `[backup] command`.
    #[command(args_conflicts_with_subcommands = true)]
    Backup {
        /// Where the copy goes (default: `[backup] dir`).
        #[arg(value_name = "DEST")]
        dest: Option<PathBuf>,
        /// `backup verify DIR`: check a copy, read-only.
        #[command(subcommand)]
        check: Option<backup_commands::BackupCommand>,
    },
    /// Put a copy back into the state directory, the service stopped. Refused over a
    /// register the copy does not hold entirely unless --force.
    Restore {
        /// The copy's folder (emcf-backup-<time>).
        #[arg(value_name = "SRC")]
        src: PathBuf,
        /// Restore over a register with entries the copy lacks (they are kept aside).
        #[arg(long)]
        force: bool,
        /// Put the configuration files back at the paths the current configuration names
        /// (its own file and the files it names); the others stay beside the state.
        #[arg(long)]
        config_in_place: bool,
    },
}

/// `config` commands.
#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Check the configuration as `serve` would read it, then the state directory, each
    /// device (read-only), the token and password files and, with --smtp, the relay: one line
    /// per check, each problem with its fix. Exit 1 on any error.
    Check {
        /// Also connect to the [smtp] relay and log in (no message is sent).
        #[arg(long)]
        smtp: bool,
        /// Print the checks as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// `intent` commands.
#[derive(Debug, Subcommand)]
pub enum IntentCommand {
    /// The open intents: those being settled with their channel, and those waiting for an
    /// administrator, with why.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Settle an intent that waits for an administrator, from what the DGI's portal shows:
    /// `--certified` with its security elements, or `--not-certified`. Journaled with who.
    Resolve {
        /// The intent's id (as listed).
        #[arg(value_parser = parse_intent_id)]
        intent: u64,
        /// The DGI's portal shows it certified: give its elements below.
        #[arg(long, conflicts_with = "not_certified", requires_all = ["code_def", "qr_code", "counters", "nim", "date_time"])]
        certified: bool,
        /// The DGI's portal does not show it: the rn may be certified again.
        #[arg(long)]
        not_certified: bool,
        /// codeDEFDGI, as the portal shows it.
        #[arg(long)]
        code_def: Option<String>,
        /// The QR code's text.
        #[arg(long)]
        qr_code: Option<String>,
        /// Counters, e.g. "5/8 FV".
        #[arg(long)]
        counters: Option<String>,
        /// The e-MCF's NIM.
        #[arg(long)]
        nim: Option<String>,
        /// Date-time of the certification, YYYY-MM-DDTHH:MM:SS (e.g. 2026-11-23T10:00:00).
        #[arg(long)]
        date_time: Option<String>,
        /// Who settles it (journaled).
        #[arg(long)]
        by: String,
        /// Where it was read, why (journaled).
        #[arg(long, default_value = "")]
        note: String,
    },
}

/// `device` commands.
#[derive(Debug, Subcommand)]
pub enum DeviceCommand {
    /// Read everything a box says of itself (identity, NIF, rates, counters, last invoice,
    /// link with the DGI, taxpayer fields) and what differs from PROTOCOL.md, in plain words.
    /// Read-only. Through the running service, or on the port when the service is stopped.
    Probe {
        /// The configured device (default: the only one).
        #[arg(long)]
        device: Option<String>,
        /// Also write every byte both ways to this file (wire capture; service stopped only).
        #[arg(long, value_name = "FILE")]
        capture: Option<PathBuf>,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Fiscal anomalies: a box whose counter went back or whose NIF changed.
    #[command(subcommand)]
    Anomalies(AnomaliesCommand),
    /// Keep a web API e-MCF in the PostgreSQL store, its token sealed: every replica uses it
    /// within seconds, no restart.
    Add {
        /// The device's name (organizations' --device).
        name: String,
        /// Its kind: web_api (a box stays in the [[devices]] of its replica's file).
        #[arg(long, default_value = "web_api", hide_default_value = true)]
        kind: String,
        /// The API base, http(s)://host[:port][/prefix].
        #[arg(long)]
        url: String,
        /// The file holding the e-MCF's token (read once, then kept sealed).
        #[arg(long, value_name = "FILE")]
        token_file: PathBuf,
    },
    /// Change a kept device's URL or token.
    Update {
        /// The device's name.
        name: String,
        /// The new API base.
        #[arg(long)]
        url: Option<String>,
        /// The file holding the new token.
        #[arg(long, value_name = "FILE")]
        token_file: Option<PathBuf>,
    },
    /// Remove a kept device (refused while an organization or an open intent uses it).
    Remove {
        /// The device's name.
        name: String,
    },
    /// List the devices kept in the store (never their tokens).
    List {
        /// Print JSON (for scripts).
        #[arg(long)]
        json: bool,
    },
}

/// `device anomalies` commands.
#[derive(Debug, Subcommand)]
pub enum AnomaliesCommand {
    /// List them (acknowledged or not).
    List {
        /// Print JSON (for scripts).
        #[arg(long)]
        json: bool,
    },
    /// Acknowledge one: journaled with who and why; it leaves the dashboard and /metrics.
    Ack {
        /// Its id (as listed).
        #[arg(value_parser = parse_anomaly_id)]
        id: u64,
        /// Who acknowledges it.
        #[arg(long)]
        by: String,
        /// Why it is understood (e.g. "memory replaced by the DGI, report 2026-114").
        #[arg(long)]
        note: String,
        /// A register behind its box: the missing certifications' numbers, as listed
        /// (e.g. "7-9, 12"); required for that kind, refused for the others.
        #[arg(long)]
        numbers: Option<String>,
        /// A missing certification's rn, as the DGI's portal shows it: NUMBER=RN (repeatable).
        /// That rn is never certified again for the device's organizations; a missing number
        /// whose rn is not known would be certified again if its invoice were retried.
        #[arg(long, value_name = "NUMBER_RN")]
        rn: Vec<String>,
    },
}

/// `dashboard-token` commands.
#[derive(Debug, Subcommand)]
pub enum DashboardTokenCommand {
    /// Issue a token for an organization's admin; it is printed once and never stored in clear.
    Issue {
        /// Organization id.
        #[arg(long)]
        org: String,
        /// Free text: whose token it is.
        #[arg(long, default_value = "")]
        label: String,
    },
    /// List the dashboard tokens of an organization.
    List {
        /// Organization id.
        #[arg(long)]
        org: String,
        /// Print JSON (for scripts).
        #[arg(long)]
        json: bool,
    },
    /// Revoke a token: it signs in no more and its open sessions end.
    Revoke {
        /// Token id (as listed).
        id: String,
    },
}

/// `index` commands (the service must be stopped).
#[derive(Debug, Subcommand)]
pub enum IndexCommand {
    /// Accept the journal as it is and rebuild the index from it, when the index is ahead of
    /// the journal or disagrees with it. The old index is kept aside (index.sled.stale-<time>).
    /// Only after checking the journal against a backup: entries missing from it stay lost.
    /// An index that agrees with the journal is left as it is (and said so) unless --force.
    Rebuild {
        /// Rebuild even an index that agrees with the journal (the old one is kept aside).
        #[arg(long)]
        force: bool,
    },
}

/// `store` commands: a register moved between the stores, each checked afterwards.
#[derive(Debug, Subcommand)]
pub enum StoreCommand {
    /// Create or upgrade the schema of the PostgreSQL database of `[store]` (as the
    /// database's owner; the service's role then starts without changing it).
    Migrate,
    /// Copy the embedded register of a state directory (the service stopped) into the empty
    /// PostgreSQL database of `[store]`, then check that both give the same answers.
    Import {
        /// The state directory holding the register (journal/journal.log).
        #[arg(long, value_name = "DIR")]
        from_state_dir: PathBuf,
    },
    /// Write the register of the PostgreSQL database of `[store]` into a new embedded store
    /// in an empty or missing directory, then verify it and compare both.
    Export {
        /// The new state directory.
        #[arg(long, value_name = "DIR")]
        to_state_dir: PathBuf,
    },
    /// Seal every device token kept in the store again with the first key of
    /// [store] secret_key_file, in one transaction.
    RotateKey,
}

/// `serve` options.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on (overrides the file and $EMCF_LISTEN).
    /// An address or a host name, and a port: 0.0.0.0:8080, localhost:8080, [::]:8080.
    #[arg(long, value_name = "ADDR", value_parser = crate::config::parse_listen)]
    pub listen: Option<std::net::SocketAddr>,
    /// Write every byte both ways on every device's port to this file, with monotonic
    /// timestamps (the wire capture format of docs/install.md; readable by its owner only).
    #[arg(long, value_name = "FILE")]
    pub capture: Option<PathBuf>,
}

/// `org` commands.
#[derive(Debug, Subcommand)]
pub enum OrgCommand {
    /// Create an organization (refused if its id exists: use `org update`). Creates the
    /// register at its first use.
    Add {
        /// Short id: a-z, 0-9, '-'.
        #[arg(long)]
        id: String,
        /// Display name.
        #[arg(long)]
        name: String,
        /// Seller NIF (must equal the NIF of its device; checked with the device when the
        /// service runs).
        #[arg(long)]
        nif: String,
        /// Seller ISF.
        #[arg(long)]
        isf: String,
        /// Plan: start or grow.
        #[arg(long, default_value = "start")]
        plan: String,
        /// Annual quota overriding the plan's.
        #[arg(long)]
        quota: Option<u64>,
        /// Name of the configured device it certifies on; with no device configured, `embedded`:
        /// the bundled simulator (nothing is fiscal).
        #[arg(long)]
        device: String,
        /// An administrator's e-mail address for the alerts (repeatable).
        #[arg(long = "admin-email", value_name = "ADDRESS")]
        admin_emails: Vec<String>,
        /// The largest total (TTC, in CDF) one invoice may have; a larger one is refused
        /// (code 181). None by default.
        #[arg(long, value_name = "AMOUNT")]
        max_invoice_total: Option<String>,
    },
    /// Change an organization: only the options given change.
    Update {
        /// Organization id.
        id: String,
        /// Display name.
        #[arg(long)]
        name: Option<String>,
        /// Seller NIF.
        #[arg(long)]
        nif: Option<String>,
        /// Seller ISF.
        #[arg(long)]
        isf: Option<String>,
        /// Plan: start or grow.
        #[arg(long)]
        plan: Option<String>,
        /// Annual quota overriding the plan's.
        #[arg(long, conflicts_with = "plan_quota")]
        quota: Option<u64>,
        /// Go back to the plan's quota.
        #[arg(long)]
        plan_quota: bool,
        /// Name of the configured device.
        #[arg(long)]
        device: Option<String>,
        /// The administrators' e-mail addresses for the alerts (repeatable; replaces the list).
        #[arg(
            long = "admin-email",
            value_name = "ADDRESS",
            conflicts_with = "no_admin_email"
        )]
        admin_emails: Vec<String>,
        /// Remove every administrator e-mail address.
        #[arg(long)]
        no_admin_email: bool,
        /// The largest total (TTC, in CDF) one invoice may have; a larger one is refused
        /// (code 181).
        #[arg(long, value_name = "AMOUNT", conflicts_with = "no_max_invoice_total")]
        max_invoice_total: Option<String>,
        /// Remove the largest invoice total: any total is accepted again.
        #[arg(long)]
        no_max_invoice_total: bool,
    },
    /// List organizations.
    List {
        /// Print JSON (for scripts).
        #[arg(long)]
        json: bool,
    },
    /// Show an organization and its quota use this year.
    Show {
        /// Organization id.
        id: String,
        /// Print JSON (for scripts).
        #[arg(long)]
        json: bool,
    },
}

/// `key` commands.
#[derive(Debug, Subcommand)]
pub enum KeyCommand {
    /// Issue a key; it is printed once and never stored in clear.
    Issue {
        /// Organization id.
        #[arg(long)]
        org: String,
        /// A sandbox key (`mcf_test_`) instead of a production key (`mcf_live_`).
        #[arg(long)]
        sandbox: bool,
        /// Free text to tell keys apart.
        #[arg(long, default_value = "")]
        label: String,
    },
    /// List the keys of an organization.
    List {
        /// Organization id.
        #[arg(long)]
        org: String,
        /// Print JSON (for scripts).
        #[arg(long)]
        json: bool,
    },
    /// Disable a key: the next request with it gets 401.
    Disable {
        /// Key id (as listed).
        id: String,
    },
    /// Enable a key again.
    Enable {
        /// Key id (as listed).
        id: String,
    },
}

/// Output format of `log export`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ExportFormat {
    /// Comma-separated values with a header line.
    Csv,
    /// One JSON object per line.
    Json,
}

/// The CSV export's cell separator.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum CsvSeparator {
    /// `,` and decimal points.
    Comma,
    /// `;` and decimal commas.
    Semicolon,
}

/// `log` commands.
#[derive(Debug, Subcommand)]
pub enum LogCommand {
    /// List register entries.
    List {
        /// Only this organization's.
        #[arg(long)]
        org: Option<String>,
        /// The sandbox register.
        #[arg(long)]
        sandbox: bool,
        /// Entries after this sequence number.
        #[arg(long, default_value_t = 0)]
        after: u64,
        /// At most this many.
        #[arg(long, default_value_t = 50)]
        limit: usize,
        /// Print JSON (for scripts).
        #[arg(long)]
        json: bool,
    },
    /// Show one entry as an auditor reads it: the invoice it certified (client, items,
    /// payments, reference), its amounts per tax group, its security elements, and the credit
    /// notes that reduce it or the invoice it reduces. By sequence, or by --org and --rn.
    Show {
        /// Sequence number (else --org and --rn).
        #[arg(required_unless_present = "rn", conflicts_with_all = ["rn", "org"])]
        sequence: Option<u64>,
        /// The organization (with --rn).
        #[arg(long, requires = "rn")]
        org: Option<String>,
        /// The invoice number (with --org).
        #[arg(long, requires = "org")]
        rn: Option<String>,
        /// The sandbox register.
        #[arg(long)]
        sandbox: bool,
        /// Print JSON (for scripts): the entry as journaled, with `certified_invoice`,
        /// `groups`, `original` and `credit_notes`.
        #[arg(long)]
        json: bool,
    },
    /// Export the register to stdout.
    Export {
        /// csv or json.
        #[arg(long, value_enum, default_value = "csv")]
        format: ExportFormat,
        /// CSV cell separator: comma (programs) or semicolon (a French spreadsheet: decimal
        /// commas in amounts too).
        #[arg(long, value_enum, default_value = "comma")]
        separator: CsvSeparator,
        /// Start the CSV with a UTF-8 byte order mark (Excel then reads accents right).
        #[arg(long)]
        bom: bool,
        /// Only this organization's.
        #[arg(long)]
        org: Option<String>,
        /// The sandbox register.
        #[arg(long)]
        sandbox: bool,
        /// Only entries certified on or after this day (YYYY-MM-DD, in the configured time
        /// zone).
        #[arg(long, value_parser = parse_day)]
        from: Option<chrono::NaiveDate>,
        /// Only entries certified on or before this day (YYYY-MM-DD, in the configured time
        /// zone).
        #[arg(long, value_parser = parse_day)]
        to: Option<chrono::NaiveDate>,
    },
    /// Verify every record's CRC and the hash chain of the journal.
    Verify,
}

/// An intent's id as `intent list` shows it; a wrong one says where to find it.
fn parse_intent_id(text: &str) -> Result<u64, Message> {
    text.parse()
        .map_err(|error| msg!("usage-intent-id", why = help::number_refused(&error)))
}

/// A fiscal anomaly's id as `device anomalies list` shows it; a wrong one says where to find
/// it.
fn parse_anomaly_id(text: &str) -> Result<u64, Message> {
    text.parse()
        .map_err(|error| msg!("usage-anomaly-id", why = help::number_refused(&error)))
}

/// A calendar day on the command line (`YYYY-MM-DD`).
pub(super) fn parse_day(text: &str) -> Result<chrono::NaiveDate, Message> {
    chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").map_err(|_| msg!("cli-day-format"))
}
