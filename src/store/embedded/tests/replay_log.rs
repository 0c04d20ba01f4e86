//! The open says at `info` when it brought the index up to date from the journal: how many
//! records, how long, why (a deleted index, an index behind the journal).

use std::io::Write;
use std::sync::{Arc, Mutex};

use super::{certify_range, seeded};
use crate::store::embedded::EmbeddedStore;

/// What the store logs while `run` runs, as text.
fn logged(run: impl FnOnce()) -> String {
    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);
    impl Write for Buffer {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            crate::sync::lock(&self.0).extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let buffer = Buffer::default();
    let writer = buffer.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::INFO)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    tracing::subscriber::with_default(subscriber, run);
    let bytes = crate::sync::lock(&buffer.0).clone();
    String::from_utf8_lossy(&bytes).into_owned()
}

#[test]
fn a_rebuild_after_the_index_was_deleted_is_logged_with_its_count_and_time() {
    let dir = tempfile::tempdir().unwrap();
    let store = seeded(dir.path());
    certify_range(&store, 0..10);
    drop(store);
    let quiet = logged(|| drop(EmbeddedStore::open(dir.path()).unwrap()));
    assert!(!quiet.contains("index brought up to date"), "{quiet}");

    std::fs::remove_dir_all(dir.path().join("index.sled")).unwrap();
    let log = logged(|| drop(EmbeddedStore::open(dir.path()).unwrap()));
    let line = log
        .lines()
        .find(|line| line.contains("index brought up to date from the journal"))
        .unwrap_or_else(|| panic!("no rebuild line in:\n{log}"));
    // 6 records of `seeded`, 2 per certification.
    assert!(line.contains("INFO"), "{line}");
    assert!(line.contains("records=26"), "{line}");
    assert!(line.contains("seconds="), "{line}");
    assert!(
        line.contains("the index is empty (deleted, or a first open)"),
        "{line}"
    );
}
