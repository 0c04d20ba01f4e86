//! Every test of this binary again, with the register in PostgreSQL (issue 28): one
//! parameter, not copies of the tests (`tests/common/store.rs`). The binary runs itself with
//! `EMCF_TEST_STORE=postgres`; that run starts one PostgreSQL server and gives each test's
//! gateway a database of its own. What an ERP sees must not depend on the store: the same
//! answers, codes, quotas, keys, retries and exports.

#[test]
fn every_api_test_passes_with_the_register_in_postgresql() {
    crate::common::store::run_again_on_postgres(
        "every_api_test_passes_with_the_register_in_postgresql",
        &[],
    );
}
