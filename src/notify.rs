//! systemd notifications (`sd_notify`, without libsystemd): `READY=1` once the API listens,
//! `WATCHDOG=1` pings while the runtime is alive, `STOPPING=1` on shutdown. Outside systemd
//! (`NOTIFY_SOCKET` unset) every call does nothing.

use std::io;
use std::os::unix::net::UnixDatagram;
use std::time::Duration;

/// Sends `state` (e.g. `READY=1`) to the service manager; `Ok(false)` outside systemd.
pub fn notify(state: &str) -> io::Result<bool> {
    let Some(path) = std::env::var_os("NOTIFY_SOCKET") else {
        return Ok(false);
    };
    let socket = UnixDatagram::unbound()?;
    let bytes = path.as_encoded_bytes();
    if let Some(name) = bytes.strip_prefix(b"@") {
        // An abstract socket (Linux).
        #[cfg(target_os = "linux")]
        {
            use std::os::linux::net::SocketAddrExt;
            let address = std::os::unix::net::SocketAddr::from_abstract_name(name)?;
            socket.send_to_addr(state.as_bytes(), &address)?;
            return Ok(true);
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = name;
            return Err(io::Error::other("abstract notify sockets need Linux"));
        }
    }
    socket.send_to(state.as_bytes(), &path)?;
    Ok(true)
}

/// How often to ping the watchdog: half of `WATCHDOG_USEC`, if systemd asked for pings for
/// this process (`WATCHDOG_PID` unset or ours).
pub fn watchdog_interval() -> Option<Duration> {
    if let Ok(pid) = std::env::var("WATCHDOG_PID") {
        if pid.trim() != std::process::id().to_string() {
            return None;
        }
    }
    let usec: u64 = std::env::var("WATCHDOG_USEC").ok()?.trim().parse().ok()?;
    (usec > 0).then(|| Duration::from_micros(usec / 2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_notification_reaches_the_socket_named_by_notify_socket() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("notify.sock");
        let listener = UnixDatagram::bind(&path).expect("bind");
        // Tests run in threads of one process: only this test touches NOTIFY_SOCKET.
        std::env::set_var("NOTIFY_SOCKET", &path);
        let sent = notify("READY=1\nSTATUS=listening");
        std::env::remove_var("NOTIFY_SOCKET");
        assert!(sent.expect("sent"));
        let mut buf = [0u8; 64];
        let n = listener.recv(&mut buf).expect("received");
        assert_eq!(&buf[..n], b"READY=1\nSTATUS=listening");
        assert!(!notify("READY=1").expect("no socket is fine"));
    }
}
