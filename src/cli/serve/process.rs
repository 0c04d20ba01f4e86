//! The serving process's edges: its log, the API's listening socket, the stop signals and
//! systemd's watchdog.

use std::net::SocketAddr;
use tokio::net::{TcpListener, TcpSocket};
use tokio_util::sync::CancellationToken;
use tracing::info;

use super::super::errors::Say;
use crate::msg;
use crate::notify;

pub(super) fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}

/// Cancels `stop` on SIGTERM or Ctrl-C, telling systemd.
pub(super) fn spawn_signal_stop(stop: CancellationToken) {
    tokio::spawn(async move {
        wait_for_signal().await;
        info!("stop requested: refusing new requests, finishing those in progress");
        let _ = notify::notify("STOPPING=1");
        stop.cancel();
    });
}

/// Pings systemd's watchdog while the runtime runs tasks (a stuck runtime stops the pings and
/// systemd restarts the service).
pub(super) fn spawn_watchdog(stop: CancellationToken) {
    let Some(interval) = notify::watchdog_interval() else {
        return;
    };
    tokio::spawn(async move {
        loop {
            tokio::select! {
                () = tokio::time::sleep(interval) => {
                    let _ = notify::notify("WATCHDOG=1");
                }
                () = stop.cancelled() => return,
            }
        }
    });
}

/// Connections the kernel may hold for `accept` (std's and mio's default is 128: with a burst
/// of clients, e.g. a whole shop's tills after a network cut, the rest would be dropped at SYN
/// and retried by their kernel only a second later).
const LISTEN_BACKLOG: u32 = 1024;

/// Binds the API's socket (address reuse on, as `TcpListener::bind` does) with
/// [`LISTEN_BACKLOG`].
pub(super) fn listen(addr: SocketAddr) -> anyhow::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()
    } else {
        TcpSocket::new_v6()
    }
    .say(|| msg!("cli-listen-failed", addr = addr.to_string()))?;
    socket
        .set_reuseaddr(true)
        .and_then(|()| socket.bind(addr))
        .and_then(|()| socket.listen(LISTEN_BACKLOG))
        .say(|| msg!("cli-listen-failed", addr = addr.to_string()))
}

pub(super) async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
