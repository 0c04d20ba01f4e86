//! Opening the port the simulator serves: a new pseudo-terminal, or a real serial port.

use std::io;
use std::path::{Path, PathBuf};

use tokio_serial::{SerialPort, SerialPortBuilderExt, SerialStream};

/// A pseudo-terminal pair: the simulator serves the master side; hosts open [`Pty::path`]
/// (the slave) like a serial device.
///
/// The simulator also keeps one handle on the slave, so that the master does not read EIO
/// while no host has the path open, and a host can close and reopen the path at will.
#[derive(Debug)]
pub struct Pty {
    master: Option<SerialStream>,
    _slave: SerialStream,
    path: PathBuf,
    link: Option<PathBuf>,
}

impl Pty {
    /// Opens a new pair, and optionally a symlink `link` to the slave (replacing an old link).
    /// Must be called within a tokio runtime.
    pub fn open(link: Option<&Path>) -> io::Result<Pty> {
        let (master, slave) = SerialStream::pair().map_err(io::Error::from)?;
        // `pair` opens both ends without O_CLOEXEC: a process spawned later (a gateway under
        // test, a CLI run) would inherit them, and dropping the pty would no longer hang up
        // the host (a vanished port would look like a silent one).
        set_cloexec(&master)?;
        set_cloexec(&slave)?;
        let path = slave
            .name()
            .map(PathBuf::from)
            .ok_or_else(|| io::Error::other("the pseudo-terminal has no slave path"))?;
        let link = match link {
            Some(link) => {
                replace_symlink(&path, link)?;
                Some(link.to_path_buf())
            }
            None => None,
        };
        Ok(Pty {
            master: Some(master),
            _slave: slave,
            path,
            link,
        })
    }

    /// The path a host opens (`/dev/pts/N`).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The symlink to the path, if one was asked for.
    pub fn link(&self) -> Option<&Path> {
        self.link.as_deref()
    }

    /// The master side, to serve. `None` once taken.
    pub fn take_master(&mut self) -> Option<SerialStream> {
        self.master.take()
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        if let Some(link) = &self.link {
            // Only remove the link if it still points at this pty.
            if std::fs::read_link(link).ok().as_deref() == Some(self.path.as_path()) {
                let _ = std::fs::remove_file(link);
            }
        }
    }
}

fn replace_symlink(target: &Path, link: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(link) {
        Ok(meta) if meta.file_type().is_symlink() => std::fs::remove_file(link)?,
        Ok(_) => {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{} exists and is not a symlink", link.display()),
            ))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    std::os::unix::fs::symlink(target, link)
}

/// Opens a real serial port, 8N1, no flow control. Must be called within a tokio runtime.
pub fn open_serial(path: &Path, baud: u32) -> io::Result<SerialStream> {
    let name = path.to_string_lossy();
    tokio_serial::new(name, baud)
        .data_bits(tokio_serial::DataBits::Eight)
        .parity(tokio_serial::Parity::None)
        .stop_bits(tokio_serial::StopBits::One)
        .flow_control(tokio_serial::FlowControl::None)
        .open_native_async()
        .map_err(io::Error::from)
}

/// Sets FD_CLOEXEC on `stream`'s descriptor.
fn set_cloexec(stream: &SerialStream) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = stream.as_raw_fd();
    // SAFETY: `fd` is an open descriptor owned by `stream`, alive for these calls; F_GETFD and
    // F_SETFD only read and set its descriptor flags.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
