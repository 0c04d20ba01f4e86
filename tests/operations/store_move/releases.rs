//! The register of every release's fixture (`tests/fixtures/release-*/journal.log`: 1.0.0's
//! intents without a box counter, 1.2.0's web API, 1.5.0 to 1.7.0's entries carrying their
//! invoice a second time) imported into PostgreSQL through the binary: each import checks
//! itself, then the auditor's exports are the same from both stores and `log verify` holds;
//! exported back, the new journal gives the same exports again.

use super::{config, ok, run, said};
use crate::pg::PgServer;

const RELEASES: [&str; 5] = ["1.0.0", "1.2.0", "1.5.0", "1.6.0", "1.7.0"];

fn exports(config: &std::path::Path) -> Vec<String> {
    let mut all = Vec::new();
    for format in ["csv", "json"] {
        for register in [&[][..], &["--sandbox"]] {
            let mut args = vec!["log", "export", "--format", format];
            args.extend_from_slice(register);
            all.push(ok(config, &args));
        }
    }
    all
}

#[test]
fn the_register_of_every_release_imports_with_the_same_exports() {
    let Some(server) = PgServer::init("store import of every release") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for (n, release) in RELEASES.iter().enumerate() {
        let role = format!("emcf_release_{n}");
        server.create_role_and_database(&role, "release-secret");
        let state = dir.path().join(format!("state-{release}"));
        std::fs::create_dir_all(state.join("journal")).unwrap();
        let fixture = format!(
            "{}/tests/fixtures/release-{release}/journal.log",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::copy(&fixture, state.join("journal/journal.log")).unwrap();
        let embedded = config(dir.path(), &format!("embedded-{n}.toml"), &state, None);
        let url = server.socket_url(&role, &role);
        let hosted = config(
            dir.path(),
            &format!("hosted-{n}.toml"),
            &dir.path().join("hosted"),
            Some(&url),
        );
        let before = exports(&embedded);
        assert!(before[0].lines().count() > 1, "{release}: {}", before[0]);
        let from = state.display().to_string();
        let imported = ok(&hosted, &["store", "import", "--from-state-dir", &from]);
        assert!(imported.contains("Vérifié"), "{release}: {imported}");
        assert_eq!(exports(&hosted), before, "{release}");
        let verified = run(&hosted, &["log", "verify"]);
        assert!(verified.status.success(), "{release}: {}", said(&verified));
        // And back: a journal of today's form, the same exports, every id kept.
        let back_dir = dir.path().join(format!("back-{release}"));
        let to = back_dir.display().to_string();
        ok(&hosted, &["store", "export", "--to-state-dir", &to]);
        let back = config(dir.path(), &format!("back-{n}.toml"), &back_dir, None);
        assert_eq!(exports(&back), before, "{release}, back");
        let verified = run(&back, &["log", "verify"]);
        assert!(verified.status.success(), "{release}: {}", said(&verified));
    }
}
