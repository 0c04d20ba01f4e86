//! Writing a wire capture (`serve --capture FILE`, `device probe --capture FILE`): every byte
//! both ways on every device's port, with monotonic timestamps, in the text format of
//! `mcf_sfe::capture` (documented there and in docs/install.md). One file may serve several
//! devices: each line names its device.
//!
//! A write that fails is logged once and the capture stops; it never disturbs the link.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use chrono::{SecondsFormat, Utc};
use mcf_sfe::capture::{format_line, Event, MAGIC};
use tracing::warn;

/// A capture file shared by the devices that write to it. Cheap to clone.
#[derive(Clone)]
pub struct Capture {
    inner: Arc<Mutex<Inner>>,
}

struct Inner {
    out: Option<BufWriter<File>>,
    started: Instant,
}

impl std::fmt::Debug for Capture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Capture")
    }
}

impl Capture {
    /// Creates (or truncates) `path`, readable by its owner only (the invoices cross this
    /// wire), and writes the header.
    pub fn create(path: &Path) -> io::Result<Capture> {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options.open(path)?;
        // `mode` applies only to a file it creates: an existing one is narrowed too.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        }
        let mut out = BufWriter::new(file);
        writeln!(out, "{MAGIC}")?;
        writeln!(
            out,
            "# started {}",
            Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true)
        )?;
        out.flush()?;
        Ok(Capture {
            inner: Arc::new(Mutex::new(Inner {
                out: Some(out),
                started: Instant::now(),
            })),
        })
    }

    /// Writes a comment line (`# ...`), e.g. a device's port and settings.
    pub fn comment(&self, text: &str) {
        self.write(|_| format!("# {}", text.replace(['\n', '\r'], " ")));
    }

    /// Writes one event of `device`.
    pub fn record(&self, device: &str, event: &Event) {
        self.write(|started| format_line(started.elapsed(), device, event));
    }

    fn write(&self, line: impl FnOnce(Instant) -> String) {
        let mut inner = crate::sync::lock(&self.inner);
        let started = inner.started;
        let Some(out) = inner.out.as_mut() else {
            return;
        };
        let text = line(started);
        if let Err(error) = writeln!(out, "{text}").and_then(|()| out.flush()) {
            warn!(%error, "the wire capture cannot be written: capture stopped");
            inner.out = None;
        }
    }
}

/// The capture of one device: what the transport writes to.
#[derive(Clone, Debug)]
pub(super) struct DeviceCapture {
    pub capture: Capture,
    pub device: Arc<str>,
}

impl DeviceCapture {
    pub(super) fn record(&self, event: &Event) {
        self.capture.record(&self.device, event);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capture_file_reads_back_with_its_events() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("wire.txt");
        let capture = Capture::create(&path).unwrap();
        capture.comment("device shop /dev/ttyUSB0 115200");
        capture.record("shop", &Event::Open);
        capture.record("shop", &Event::ToDevice(vec![0x01, 0x24]));
        capture.record("shop", &Event::FromDevice(vec![0x16]));
        let text = std::fs::read_to_string(&path).unwrap();
        let parsed = mcf_sfe::capture::parse(&text).unwrap();
        assert_eq!(parsed.lines.len(), 3);
        assert_eq!(parsed.comments[1], "device shop /dev/ttyUSB0 115200");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o077, 0, "only its owner reads it: {mode:o}");
        }
    }
}
