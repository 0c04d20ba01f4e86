use super::*;
use std::collections::BTreeSet;

/// Every help id the clap tree asks for (commands, arguments, placeholders).
fn wanted(command: &Command, path: &[&str], out: &mut BTreeSet<String>) {
    out.insert(about_id(path));
    for arg in command.get_arguments() {
        let id = arg.get_id().as_str();
        if id == "help" || id == "version" {
            continue;
        }
        out.insert(arg_id(path, id));
        if arg.get_action().takes_values() {
            for name in arg.get_value_names().into_iter().flatten() {
                out.insert(value_id(name));
            }
        }
    }
    for sub in command.get_subcommands() {
        let mut path = path.to_vec();
        path.push(sub.get_name());
        wanted(sub, &path, out);
    }
}

#[test]
fn every_command_argument_and_placeholder_has_its_help_in_both_languages() {
    let mut ids = BTreeSet::new();
    wanted(&Cli::command(), &[], &mut ids);
    assert!(ids.len() > 100, "{ids:?}");
    let mut missing = Vec::new();
    for id in &ids {
        for lang in Lang::ALL {
            if !catalogue::has(lang, id) {
                missing.push(format!("{id} ({lang})"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "help texts missing:\n{}",
        missing.join("\n")
    );
    // And every help text of the catalogue is one the tree asks for.
    let (_, fr, _) = catalogue::FILES
        .iter()
        .find(|(name, _, _)| *name == "help.ftl")
        .expect("help.ftl is registered");
    let fixed = [
        "help-usage",
        "help-commands",
        "help-value-command",
        "help-print-help",
        "help-print-version",
        "help-help",
        "help-help-command",
        "help-possible-values",
        "help-default",
        "help-options",
        "help-arguments",
    ];
    let unused: Vec<String> = catalogue::outline(fr)
        .expect("help.ftl parses")
        .into_keys()
        .filter(|id| id.starts_with("help") && !ids.contains(id))
        .filter(|id| !fixed.contains(&id.as_str()))
        .collect();
    assert!(unused.is_empty(), "help texts no command uses: {unused:?}");
}

#[test]
fn help_is_in_the_language_asked() {
    for (lang, about, heading) in [
        (Lang::Fr, "Créer une organisation", "Utilisation"),
        (Lang::En, "Create an organization", "Usage"),
    ] {
        let mut command = command(lang);
        let add = command
            .find_subcommand_mut("org")
            .and_then(|org| org.find_subcommand_mut("add"))
            .expect("org add");
        let help = add.render_help().to_string();
        assert!(help.contains(about), "{lang}: {help}");
        assert!(help.contains(heading), "{lang}: {help}");
    }
    let help = command(Lang::Fr).render_help().to_string();
    assert!(
        help.contains("Commandes") && help.contains("Afficher l'aide"),
        "{help}"
    );
    assert!(
        !help.contains("Print help") && !help.contains("Commands:"),
        "{help}"
    );
}

#[test]
fn clap_s_errors_are_said_in_the_language_asked() {
    let refuse = |lang: Lang, args: &[&str]| {
        let error = command(lang)
            .try_get_matches_from(args)
            .expect_err("refused");
        usage_error(&error, lang)
    };
    let fr = refuse(Lang::Fr, &["emcf-gateway", "org", "list", "--nope"]);
    assert!(fr.contains("--nope") && fr.contains("inattendu"), "{fr}");
    assert!(!fr.contains("unexpected"), "{fr}");
    let en = refuse(Lang::En, &["emcf-gateway", "org", "list", "--nope"]);
    assert!(en.contains("--nope") && en.contains("unexpected"), "{en}");
    let fr = refuse(
        Lang::Fr,
        &["emcf-gateway", "log", "export", "--format", "xml"],
    );
    assert!(fr.contains("xml") && fr.contains("csv, json"), "{fr}");
    let fr = refuse(Lang::Fr, &["emcf-gateway", "org", "add", "--id", "x"]);
    assert!(fr.contains("--name"), "{fr}");
    let fr = refuse(Lang::Fr, &["emcf-gateway", "key", "list", "--org"]);
    assert!(fr.contains("--org <ORG> attend une valeur"), "{fr}");
    let fr = refuse(
        Lang::Fr,
        &["emcf-gateway", "key", "list", "--org", "a", "--org", "b"],
    );
    assert!(
        fr.contains("--org <ORG> ne peut être donné qu'une fois"),
        "{fr}"
    );
    let fr = refuse(
        Lang::Fr,
        &["emcf-gateway", "log", "export", "--from", "hier"],
    );
    assert!(fr.contains("hier") && fr.contains("AAAA-MM-JJ"), "{fr}");
    // A number that is not one says what is expected; an intent's id, where to find it.
    let fr = refuse(
        Lang::Fr,
        &["emcf-gateway", "org", "update", "demo", "--quota", "abc"],
    );
    assert!(
        fr.contains(&crate::i18n::nbsp(
            "« abc » n'est pas une valeur acceptée pour --quota <QUOTA> : un nombre entier est attendu"
        )),
        "{fr}"
    );
    let fr = refuse(Lang::Fr, &["emcf-gateway", "log", "show", "abc"]);
    assert!(
        fr.contains(&crate::i18n::nbsp(" : un nombre entier est attendu")),
        "{fr}"
    );
    let fr = refuse(Lang::Fr, &["emcf-gateway", "intent", "resolve", "nope"]);
    assert!(
        fr.contains(&crate::i18n::nbsp(
            "« nope » n'est pas une valeur acceptée pour <INTENTION> : un nombre entier est attendu (voir « emcf-gateway intent list »)"
        )),
        "{fr}"
    );
    let en = refuse(
        Lang::En,
        &[
            "emcf-gateway",
            "log",
            "list",
            "--after",
            "99999999999999999999999",
        ],
    );
    assert!(
        en.contains("--after <AFTER>: this number is too large"),
        "{en}"
    );
    let en = refuse(
        Lang::En,
        &[
            "emcf-gateway",
            "device",
            "anomalies",
            "ack",
            "x",
            "--by",
            "a",
            "--note",
            "b",
        ],
    );
    assert!(
        en.contains("a whole number is expected (see \"emcf-gateway device anomalies list\")"),
        "{en}"
    );
}

#[test]
fn the_language_comes_from_the_flag_the_environment_then_the_file() {
    let args = |list: &[&str]| list.iter().map(OsString::from).collect::<Vec<_>>();
    assert_eq!(early_lang(&args(&["x", "--lang", "en", "org"])), Lang::En);
    assert_eq!(early_lang(&args(&["x", "org", "--lang=en"])), Lang::En);
    assert_eq!(early_lang(&args(&["x", "--", "--lang", "en"])), Lang::Fr);
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("c.toml");
    std::fs::write(&file, "language = \"en\"\nbroken = [").expect("written");
    assert_eq!(Config::file_language(Some(&file), Vec::new()), None);
    std::fs::write(&file, "language = \"en\"\nmax_connections = -1\n").expect("written");
    assert_eq!(
        Config::file_language(Some(&file), Vec::new()),
        Some(Lang::En)
    );
}
