//! A small state file written whole or not at all, for its owner only: the alerts' state
//! (`alerts.json`) and the dashboard's sessions (`dashboard-sessions.json`). Blocking: callers
//! on the async runtime run it with `spawn_blocking`.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` atomically: `<path>.tmp` (created 0600, whatever the umask),
/// fsync, rename over `path`, fsync of the directory. A crash leaves the old file or the new
/// one, never half of one.
pub fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = temp_path(path);
    let mut options = OpenOptions::new();
    options.create(true).write(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut out = options.open(&tmp)?;
    // A temporary file left by an older version may have another mode.
    #[cfg(unix)]
    out.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
    out.write_all(bytes)?;
    out.sync_all()?;
    drop(out);
    fs::rename(&tmp, path)?;
    #[cfg(unix)]
    {
        let dir = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        File::open(dir)?.sync_all()?;
    }
    Ok(())
}

/// The temporary file [`write_private`] writes before its rename: `<path>.tmp`.
pub fn temp_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".tmp");
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_is_replaced_whole_and_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        write_private(&path, b"one").unwrap();
        write_private(&path, b"two").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        assert!(!temp_path(&path).exists());
        assert_eq!(temp_path(&path), dir.path().join("state.json.tmp"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }
}
