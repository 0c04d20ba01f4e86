//! The `[backup]` table (1.7.0): where `emcf-gateway backup` writes its copies when no
//! destination is given, how many good copies it keeps, and the command it runs after each
//! verified copy (docs/backup.md). Every key optional, so older files read unchanged.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::validate::{in_range, Unit};
use super::{Config, ConfigError};
use crate::msg;

/// `backup.dir` default.
pub const DEFAULT_BACKUP_DIR: &str = "/var/backups/emcf-gateway";
/// `backup.keep` default: two weeks of daily copies.
pub const DEFAULT_BACKUP_KEEP: u32 = 14;
/// `backup.command_timeout_secs` default: an hour, then the command is killed.
pub const DEFAULT_BACKUP_COMMAND_TIMEOUT_SECS: u64 = 3600;
/// What `backup.command` may write in its arguments for the verified copy's folder.
pub const BACKUP_DIR_PLACEHOLDER: &str = "{dir}";

/// `[backup]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BackupSettings {
    /// Where the copies go when `backup` is given no destination.
    pub dir: PathBuf,
    /// How many good copies are kept (the oldest ones beyond are removed).
    pub keep: u32,
    /// Run after each verified copy: the program and its arguments, `{dir}` replaced by the
    /// copy's folder (e.g. `["rsync", "-a", "{dir}", "backup@host:/srv/emcf/"]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    /// How long the command may run before it is killed and counted as failed (seconds).
    pub command_timeout_secs: u64,
}

impl Default for BackupSettings {
    fn default() -> Self {
        BackupSettings {
            dir: PathBuf::from(DEFAULT_BACKUP_DIR),
            keep: DEFAULT_BACKUP_KEEP,
            command: None,
            command_timeout_secs: DEFAULT_BACKUP_COMMAND_TIMEOUT_SECS,
        }
    }
}

impl BackupSettings {
    /// Whether every key has its default (the table is then left out when written).
    pub fn is_default(&self) -> bool {
        *self == BackupSettings::default()
    }

    /// The command's arguments for the copy in `dir`: each `{dir}` replaced.
    pub fn command_for(&self, dir: &std::path::Path) -> Option<Vec<String>> {
        let shown = dir.display().to_string();
        self.command.as_ref().map(|argv| {
            argv.iter()
                .map(|arg| arg.replace(BACKUP_DIR_PLACEHOLDER, &shown))
                .collect()
        })
    }
}

impl Config {
    /// The files this configuration names, which a backup copies with it: the web API's
    /// token and CA files (the sandbox's too), the SMTP password file, and the PostgreSQL
    /// store's password and CA files.
    pub fn named_files(&self) -> Vec<PathBuf> {
        let devices = self.devices.iter().flat_map(|device| {
            [
                &device.token_file,
                &device.ca_file,
                &device.sandbox_token_file,
            ]
        });
        let smtp = self.smtp.as_ref().map(|s| &s.password_file);
        let store = [&self.store.password_file, &self.store.ca_file];
        let mut files: Vec<PathBuf> = Vec::new();
        for file in devices.chain(smtp).chain(store).flatten() {
            if !files.contains(file) {
                files.push(file.clone());
            }
        }
        files
    }

    /// The `[backup]` keys.
    pub(super) fn validate_backup(&self) -> Result<(), ConfigError> {
        let backup = &self.backup;
        in_range(backup.keep, 1, 1000, Unit::None).map_err(|m| self.invalid("backup.keep", m))?;
        in_range(backup.command_timeout_secs, 1, 7 * 86_400, Unit::Seconds)
            .map_err(|m| self.invalid("backup.command_timeout_secs", m))?;
        if backup.dir.as_os_str().is_empty() || !backup.dir.is_absolute() {
            return Err(self.invalid("backup.dir", msg!("config-backup-dir")));
        }
        if let Some(argv) = &backup.command {
            if argv.first().is_none_or(|program| program.trim().is_empty()) {
                return Err(self.invalid("backup.command", msg!("config-backup-command")));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn the_table_is_optional_and_checked() {
        let config = Config::from_toml_str("", Path::new("c.toml")).unwrap();
        assert_eq!(config.backup, BackupSettings::default());
        let text = "[backup]\ndir = \"/srv/b\"\nkeep = 3\ncommand = [\"rsync\", \"-a\", \"{dir}\", \"h:/x/\"]\n";
        let config = Config::from_toml_str(text, Path::new("c.toml")).unwrap();
        config.validate().unwrap();
        assert_eq!(config.backup.keep, 3);
        assert_eq!(
            config.backup.command_for(Path::new("/srv/b/emcf-backup-1")),
            Some(vec![
                "rsync".into(),
                "-a".into(),
                "/srv/b/emcf-backup-1".into(),
                "h:/x/".into()
            ])
        );
        for bad in [
            "[backup]\nkeep = 0\n",
            "[backup]\ncommand = []\n",
            "[backup]\ndir = \"rel\"\n",
            "[backup]\ncommand_timeout_secs = 0\n",
        ] {
            let config = Config::from_toml_str(bad, Path::new("c.toml")).unwrap();
            assert!(config.validate().is_err(), "{bad}");
        }
    }
}
