//! `backup` and `restore` (docs/backup.md): the copy itself is `admin::backup`'s; here the
//! configuration is read, the `[backup] command` run, and everything said to the operator.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::bail;
use chrono::Utc;

use crate::admin::backup::{self, BackupCommandRun, BackupPlan, RestorePlan, Standing};
use crate::admin::socket;
use crate::admin::AdminRequest;
use crate::config::Config;
use crate::i18n::{default_lang, format, Localized};
use crate::msg;
use crate::store::DurableJournal;

/// `backup verify DIR`.
#[derive(Debug, clap::Subcommand)]
pub enum BackupCommand {
    /// Check a copy against its manifest, read-only (for an auditor): every file's length
    /// and SHA-256, the journal read again to the manifest's head and counts.
    Verify {
        /// The copy's folder (emcf-backup-<time>).
        #[arg(value_name = "SRC")]
        dir: PathBuf,
    },
}

/// `backup verify DIR`: the manifest's head and counts on stdout when every check holds;
/// exit 1 (why) on any mismatch. Writes nothing.
pub(super) fn verify(dir: &Path) -> anyhow::Result<()> {
    let manifest = backup::verify(dir)?;
    let journal = &manifest.journal;
    println!(
        "{}",
        msg!(
            "backup-done",
            dir = dir.display().to_string(),
            records = journal.records,
            entries = journal.entries_total,
            head = journal.head_sha256.as_str(),
            files = manifest.files.len()
        )
        .render(default_lang())
    );
    Ok(())
}

/// `backup [DEST]`: exit 0 only for a verified copy and, if configured, a command that
/// succeeded after it.
pub(super) fn backup(config: &Config, dest: Option<PathBuf>) -> anyhow::Result<()> {
    let lang = default_lang();
    let state_dir = config.resolved_state_dir();
    super::state_dir::require_existing(state_dir)?;
    // A running service says how far its journal is fsynced: the copy stops there. Without
    // one, the copy holds the state directory's lock.
    let durable = socket::call(
        &socket::path_in(state_dir),
        &AdminRequest::JournalDurable,
        lang,
    )?
    .map(serde_json::from_value::<DurableJournal>)
    .transpose()?
    .map(|durable| durable.bytes);
    let dest = dest.unwrap_or_else(|| config.backup.dir.clone());
    let plan = BackupPlan {
        state_dir: state_dir.to_path_buf(),
        config_file: config.source.clone(),
        named_files: config.named_files(),
        // Absolute: the copy's folder printed and recorded in last-backup.json is read later
        // from elsewhere (the service, the alerts).
        dest: std::path::absolute(&dest).unwrap_or(dest),
        keep: config.backup.keep,
        durable,
    };
    let taken = backup::take(&plan, Utc::now())?;
    let journal = &taken.manifest.journal;
    println!("{}", taken.dir.display());
    eprintln!(
        "{}",
        msg!(
            "backup-done",
            dir = taken.dir.display().to_string(),
            records = journal.records,
            entries = journal.entries_total,
            head = journal.head_sha256.as_str(),
            files = taken.manifest.files.len()
        )
        .render(lang)
    );
    for removed in &taken.removed {
        eprintln!(
            "{}",
            msg!("backup-removed", dir = removed.display().to_string()).render(lang)
        );
    }
    for unreadable in &taken.unreadable {
        eprintln!(
            "{}",
            msg!(
                "backup-copy-unreadable",
                dir = unreadable.display().to_string()
            )
            .render(lang)
        );
    }
    if let Some(error) = &taken.prune_failed {
        eprintln!(
            "{}",
            msg!("backup-prune-failed", why = error.message()).render(lang)
        );
    }
    let Some(argv) = config.backup.command_for(&taken.dir) else {
        return Ok(());
    };
    let timeout = Duration::from_secs(config.backup.command_timeout_secs);
    let (run, timed_out) = run_command(&argv, timeout);
    let failed = (!run.ok).then(|| run.detail.clone());
    backup::LastBackup::record_command(state_dir, run)?;
    if timed_out {
        bail!(msg!(
            "backup-command-timeout",
            command = argv.join(" "),
            secs = timeout.as_secs(),
            dir = taken.dir.display().to_string()
        ));
    }
    if let Some(detail) = failed {
        bail!(msg!(
            "backup-command-failed",
            command = argv.join(" "),
            detail = detail,
            dir = taken.dir.display().to_string()
        ));
    }
    eprintln!(
        "{}",
        msg!("backup-command-done", command = argv.join(" ")).render(lang)
    );
    Ok(())
}

/// Runs the `[backup] command`: its output goes to our stderr (stdout is the copy's folder,
/// for scripts); after `timeout` it is killed (its whole process group) and counts as failed
/// (the `bool`: it was).
fn run_command(argv: &[String], timeout: Duration) -> (BackupCommandRun, bool) {
    let (program, args) = argv
        .split_first()
        .map_or(("", &[][..]), |(p, a)| (p.as_str(), a));
    let mut command = Command::new(program);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::from(std::io::stderr()))
        .process_group(0);
    let ended = command.spawn().and_then(|mut child| {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = child.try_wait()? {
                return Ok(Some(status));
            }
            if Instant::now() >= deadline {
                // The group this command started (a shell's children too), and only it.
                if let Ok(group) = i32::try_from(child.id()) {
                    // SAFETY: kill takes plain integers; -group names the child's own group.
                    unsafe { libc::kill(-group, libc::SIGKILL) };
                }
                let _ = child.kill();
                let _ = child.wait();
                return Ok(None);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    });
    let timed_out = matches!(ended, Ok(None));
    let (ok, detail) = match ended {
        Ok(Some(status)) if status.success() => (true, String::new()),
        Ok(Some(status)) => (false, status.to_string()),
        // Recorded as is in last-backup.json (English, as an exit status is).
        Ok(None) => (false, format!("timeout={}s", timeout.as_secs())),
        Err(error) => (false, error.to_string()),
    };
    let run = BackupCommandRun {
        at: Utc::now(),
        ok,
        detail,
    };
    (run, timed_out)
}

/// `restore SRC [--force] [--config-in-place]`.
pub(super) fn restore(
    config: &Config,
    src: &Path,
    force: bool,
    config_in_place: bool,
) -> anyhow::Result<()> {
    let lang = default_lang();
    let state_dir = config.resolved_state_dir();
    let dir = || state_dir.display().to_string();
    // A running service answers on its admin socket: it must be stopped first.
    if state_dir.exists()
        && socket::call(&socket::path_in(state_dir), &AdminRequest::OrgList, lang)
            .ok()
            .flatten()
            .is_some()
    {
        bail!(msg!("restore-service-running", dir = dir()));
    }
    let session = backup::Restore::begin(state_dir)?;
    if let Some(unfinished) = session.unfinished() {
        eprintln!(
            "{}",
            msg!(
                "restore-resuming",
                copy = unfinished.copy.display().to_string(),
                aside = state_dir.join(&unfinished.aside).display().to_string()
            )
            .render(lang)
        );
    }
    let (manifest, standing) = session.assess(src)?;
    let copy_at = format::date_time(manifest.created_at, config.offset(), lang);
    eprintln!(
        "{}",
        msg!(
            "restore-copy",
            dir = src.display().to_string(),
            at = copy_at.clone(),
            records = manifest.journal.records,
            entries = manifest.journal.entries_total
        )
        .render(lang)
    );
    let loses = match &standing {
        Standing::Empty => {
            eprintln!("{}", msg!("restore-nothing-lost-empty").render(lang));
            false
        }
        Standing::Held(c) => {
            eprintln!(
                "{}",
                msg!("restore-nothing-lost", newer = c.copy_beyond).render(lang)
            );
            false
        }
        Standing::Loses(c) => {
            eprintln!(
                "{}",
                msg!(
                    "restore-loses",
                    n = c.entries_beyond,
                    records = c.current_beyond,
                    common = c.common
                )
                .render(lang)
            );
            true
        }
        Standing::Unreadable(why) => {
            eprintln!(
                "{}",
                msg!("restore-unreadable", why = why.clone()).render(lang)
            );
            true
        }
    };
    // Whatever the register in place: the box and the DGI may know invoices certified after
    // the copy was taken.
    eprintln!("{}", msg!("restore-outside", at = copy_at).render(lang));
    if loses && !force {
        bail!(msg!("restore-refused", dir = dir()));
    }
    // Only the paths this configuration names are ever written outside the state
    // directory: never one the copy's manifest names on its own.
    let mut config_paths: Vec<PathBuf> = config.source.iter().cloned().collect();
    config_paths.extend(config.named_files());
    let config_paths = config_paths
        .into_iter()
        .map(|p| std::path::absolute(&p).unwrap_or(p))
        .collect();
    let plan = RestorePlan {
        src: src.to_path_buf(),
        state_dir: state_dir.to_path_buf(),
        config_in_place,
        config_paths,
        now: Utc::now(),
    };
    let restored = session.apply(&plan, &manifest)?;
    drop(session);
    if let Some(aside) = &restored.aside {
        eprintln!(
            "{}",
            msg!("restore-aside", dir = aside.display().to_string()).render(lang)
        );
    }
    for (original, now) in &restored.config {
        let said = if original == now {
            msg!("restore-config-in-place", at = now.display().to_string())
        } else {
            msg!(
                "restore-config-file",
                original = original.display().to_string(),
                at = now.display().to_string()
            )
        };
        eprintln!("{}", said.render(lang));
    }
    for original in &restored.not_in_place {
        eprintln!(
            "{}",
            msg!(
                "restore-config-not-named",
                original = original.display().to_string()
            )
            .render(lang)
        );
    }
    eprintln!(
        "{}",
        msg!(
            "restore-done",
            dir = dir(),
            head = manifest.journal.head_sha256.as_str()
        )
        .render(lang)
    );
    // A register behind its box: what can be checked before the service starts.
    super::restore_check::check(config, state_dir, lang);
    Ok(())
}
