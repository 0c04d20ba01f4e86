//! The gateway's own files, for their owner only and durable: folders created 0700 and files
//! 0600 whatever the umask ([`private_dir`], [`private_file`]), a folder fsync'd so that what
//! was created or renamed in it survives a crash ([`sync_dir`]), and a small state file
//! written whole or not at all ([`write_private`]: the alerts' state, the notices, the
//! dashboard's sessions, the last backup, the simulators' token files). Blocking: callers on
//! the async runtime run them with `spawn_blocking`.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` atomically: `<path>.tmp` (created 0600, whatever the umask),
/// fsync, rename over `path`, fsync of the directory. A crash leaves the old file or the new
/// one, never half of one.
pub fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = temp_path(path);
    let mut out = private_file()
        .create(true)
        .write(true)
        .truncate(true)
        .open(&tmp)?;
    // A temporary file left by an older version may have another mode.
    #[cfg(unix)]
    out.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
    out.write_all(bytes)?;
    out.sync_all()?;
    drop(out);
    fs::rename(&tmp, path)?;
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    sync_dir(dir)
}

/// Options that create a file for its owner only (0600, whatever the umask); the caller says
/// how it opens it.
pub fn private_file() -> OpenOptions {
    let mut options = OpenOptions::new();
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
}

/// Creates `dir` and its missing parents for the owner only (0700, whatever the umask); an
/// existing folder is left as it is.
pub fn private_dir(dir: &Path) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// fsyncs the folder `dir`, so that a file created or renamed in it survives a crash (nothing
/// to do where folders cannot be opened).
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    File::open(dir)?.sync_all()?;
    #[cfg(not(unix))]
    let _ = dir;
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
