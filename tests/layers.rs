//! The layer rules of ARCHITECTURE.md, checked on the source: each module of `src/` names
//! (in a `use`, however rustfmt wraps it, or inline in code, a type, a pattern or a macro's
//! arguments) only the modules its layer is allowed to depend on, and the ruled crates
//! (`mcf_sfe`, `edef`, `sled`, `emcf_sim`) only where they belong.
//!
//! The sources are parsed with `syn`, from `src/lib.rs` and `src/main.rs` down every `mod`
//! (`#[path]` included, inline `mod x { .. }` too); `crate::`, `super::`, `self::` and a child
//! module's name are resolved to the module they name. Every `.rs` file under `src/` must be
//! reached, every module must have a rule: nothing is exempt. A broken rule fails naming the
//! file, the line, the path and the rule.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

#[path = "layers/reader.rs"]
mod reader;
#[path = "layers/self_test.rs"]
mod self_test;
#[path = "layers/tree.rs"]
mod tree;

use reader::{broken, read_crate, unit_of};

/// The crates outside this one that a rule may allow or forbid: the protocols (`mcf_sfe`,
/// `edef`), the index's database (`sled`) and the bundled simulator (`emcf_sim`). Other crates
/// (std, tokio, serde, hyper, ...) are not ruled.
const RULED_CRATES: &[&str] = &["mcf_sfe", "edef", "sled", "emcf_sim"];

/// The channels' folders under `src/certify/`, each a unit of its own (the box channel, the
/// web API channel). Renamed folders are renamed here and in the rules' unit names (a rule
/// for a unit that does not exist fails).
const CHANNEL_FOLDERS: &[&str] = &["box_channel", "web_api_channel"];

/// A unit and what it may name. A unit is a top-level module of `src/`, except inside
/// `certify`, where each channel is a unit of its own: `certify/box_channel` (the box channel) and
/// `certify/web_api_channel` (the web API channel); `certify` is the rest of it. `lib` is `src/lib.rs`,
/// `main` the binary's `src/main.rs`.
struct Rule {
    unit: &'static str,
    /// The units and ruled crates it may name, separated by spaces.
    may_name: &'static str,
    why: &'static str,
}

impl Rule {
    /// The units and crates it may name.
    fn allowed(&self) -> impl Iterator<Item = &'static str> {
        self.may_name.split_whitespace()
    }

    /// Whether it may name `unit`.
    fn allows(&self, unit: &str) -> bool {
        self.allowed().any(|name| name == unit)
    }
}

/// Each unit's allowed dependencies (an allow-list: anything else it names fails). Below
/// everything, naming nothing: `arrivals`, `markup`, `atomic_file`, `failpoint`, `notify`,
/// `http_body`, `sync`, `http_request`.
const RULES: &[Rule] = &[
    Rule {
        unit: "lib",
        may_name: "",
        why: "the crate's root declares the modules and re-exports nothing",
    },
    Rule {
        unit: "main",
        may_name: "cli",
        why: "the binary hands everything to the CLI (anyhow at the edge)",
    },
    Rule {
        unit: "cli",
        may_name: "config api dashboard alerts admin certify device store notices \
              metrics keys receipt qr i18n model markup http_body arrivals \
              atomic_file failpoint notify emcf_sim sync",
        why: "the CLI is the edge: it reads the configuration and wires every layer (the \
              bundled simulator included); it builds the channels through certify and speaks \
              no protocol itself",
    },
    Rule {
        unit: "config",
        may_name: "alerts dashboard certify device store http_body i18n model \
              mcf_sfe edef",
        why: "the configuration is at the edge with the CLI, and only the CLI names it: it \
              reads and checks the operator's file and turns it into each layer's own \
              settings (device::DeviceConfig, certify::WebApiSettings, http_body::BodyLimits, \
              alerts::AlertSettings, dashboard::TrustedProxies), so that no layer depends on \
              the file's shape and each keeps its defaults",
    },
    Rule {
        unit: "api",
        may_name: "certify admin dashboard notices metrics receipt qr i18n model \
              markup http_body sync http_request",
        why: "the HTTP layer talks to certify and admin (never the device, the store, a \
              protocol or the configuration's file) and hands /dashboard to the dashboard",
    },
    Rule {
        unit: "dashboard",
        may_name: "certify admin alerts notices metrics receipt qr i18n model \
              markup http_body atomic_file sync http_request",
        why: "the HTML layer talks to certify and admin (never the device, the store, a \
              protocol or the configuration's file), and shows the alerts' banners",
    },
    Rule {
        unit: "alerts",
        may_name: "certify admin notices metrics i18n model atomic_file sync",
        why: "alerts watch through certify and admin, and are shown by the dashboard, never \
              the reverse",
    },
    Rule {
        unit: "admin",
        may_name: "store certify keys notices i18n model atomic_file failpoint sync",
        why: "administration works on the store, whatever the channel: of certify it names \
              only the rules of what an administrator types (a settlement, an amount's limit)",
    },
    Rule {
        unit: "certify",
        may_name: "certify/box_channel certify/web_api_channel store keys metrics arrivals i18n model \
              failpoint sync",
        why: "the use case sees a Channel: only its channels know how an invoice travels \
              (certify/box_channel the box: device and mcf_sfe; certify/web_api_channel the web API: edef)",
    },
    Rule {
        unit: "certify/box_channel",
        may_name: "certify device mcf_sfe metrics arrivals i18n model failpoint sync",
        why: "the box channel: the only part of certify that knows the device and MCF-SFE; \
              it writes through certify's journal, and knows nothing of the web API channel",
    },
    Rule {
        unit: "certify/web_api_channel",
        may_name: "certify edef metrics arrivals i18n model failpoint sync",
        why: "the web API channel: the only part of certify that knows the DGI's web API; it \
              writes through certify's journal, and knows nothing of the box or its protocol",
    },
    Rule {
        unit: "device",
        may_name: "mcf_sfe metrics arrivals i18n model sync",
        why: "the port's owner knows frames and the link, not invoices or the register",
    },
    Rule {
        unit: "store",
        may_name: "sled i18n model atomic_file failpoint sync",
        why: "the register knows records, not who writes them; the only user of sled",
    },
    Rule {
        unit: "model",
        may_name: "",
        why: "plain data shared by all: i18n names model (the names of its codes), not the \
              reverse",
    },
    Rule {
        unit: "i18n",
        may_name: "model",
        why: "the catalogue is used by every layer and names none of them (errors say their \
              message through i18n::Localized, next to their type)",
    },
    Rule {
        unit: "receipt",
        may_name: "qr i18n model markup",
        why: "the printable fiscal block is drawn from a register entry alone, for api and \
              dashboard",
    },
    Rule {
        unit: "qr",
        may_name: "markup",
        why: "the QR code of a register entry's text, for receipts, api and dashboard",
    },
    Rule {
        unit: "notices",
        may_name: "i18n atomic_file sync",
        why: "change notices are a state file of their own, read by admin, alerts, api and \
              dashboard",
    },
    Rule {
        unit: "metrics",
        may_name: "mcf_sfe sync",
        why: "the Prometheus text is fed by the layers and names none of them (of the box's \
              protocol, only the command names its labels carry)",
    },
    Rule {
        unit: "keys",
        may_name: "model",
        why: "the API key format: plain data and a check",
    },
    Rule {
        unit: "http_body",
        may_name: "",
        why: "reading a request body under limits, below api and dashboard",
    },
    Rule {
        unit: "arrivals",
        may_name: "",
        why: "a place in a channel's arrival order, below device and certify",
    },
    Rule {
        unit: "markup",
        may_name: "",
        why: "one HTML escape, below every page",
    },
    Rule {
        unit: "atomic_file",
        may_name: "",
        why: "one write-fsync-rename, below every state file",
    },
    Rule {
        unit: "failpoint",
        may_name: "",
        why: "the crash harness's abort points, below every layer",
    },
    Rule {
        unit: "sync",
        may_name: "",
        why: "one poison-tolerant mutex lock, below every layer",
    },
    Rule {
        unit: "http_request",
        may_name: "",
        why: "one query-string reader, percent-decoder and header reader, below api and \
              dashboard",
    },
    Rule {
        unit: "notify",
        may_name: "",
        why: "a wake-up signal, below every layer",
    },
];

/// What code under `#[cfg(test)]` may name besides its unit's rule: the bundled simulator,
/// as the box of the unit tests beside the code.
const TESTS_MAY_ALSO_NAME: &[&str] = &["emcf_sim"];

/// Violations a change in progress is removing, each (file, or folder ending in `/`, under
/// `src/`; what it names), for a branch that cannot fix another owner's file yet. Empty on
/// main; an entry that no longer matches anything fails, so none outlives its violation.
const TEMPORARY_ALLOWANCES: &[(&str, &str)] = &[];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn each_layer_names_only_what_its_rule_allows() {
    let (references, files, problems) = read_crate(&src());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(files.len() > 200, "only {} files read", files.len());
    let (said, stale) = broken(&references, RULES, TEMPORARY_ALLOWANCES);
    assert!(
        said.is_empty() && stale.is_empty(),
        "layer rules broken:\n{}",
        said.into_iter().chain(stale).collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn every_module_has_a_rule_and_every_rule_names_real_units() {
    let (_, files, problems) = read_crate(&src());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let units: BTreeSet<String> = files.iter().map(|f| unit_of(&f.module)).collect();
    let ruled: BTreeSet<String> = RULES.iter().map(|r| r.unit.to_owned()).collect();
    let missing: Vec<&String> = units.difference(&ruled).collect();
    assert!(missing.is_empty(), "modules without a rule: {missing:?}");
    let gone: Vec<&String> = ruled.difference(&units).collect();
    assert!(
        gone.is_empty(),
        "rules for modules that do not exist: {gone:?}"
    );
    for rule in RULES {
        for name in rule.allowed() {
            assert!(
                units.contains(name) || RULED_CRATES.contains(&name),
                "the rule of {} allows {name}, which is neither a unit nor a ruled crate",
                rule.unit
            );
            assert_ne!(name, rule.unit, "the rule of {} allows itself", rule.unit);
        }
    }
    for (file, target) in TEMPORARY_ALLOWANCES {
        assert!(
            file.starts_with("certify/"),
            "a temporary allowance is for certify only: {file} names {target}"
        );
    }
}
