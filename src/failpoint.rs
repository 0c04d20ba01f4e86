//! Crash points for the crash harness (issue: never lose or duplicate a certification).
//!
//! `EMCF_FAILPOINTS=name[,name...]` makes the process abort (as `kill -9` would: no unwinding,
//! no flush, no destructor) the first time it reaches a named point. Unset, a point costs one
//! atomic load. The points, in the order one certification reaches them:
//!
//! | name | where |
//! |---|---|
//! | `before_intent` | 35h payments done, intent not journaled |
//! | `after_intent` | intent fsync'd, 38h not sent |
//! | `after_finalize` | 38h answered `R:`, certification not journaled |
//! | `after_certified` | certification fsync'd, client not answered |
//!
//! Outside the certification path: `restore_after_aside` (`emcf-gateway restore`: the copy
//! staged and the marker written, what was there moved aside, nothing renamed into place yet;
//! `tests/operations/backup.rs`).
//!
//! `EMCF_PAUSE_AT` pauses at one of these points instead ([`pause`]).
//!
//! Used by `tests/crash.rs` and `examples/crash.rs`; harmless in production (the variable is
//! not set by the systemd unit and is logged loudly when it is).

use std::sync::OnceLock;

/// Every point the certification path declares.
pub const POINTS: [&str; 4] = [
    "before_intent",
    "after_intent",
    "after_finalize",
    "after_certified",
];

fn armed() -> &'static [String] {
    static ARMED: OnceLock<Vec<String>> = OnceLock::new();
    ARMED.get_or_init(|| {
        let names: Vec<String> = std::env::var("EMCF_FAILPOINTS")
            .unwrap_or_default()
            .split(',')
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .map(str::to_string)
            .collect();
        if !names.is_empty() {
            tracing::warn!(
                ?names,
                "EMCF_FAILPOINTS is set: this process will abort on purpose"
            );
        }
        names
    })
}

/// Aborts the process if the point `name` is armed.
pub fn hit(name: &'static str) {
    if armed().iter().any(|armed| armed == name) {
        eprintln!("failpoint {name}: aborting");
        std::process::abort();
    }
}

/// `EMCF_PAUSE_AT=name:path`: each time the point `name` is reached while the file `path`
/// exists, the process writes `path.here` and waits until `path` is removed, then goes on.
/// For tests that must act at that exact step (fill the disk between the box's finalize and
/// the certification record, or before a box's intent: `tests/device/disk_full/`). Unset, a
/// point costs one load.
pub async fn pause(name: &'static str) {
    static PAUSE: OnceLock<Option<(String, std::path::PathBuf)>> = OnceLock::new();
    let armed = PAUSE.get_or_init(|| {
        let value = std::env::var("EMCF_PAUSE_AT").ok()?;
        let (point, path) = value.split_once(':')?;
        tracing::warn!(
            point,
            path,
            "EMCF_PAUSE_AT is set: this process pauses on request"
        );
        Some((point.to_owned(), std::path::PathBuf::from(path)))
    });
    let Some((point, path)) = armed else { return };
    if point != name || !path.exists() {
        return;
    }
    let mut here = path.clone().into_os_string();
    here.push(".here");
    if std::fs::write(&here, name).is_err() {
        return;
    }
    while path.exists() {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let _ = std::fs::remove_file(&here);
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_point_is_reached_by_the_certification_path() {
        let sources = [
            include_str!("certify/box_channel/run.rs"),
            include_str!("certify/service.rs"),
            include_str!("certify/service/finish.rs"),
        ]
        .concat();
        for point in super::POINTS {
            assert!(
                sources.contains(&format!("failpoint::hit(\"{point}\")")),
                "{point} is declared but not placed"
            );
        }
    }
}
