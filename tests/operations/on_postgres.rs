//! The operations tests again, with the register in PostgreSQL (issue 28; the mechanism:
//! `tests/common/store.rs`): the dashboard, keys, the auditor's reads and exports, alerts and
//! notices must not depend on the store. Not run again: what is about the embedded store's own
//! files (backups and restores, upgrades of older journals, a full disk, the state directory's
//! modes) and the tests that start PostgreSQL themselves (`postgres*`, `replicas::`).

#[test]
fn the_operations_tests_pass_with_the_register_in_postgresql() {
    crate::common::store::run_again_on_postgres(
        "the_operations_tests_pass_with_the_register_in_postgresql",
        &[
            "backup::",
            "upgrade::",
            "full_disk::",
            "state_modes::",
            "postgres",
            "replicas::",
            "store_config::",
            "store_move::",
        ],
    );
}
