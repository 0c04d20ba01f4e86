//! Every test of this binary again, with the register in PostgreSQL (issue 28): one
//! parameter, not copies of the tests (`tests/common/store.rs`). The binary runs itself with
//! `EMCF_TEST_STORE=postgres`; that run starts one PostgreSQL server and gives each test's
//! gateway a database of its own. What an ERP sees must not depend on the store: the same
//! answers, codes, quotas, keys, retries and exports (the authentication test with 20,000
//! bad keys instead of 100,000; the two body-size tests, which no store sees, once only).

#[test]
fn every_api_test_passes_with_the_register_in_postgresql() {
    crate::common::store::run_again_on_postgres(
        "every_api_test_passes_with_the_register_in_postgresql",
        // Refused before any store is read (bodies too large, nesting bombs): their volume
        // runs once, in the embedded run.
        &[
            "hostile_http::a_raised_body_limit_reads_10_mib_bodies_with_bounded_memory",
            "hostile_http::large_bodies_and_nesting_bombs_are_refused_with_bounded_memory",
        ],
    );
}
