//! A new user following the README, and the setup mistakes a shop's IT person makes: the
//! first `serve` that cannot listen creates nothing (the demo keys cannot be lost), a later
//! start says how to get a key, the CLI run from the wrong folder does not look like an
//! empty system, `index rebuild` says what it did, and `org add`/`org update` refuse a device
//! that is not configured, a NIF the device is not personalized for, and a second
//! organization with the same NIF on the same device. Everything it says is in the reader's
//! language (French unless `--lang`, `EMCF_LANG` or the file's `language` says otherwise):
//! errors of every layer, `--help`, clap's refusals; the demo keys go to a terminal only.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

use common::{binary, nbsp, Gateway};

/// Runs the CLI in `dir` (no configuration file) with `args`, in `lang` (`""`: none said).
fn run_in(dir: &Path, lang: &str, args: &[&str]) -> Output {
    Command::new(binary())
        .args(args)
        .env("EMCF_CONFIG", "")
        .env("EMCF_STATE_DIR", "")
        .env("EMCF_LANG", lang)
        .current_dir(dir)
        .output()
        .expect("the CLI runs")
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn a_first_start_that_cannot_listen_creates_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let port = taken.local_addr().expect("addr").port();
    let listen = format!("127.0.0.1:{port}");
    let out = run_in(dir.path(), "en", &["serve", "--listen", &listen]);
    assert!(!out.status.success(), "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains(&format!(
            "error: cannot listen on {listen}: the address is already in use"
        )),
        "{said}"
    );
    // In French by default; the system's own words only as a detail.
    let said = text(&run_in(dir.path(), "", &["serve", "--listen", &listen]));
    let expected = nbsp(&format!(
        "erreur : impossible d'écouter sur {listen} : l'adresse est déjà utilisée"
    ));
    assert!(said.starts_with(&expected), "{said}");
    assert!(
        said.contains(&nbsp("(système : Address already in use")),
        "{said}"
    );
    assert!(
        !dir.path().join("emcf-state").exists(),
        "a start that could not listen created the state directory"
    );
}

/// `org add` of an organization `shop` on the bundled simulator.
const ADD_SHOP: [&str; 12] = [
    "org",
    "add",
    "--id",
    "shop",
    "--name",
    "Shop",
    "--nif",
    common::SIM_NIF,
    "--isf",
    "ISF-1",
    "--device",
    "embedded",
];

#[test]
fn every_error_is_in_the_reader_s_language() {
    let dir = tempfile::tempdir().expect("tempdir");
    assert!(run_in(dir.path(), "", &ADD_SHOP).status.success());
    let config = dir.path().join("english.toml");
    std::fs::write(&config, "language = \"en\"\n").expect("config");
    let config = config.to_string_lossy().to_string();
    for (args, lang, expected) in [
        (&["org", "show", "nope"][..], "", "erreur : aucune organisation « nope »"),
        (&["org", "show", "nope", "--lang", "en"], "", "error: no organization \"nope\""),
        (&["org", "show", "nope"], "en", "error: no organization \"nope\""),
        (&["--config", &config, "org", "show", "nope"], "", "error: no organization \"nope\""),
        (&["key", "disable", "nope"], "", "erreur : aucune clé API « nope »"),
        (&["key", "disable", "nope"], "en", "error: no API key \"nope\""),
        (&["log", "show", "99"], "", "erreur : aucune entrée n°\u{a0}99 dans le registre de production"),
        (&["org", "list", "--nope"], "", "erreur : argument inattendu --nope"),
        (&["log", "export", "--format", "xml"], "", "erreur : « xml » n'est pas une valeur possible pour --format <FORMAT> (valeurs possibles : csv, json)"),
        (&["log", "export", "--from", "hier"], "en", "error: \"hier\" is not a valid value for --from <FROM>: write a day as YYYY-MM-DD"),
        (&["--lang", "de", "org", "list"], "", "erreur : « de » n'est pas une valeur acceptée pour --lang <LANGUE> : la passerelle parle fr et en"),
        (&["org", "update", "shop", "--quota", "abc"], "", "erreur : « abc » n'est pas une valeur acceptée pour --quota <QUOTA> : un nombre entier est attendu"),
        (&["log", "show", "abc"], "en", "error: \"abc\" is not a valid value for [SEQUENCE]: a whole number is expected"),
        (&["intent", "resolve", "nope", "--by", "moi", "--not-certified"], "", "erreur : « nope » n'est pas une valeur acceptée pour <INTENTION> : un nombre entier est attendu (voir « emcf-gateway intent list »)"),
    ] {
        let out = run_in(dir.path(), lang, args);
        assert!(!out.status.success(), "{args:?}");
        let said = String::from_utf8_lossy(&out.stderr);
        let expected = if expected.starts_with("erreur") { nbsp(expected) } else { expected.to_owned() };
        assert!(said.starts_with(&expected), "{args:?} {lang}: {said}");
        assert!(!said.contains("Usage:") || lang == "en", "{said}");
    }
    // A broken configuration file: where, in our words; the parser's text marked as such.
    let broken = dir.path().join("broken.toml");
    std::fs::write(&broken, "max_connections = -1\n").expect("config");
    let broken = broken.to_string_lossy().to_string();
    let said = text(&run_in(
        dir.path(),
        "",
        &["--config", &broken, "org", "list"],
    ));
    assert!(said.contains(&nbsp("n'est pas valable, ligne 1, colonne 19, dans « max_connections = -1 » (message de l'analyseur TOML, en anglais :")), "{said}");
    let said = text(&run_in(
        dir.path(),
        "",
        &["--config", &broken, "--lang", "en", "org", "list"],
    ));
    assert!(said.starts_with("error: the configuration file"), "{said}");
    // --lang wins over the file's own language, for the file's errors too, and for serve.
    let french = dir.path().join("french.toml");
    std::fs::write(
        &french,
        "language = \"fr\"\n[[devices]]\nname = \"a\"\nkind = \"box\"\n",
    )
    .expect("config");
    let french = french.to_string_lossy().to_string();
    for command in ["org", "serve"] {
        let args: &[&str] = match command {
            "org" => &["--config", &french, "--lang", "en", "org", "list"],
            _ => &["--lang", "en", "serve", "--config", &french],
        };
        let said = text(&run_in(dir.path(), "", args));
        assert!(
            said.starts_with("error: invalid configuration (file ")
                && said.contains("is empty: give the serial port"),
            "{command}: {said}"
        );
    }
    let said = text(&run_in(
        dir.path(),
        "",
        &["--config", "/nonexistent/c.toml", "org", "list"],
    ));
    assert!(said.contains(&nbsp("impossible de lire le fichier de configuration /nonexistent/c.toml : fichier ou dossier introuvable")), "{said}");
    // What succeeds speaks the reader's language too.
    let verified = text(&run_in(dir.path(), "", &["log", "verify"]));
    assert!(
        verified.contains(&nbsp("journal vérifié : chaque CRC")),
        "{verified}"
    );
}

#[test]
fn help_follows_the_flag_the_environment_then_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let help = |lang: &str, args: &[&str]| {
        let out = run_in(dir.path(), lang, args);
        assert!(out.status.success(), "{args:?}: {}", text(&out));
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let file = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).expect("config");
        path.to_string_lossy().to_string()
    };
    let english = file("en.toml", "language = \"en\"\nmax_connections = -1\n");
    let garbage = file("garbage.toml", "language = \"en\n[[[");
    let french = [
        "Créer une organisation",
        "Utilisation",
        "--nif <NIF>",
        "Afficher l'aide",
        "(par défaut : start)",
    ];
    let english_words = [
        "Create an organization",
        "Usage:",
        "Print help",
        "(default: start)",
    ];
    for (lang, args, words) in [
        ("", &["org", "add", "--help"][..], &french[..]),
        (
            "",
            &["--lang", "en", "org", "add", "--help"],
            &english_words,
        ),
        ("en", &["org", "add", "--help"], &english_words),
        ("en", &["org", "add", "--help", "--lang", "fr"], &french),
        // The file's language, read even from a file the service would refuse.
        (
            "",
            &["--config", &english, "org", "add", "--help"],
            &english_words,
        ),
        // A file that is not TOML at all breaks nothing: French.
        ("", &["--config", &garbage, "org", "add", "--help"], &french),
        ("", &["help", "org", "add"], &french),
    ] {
        let shown = help(lang, args);
        for word in words {
            assert!(
                shown.contains(&nbsp(word)),
                "{args:?} {lang}: {word:?} in\n{shown}"
            );
        }
        for english_only in ["Print help", "Usage:", "Options:", "Commands:"] {
            assert!(
                words == english_words || !shown.contains(english_only),
                "{shown}"
            );
        }
    }
    assert!(help("", &["--help"]).contains(&nbsp("Commandes :")));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_later_start_says_how_to_get_a_demo_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut first = Gateway::start_demo(dir.path());
    assert!(
        first.banner_value("live key:").is_some(),
        "{:?}",
        first.banner
    );
    // Its output is not a terminal (as under systemd): the keys are in a file of its own,
    // whose path alone is printed, never in its output or its log.
    let keys_file = dir.path().join("state").join("demo-keys.txt");
    let printed = first
        .banner
        .iter()
        .position(|line| line.trim() == keys_file.to_string_lossy())
        .unwrap_or_else(|| panic!("the keys file is named: {:?}", first.banner));
    assert!(
        first.banner[..=printed]
            .iter()
            .all(|line| !line.contains("mcf_")),
        "{:?}",
        first.banner
    );
    assert!(first.banner[..printed]
        .iter()
        .any(|line| line.contains("fichier")));
    assert!(!first.log().contains("mcf_live_") && !first.log().contains("mcf_test_"));
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&keys_file)
        .expect("keys file")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    assert!(first.terminate(), "the first gateway stops");
    let second = Gateway::start_demo(dir.path());
    assert!(second.banner_value("live key:").is_none());
    // It says where the keys went: on the screen, or in that file when the output was not a
    // terminal (as here).
    assert!(
        second.banner.iter().any(|line| line.contains(&nbsp(&format!(
            "ses clés ont été données à son premier démarrage (à l'écran, ou dans {} si la sortie n'était pas un terminal)",
            keys_file.display()
        )))),
        "{:?}",
        second.banner
    );
    assert!(
        second
            .banner
            .iter()
            .any(|line| line.contains("emcf-gateway key issue --org demo")),
        "{:?}",
        second.banner
    );
}

#[test]
fn the_cli_in_a_folder_without_a_register_says_so_and_creates_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    for args in [
        &["org", "list"][..],
        &["org", "show", "demo"],
        &["log", "list"],
        &["key", "list", "--org", "demo"],
        &["log", "verify"],
        &["index", "rebuild"],
    ] {
        let out = run_in(dir.path(), "fr", args);
        assert!(!out.status.success(), "{args:?}: {}", text(&out));
        assert!(
            text(&out).contains("aucun registre dans ./emcf-state"),
            "{args:?}: {}",
            text(&out)
        );
        assert!(
            !dir.path().join("emcf-state").exists(),
            "{args:?} created it"
        );
    }
    let out = run_in(dir.path(), "en", &["org", "list"]);
    assert!(
        text(&out).contains("no register in ./emcf-state"),
        "{}",
        text(&out)
    );
}

#[test]
fn setup_mistakes_are_refused_at_once_and_not_found_fails() {
    let dir = tempfile::tempdir().expect("tempdir");
    let add = |id: &str, nif: &str, device: &str| {
        run_in(
            dir.path(),
            "en",
            &[
                "org", "add", "--id", id, "--name", "Shop", "--nif", nif, "--isf", "ISF-1",
                "--device", device,
            ],
        )
    };
    // No device configured: only the bundled simulator exists.
    let nosuch = add("shop", common::SIM_NIF, "nosuch");
    assert!(!nosuch.status.success());
    assert!(
        text(&nosuch).contains("no device \"nosuch\""),
        "{}",
        text(&nosuch)
    );
    assert!(text(&nosuch).contains("embedded"), "{}", text(&nosuch));
    // The simulator's NIF is known without the service.
    let wrong_nif = add("shop", "B9999999Z", "embedded");
    assert!(!wrong_nif.status.success());
    assert!(
        text(&wrong_nif).contains("code 153"),
        "{}",
        text(&wrong_nif)
    );
    let created = add("shop", common::SIM_NIF, "embedded");
    assert!(created.status.success(), "{}", text(&created));
    assert!(dir.path().join("emcf-state").exists());
    // The same id again is not an update in disguise.
    let again = add("shop", common::SIM_NIF, "embedded");
    assert!(!again.status.success());
    assert!(text(&again).contains("org update shop"), "{}", text(&again));
    // A second organization with the same NIF on the same device.
    let twin = add("twin", common::SIM_NIF, "embedded");
    assert!(!twin.status.success());
    assert!(text(&twin).contains("\"shop\""), "{}", text(&twin));
    // org update changes only what is given, with the same checks.
    let moved = run_in(
        dir.path(),
        "en",
        &["org", "update", "shop", "--device", "nosuch"],
    );
    assert!(!moved.status.success(), "{}", text(&moved));
    let renamed = run_in(
        dir.path(),
        "en",
        &[
            "org",
            "update",
            "shop",
            "--name",
            "Boutique Gombe",
            "--quota",
            "12500",
        ],
    );
    assert!(renamed.status.success(), "{}", text(&renamed));
    let shown = run_in(dir.path(), "fr", &["org", "show", "shop"]);
    let shown = text(&shown);
    assert!(shown.contains("Boutique Gombe"), "{shown}");
    assert!(shown.contains("12\u{202F}500"), "{shown}");
    let json = run_in(dir.path(), "en", &["org", "show", "shop", "--json"]);
    let value: serde_json::Value =
        serde_json::from_slice(&json.stdout).expect("org show --json prints JSON");
    assert_eq!(value["organization"]["name"], "Boutique Gombe");
    assert_eq!(value["organization"]["device"], "embedded");
    // Every "not found" fails.
    for args in [
        &["org", "show", "nosuch"][..],
        &["org", "update", "nosuch", "--name", "X"],
        &["log", "list", "--org", "nosuch"],
        &["key", "list", "--org", "nosuch"],
        &["key", "disable", "nosuch"],
    ] {
        let out = run_in(dir.path(), "en", args);
        assert!(!out.status.success(), "{args:?} succeeded: {}", text(&out));
    }
}

/// Issue 24: an organization's name is read in `org list`, on the dashboard and in the
/// subject and body of alert e-mails. A name that would forge lines there (CR, LF), reorder
/// them (U+202E), make a subject line too long for a relay (1,100 characters) or be decoded
/// by a mail client (`=?utf-8?q?...?=`) is refused, naming the field, and changes nothing.
#[test]
fn a_name_that_would_forge_a_line_or_an_e_mail_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let add = |name: &str| {
        run_in(
            dir.path(),
            "",
            &[
                "org",
                "add",
                "--id",
                "shop",
                "--name",
                name,
                "--nif",
                common::SIM_NIF,
                "--isf",
                "ISF-1",
                "--device",
                "embedded",
            ],
        )
    };
    let forged = "Evil\r\nBcc: victim@x.cd\r\n\r\nInjected body";
    let refused = add(forged);
    assert!(!refused.status.success(), "{}", text(&refused));
    assert_eq!(
        String::from_utf8_lossy(&refused.stderr).trim(),
        nbsp("erreur : le nom de l'organisation contient un retour chariot (U+000D) au caractère 5 : il doit tenir sur une ligne et se lire tel qu'il est écrit")
    );
    let listed = run_in(dir.path(), "en", &["org", "list", "--json"]);
    assert!(
        !String::from_utf8_lossy(&listed.stdout).contains("shop"),
        "nothing saved: {}",
        text(&listed)
    );
    let created = add("Boutique Gombe");
    assert!(created.status.success(), "{}", text(&created));
    let long = "A".repeat(1100);
    for (name, said) in [
        (forged, "contains a carriage return (U+000D) at character 5"),
        ("Shop\u{202E}lanigirO", "contains an invisible mark that changes the writing direction or breaks the line (U+202E) at character 5"),
        ("Shop\u{2028}Line", "contains an invisible mark that changes the writing direction or breaks the line (U+2028) at character 5"),
        ("Shop\tTab", "contains a tab (U+0009) at character 5"),
        (long.as_str(), "is 1100 characters long, 100 at most"),
        ("=?utf-8?q?Fake?=", "contains \"=?\", the start of an e-mail encoded word"),
    ] {
        let out = run_in(dir.path(), "en", &["org", "update", "shop", "--name", name]);
        assert!(!out.status.success(), "{name:?} accepted: {}", text(&out));
        let said_here = String::from_utf8_lossy(&out.stderr);
        assert!(
            said_here.contains(&format!("error: the organization's name {said}")),
            "{name:?}: {said_here}"
        );
    }
    let longest = "É".repeat(100);
    let renamed = run_in(
        dir.path(),
        "en",
        &["org", "update", "shop", "--name", &longest],
    );
    assert!(
        renamed.status.success(),
        "100 characters: {}",
        text(&renamed)
    );
    let shown = run_in(dir.path(), "en", &["org", "show", "shop", "--json"]);
    let value: serde_json::Value =
        serde_json::from_slice(&shown.stdout).expect("org show prints JSON");
    assert_eq!(value["organization"]["name"], longest.as_str());
    // The labels people read in key and token lists follow the same rule.
    for (args, said) in [
        (
            &["key", "issue", "--org", "shop", "--label", "till\n1"][..],
            "error: the key's label contains a line feed (U+000A) at character 5",
        ),
        (
            &[
                "dashboard-token",
                "issue",
                "--org",
                "shop",
                "--label",
                "Marie \u{202E}nimda",
            ],
            "error: the token's label contains an invisible mark",
        ),
    ] {
        let out = run_in(dir.path(), "en", args);
        assert!(!out.status.success(), "{args:?}: {}", text(&out));
        assert!(text(&out).contains(said), "{args:?}: {}", text(&out));
    }
    let keys = run_in(
        dir.path(),
        "en",
        &["key", "list", "--org", "shop", "--json"],
    );
    assert_eq!(
        String::from_utf8_lossy(&keys.stdout).trim(),
        "[]",
        "{}",
        text(&keys)
    );
}

#[test]
fn index_rebuild_says_what_it_did() {
    let dir = tempfile::tempdir().expect("tempdir");
    let created = run_in(dir.path(), "en", &ADD_SHOP);
    assert!(created.status.success(), "{}", text(&created));
    let healthy = run_in(dir.path(), "en", &["index", "rebuild"]);
    assert!(healthy.status.success(), "{}", text(&healthy));
    assert!(
        text(&healthy).contains("nothing to rebuild"),
        "{}",
        text(&healthy)
    );
    let forced = run_in(dir.path(), "en", &["index", "rebuild", "--force"]);
    assert!(forced.status.success(), "{}", text(&forced));
    assert!(text(&forced).contains("index rebuilt"), "{}", text(&forced));
    let aside = std::fs::read_dir(dir.path().join("emcf-state"))
        .expect("state")
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("index.sled.stale-")
        })
        .count();
    assert_eq!(aside, 1, "the old index is kept aside");
    let listed = run_in(dir.path(), "en", &["org", "list", "--json"]);
    let orgs: serde_json::Value = serde_json::from_slice(&listed.stdout).expect("JSON");
    assert_eq!(
        orgs[0]["id"], "shop",
        "the rebuilt index still knows the organization"
    );
}

#[test]
fn host_names_are_accepted_in_listen() {
    let dir = tempfile::tempdir().expect("tempdir");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let port = taken.local_addr().expect("addr").port();
    // The port is taken on purpose: the name must be resolved and the bind attempted.
    let out = run_in(
        dir.path(),
        "en",
        &["serve", "--listen", &format!("localhost:{port}")],
    );
    let said = text(&out);
    assert!(!said.contains("invalid socket address"), "{said}");
    assert!(said.contains(&format!(":{port}")), "{said}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_root_says_what_this_is_in_the_reader_s_language() {
    let dir = tempfile::tempdir().expect("tempdir");
    let gateway = Gateway::start_demo(dir.path());
    gateway.wait_ready().await;
    let french = common::request(gateway.addr, "GET", "/", &[], None).await;
    assert_eq!(french.status, 200, "{}", french.body);
    assert_eq!(
        french.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert!(french.body.contains("<html lang=\"fr\""), "{}", french.body);
    assert!(
        french
            .body
            .contains("La certification fonctionne en ce moment."),
        "{}",
        french.body
    );
    for link in ["/dashboard/", "/api/v1/openapi.yaml", "/api/v1/status"] {
        assert!(french.body.contains(&format!("href=\"{link}\"")), "{link}");
    }
    let english = common::request(
        gateway.addr,
        "GET",
        "/",
        &[("Accept-Language", "en-GB,en;q=0.9")],
        None,
    )
    .await;
    assert!(
        english.body.contains("<html lang=\"en\""),
        "{}",
        english.body
    );
    assert!(english.body.contains("Certification works right now."));
    let chosen = common::request(gateway.addr, "GET", "/?lang=en", &[], None).await;
    assert!(chosen.body.contains("<html lang=\"en\""), "{}", chosen.body);
    for path in ["/api/v1", "/api/v1/"] {
        let index = common::get(gateway.addr, path, None).await;
        assert_eq!(index.status, 200, "{path}: {}", index.body);
        assert_eq!(index.json["version"], "1.0");
        assert_eq!(index.json["links"]["invoice"], "/api/v1/Invoice");
    }
    let refused = common::request(gateway.addr, "POST", "/", &[], Some(b"{}")).await;
    assert_eq!(refused.status, 405, "{}", refused.body);
}

/// A pseudo-terminal: (master, slave).
fn pty() -> (std::fs::File, std::fs::File) {
    use std::os::fd::FromRawFd;
    let (mut master, mut slave) = (0, 0);
    // SAFETY: openpty writes two new descriptors into the two integers; null name, termios
    // and window size are allowed. Each descriptor is owned by exactly one File below.
    let status = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(status, 0, "openpty");
    // SAFETY: both descriptors were just opened and are not owned elsewhere.
    unsafe {
        (
            std::fs::File::from_raw_fd(master),
            std::fs::File::from_raw_fd(slave),
        )
    }
}

#[test]
fn on_a_terminal_the_demo_keys_are_printed_and_no_file_is_written() {
    use std::io::Read;
    let dir = tempfile::tempdir().expect("tempdir");
    let state = dir.path().join("state");
    let (mut master, slave) = pty();
    let mut child = Command::new(binary())
        .args([
            "--state-dir",
            &state.to_string_lossy(),
            "serve",
            "--listen",
            "127.0.0.1:0",
        ])
        .env("EMCF_CONFIG", "")
        .env("EMCF_LANG", "")
        .current_dir(dir.path())
        .stdout(slave)
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("gateway starts");
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut seen = String::new();
        let mut buffer = [0u8; 4096];
        while let Ok(n) = master.read(&mut buffer) {
            if n == 0 {
                break;
            }
            seen.push_str(&String::from_utf8_lossy(&buffer[..n]));
            if seen.contains("emcf-gateway key issue") {
                break;
            }
        }
        let _ = sender.send(seen);
    });
    let seen = receiver
        .recv_timeout(std::time::Duration::from_secs(30))
        .unwrap_or_default();
    let _ = child.kill();
    let _ = child.wait();
    assert!(seen.contains("live key: mcf_live_"), "{seen}");
    assert!(seen.contains("sandbox key: mcf_test_"), "{seen}");
    assert!(seen.contains("notez-les maintenant"), "{seen}");
    assert!(!state.join("demo-keys.txt").exists());
}

/// The packaged configuration (`demo = false`, no `[[devices]]`): the installed service runs
/// no simulator and creates no demo organization; it serves its landing page, `status` false
/// with the reason and the next step (French first), invoices 503 (157) with `Retry-After`, and
/// the dashboard says the same. Adding the device is the way out: the same state directory
/// then certifies.
#[tokio::test(flavor = "multi_thread")]
async fn without_a_device_and_demo_off_it_says_what_to_do() {
    let dir = tempfile::tempdir().expect("tempdir");
    let state = dir.path().join("state");
    let config = format!("demo = false\nstate_dir = {state:?}\nlisten = \"127.0.0.1:0\"\n");
    let mut gateway = Gateway::start(dir.path(), &config);
    let file = dir.path().join("config.toml").display().to_string();
    let french_reason = nbsp(&format!(
        "aucun appareil configuré : cette passerelle ne certifie aucune facture. Prochaine étape : nommez le boîtier e-MCF dans {file} (un bloc [[devices]]"
    ));
    let status = common::get(gateway.addr, "/api/v1/status", None).await;
    assert_eq!(status.status, 200, "{}", status.body);
    assert_eq!(status.json["status"], false, "{}", status.body);
    let reason = status.json["reason"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        reason.starts_with(&french_reason) && reason.contains("systemctl restart emcf-gateway"),
        "{reason}"
    );
    let english = common::request(
        gateway.addr,
        "GET",
        "/api/v1/status",
        &[("Accept-Language", "en")],
        None,
    )
    .await;
    assert!(
        english.json["reason"]
            .as_str()
            .is_some_and(|r| r.starts_with("no device configured: this gateway certifies no invoice. Next step: name the e-MCF box in")),
        "{}",
        english.body
    );
    // Invoices: the outage shape, a retry later (no key can exist: no organization).
    let refused =
        common::post_invoice(gateway.addr, "mcf_live_nothing", &common::invoice("R-1")).await;
    common::assert_error(&refused, 503, 157);
    assert_eq!(
        refused.header("retry-after"),
        Some("60"),
        "{}",
        refused.body
    );
    assert!(
        refused.json["errorDesc"]
            .as_str()
            .is_some_and(|d| d.starts_with(&french_reason)),
        "{}",
        refused.body
    );
    // The landing page and the dashboard say it to a person.
    let landing = common::get(gateway.addr, "/", None).await;
    assert_eq!(landing.status, 200);
    assert!(landing.body.contains("id=\"reason\""), "{}", landing.body);
    assert!(
        landing.body.contains("aucun appareil configuré"),
        "{}",
        landing.body
    );
    let dashboard = common::get(gateway.addr, "/dashboard/", None).await;
    assert_eq!(dashboard.status, 503, "{}", dashboard.body);
    assert!(
        dashboard.body.contains("aucun appareil configuré"),
        "{}",
        dashboard.body
    );
    // No simulator, no demo organization, no keys: nothing was created in the register.
    assert!(
        !gateway.banner.iter().any(|line| line.contains("demo")),
        "{:?}",
        gateway.banner
    );
    assert!(!state.join("demo-keys.txt").exists());
    assert!(!state.join("simulator").exists());
    assert!(gateway.terminate(), "it stops on SIGTERM");
    let orgs = common::cli(
        dir.path(),
        &dir.path().join("config.toml"),
        &["org", "list"],
    );
    assert!(
        !String::from_utf8_lossy(&orgs.stdout).contains("demo"),
        "{}",
        text(&orgs)
    );
    // Naming a device is the way out: the same state directory certifies on it.
    let sim = common::Sim::start(dir.path()).await;
    let with_device = format!(
        "demo = false\n{}",
        common::config_with_device(dir.path(), &sim.link)
    );
    let gateway = Gateway::start(dir.path(), &with_device);
    gateway.wait_ready().await;
    let status = common::get(gateway.addr, "/api/v1/status", None).await;
    assert!(status.json.get("reason").is_none(), "{}", status.body);
}
