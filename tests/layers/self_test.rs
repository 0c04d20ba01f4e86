//! The reader itself, on small crates in a temporary folder: a test that cannot fail is a
//! defect, so it is shown failing.

use std::fs;

use super::reader::{broken, read_crate};
use super::Rule;

/// A crate in a temporary folder: `files` (path under `src/`, text).
fn crate_of(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary folder");
    for (path, text) in files {
        let path = dir.path().join(path);
        fs::create_dir_all(path.parent().expect("a parent")).expect("a folder");
        fs::write(path, text).expect("a source file");
    }
    dir
}

const TEST_RULES: &[Rule] = &[
    Rule {
        unit: "lib",
        may_name: "api store device certify i18n",
        why: "root",
    },
    Rule {
        unit: "api",
        may_name: "certify i18n",
        why: "api names certify only",
    },
    Rule {
        unit: "certify",
        may_name: "store certify/box_channel i18n",
        why: "certify sees a channel",
    },
    Rule {
        unit: "certify/box_channel",
        may_name: "certify device mcf_sfe",
        why: "the box channel",
    },
    Rule {
        unit: "store",
        may_name: "",
        why: "the register",
    },
    Rule {
        unit: "device",
        may_name: "mcf_sfe",
        why: "the port",
    },
    Rule {
        unit: "i18n",
        may_name: "",
        why: "the catalogue",
    },
];

fn said_for(files: &[(&str, &str)]) -> Vec<String> {
    let dir = crate_of(files);
    let (references, _, problems) = read_crate(dir.path());
    assert!(problems.is_empty(), "{problems:?}");
    broken(&references, TEST_RULES, &[]).0
}

const LIB: &str = "mod api;\nmod certify;\nmod store;\nmod device;\nmod i18n;\n";

#[test]
fn the_reader_catches_a_wrapped_use_group() {
    let said = said_for(&[
        ("lib.rs", LIB),
        (
            "api/mod.rs",
            "use crate::{\n    certify::Certifier,\n    store::{\n        Store,\n        open,\n    },\n};\n",
        ),
        ("certify.rs", ""),
        ("store.rs", ""),
        ("device.rs", ""),
        ("i18n.rs", ""),
    ]);
    assert_eq!(
        said,
        [
            "src/api/mod.rs:4: `crate::store::Store` names store, which api may not name: api names certify only",
            "src/api/mod.rs:5: `crate::store::open` names store, which api may not name: api names certify only",
        ]
    );
}

#[test]
fn the_reader_catches_inline_paths_in_code_types_and_macros() {
    let said = said_for(&[
        ("lib.rs", LIB),
        (
            "api.rs",
            "fn f() -> crate::certify::Answer {\n    let _ = crate::device::LinkStatus::default();\n    \
             assert!(matches!(x, crate::store::Halted));\n    ::mcf_sfe::frame(1)\n}\n",
        ),
        ("certify.rs", ""),
        ("store.rs", ""),
        ("device.rs", ""),
        ("i18n.rs", ""),
    ]);
    assert_eq!(
        said,
        [
            "src/api.rs:2: `crate::device::LinkStatus::default` names device, which api may not name: api names certify only",
            "src/api.rs:3: `crate::store::Halted` names store, which api may not name: api names certify only",
            "src/api.rs:4: `::mcf_sfe::frame` names mcf_sfe, which api may not name: api names certify only",
        ]
    );
}

#[test]
fn the_reader_resolves_super_self_children_and_path_modules() {
    let said = said_for(&[
        ("lib.rs", "mod api;\nmod certify;\n#[path = \"elsewhere/register.rs\"]\nmod store;\nmod device;\nmod i18n;\n"),
        ("api.rs", "mod routes;\n"),
        // `super::super` from api::routes::inner is the crate's root.
        ("api/routes.rs", "mod inner {\n    use super::super::super::store::Store;\n    fn f() { self::g(); }\n}\n"),
        (
            "certify/mod.rs",
            "mod box_channel;\nmod service;\nuse box_channel::Run;\nfn f() { mcf_sfe::x(); }\n",
        ),
        ("certify/service.rs", "use super::box_channel::Run;\nfn f() { super::super::device::open(); }\n"),
        ("certify/box_channel.rs", "use crate::device::Port;\nuse mcf_sfe::Frame;\nuse super::service;\n"),
        // The `#[path]` file is read, and is store's.
        ("elsewhere/register.rs", "use crate::api::Router;\n"),
        ("device.rs", "use mcf_sfe::Frame;\n"),
        ("i18n.rs", ""),
    ]);
    assert_eq!(
        said,
        [
            "src/api/routes.rs:2: `super::super::super::store::Store` names store, which api may not name: api names certify only",
            "src/certify/mod.rs:4: `mcf_sfe::x` names mcf_sfe, which certify may not name: certify sees a channel",
            "src/certify/service.rs:2: `super::super::device::open` names device, which certify may not name: certify sees a channel",
            "src/elsewhere/register.rs:1: `crate::api::Router` names api, which store may not name: the register",
        ]
    );
}

#[test]
fn a_file_no_module_reaches_is_a_problem() {
    let dir = crate_of(&[("lib.rs", "mod api;\n"), ("api.rs", ""), ("stray.rs", "")]);
    let (_, _, problems) = read_crate(dir.path());
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].contains("src/stray.rs"), "{problems:?}");
}

#[test]
fn a_stale_temporary_allowance_fails() {
    let (_, stale) = broken(&[], TEST_RULES, &[("certify/invoice/mod.rs", "mcf_sfe")]);
    assert_eq!(stale.len(), 1);
}

#[test]
fn only_test_code_may_drive_the_simulator() {
    let said = said_for(&[
        ("lib.rs", LIB),
        ("api.rs", ""),
        ("certify.rs", ""),
        ("store.rs", ""),
        (
            "device.rs",
            "use emcf_sim::start_on_pty;\n#[cfg(test)]\nmod tests;\n#[cfg(test)]\nfn f() { emcf_sim::run(); }\n",
        ),
        ("device/tests.rs", "use emcf_sim::SimOptions;\n"),
        ("i18n.rs", ""),
    ]);
    assert_eq!(
        said,
        ["src/device.rs:1: `emcf_sim::start_on_pty` names emcf_sim, which device may not name: the port"]
    );
}
