//! Restores (docs/backup.md, "Restoring"), in the `backup` module: a restore refused over
//! a register the copy does not hold entirely, and kept aside with `--force`; a restore killed
//! half-way refused by every open until it is run again; `--config-in-place` writing only the
//! paths the configuration names.

use super::common::*;
use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn a_restore_over_a_register_the_copy_lacks_is_refused_without_force() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (sim, mut gateway, key) = certified_once(dir.path(), "A-1").await;
    let copy = tokio::task::block_in_place(|| backup(dir.path(), &gateway.config, &[]));
    let copy_text = copy.to_str().expect("utf-8").to_string();
    for rn in ["A-2", "A-3"] {
        let answer = post_invoice(gateway.addr, &key, &invoice(rn)).await;
        assert_eq!(answer.status, 200, "{}", answer.body);
    }
    let config_path = gateway.config.clone();

    // While the service runs: refused, nothing touched.
    let out = cli(
        dir.path(),
        &config_path,
        &["restore", &copy_text, "--force"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains(&nbsp("le service tourne")),
        "{}",
        stderr_of(&out)
    );
    let before = tokio::task::block_in_place(|| verified(dir.path(), &config_path));
    assert!(gateway.terminate(), "clean exit");

    // Longer than the copy: what is lost is said, in French, with the next step; refused.
    let out = cli(dir.path(), &config_path, &["restore", &copy_text]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
    let said = stderr_of(&out);
    for words in [
        "Attention : le registre en place a 2 factures que la copie n'a pas",
        "Le boîtier (ses compteurs) ou la DGI peuvent détenir des factures certifiées après le",
        "« emcf-gateway device probe »",
        "relancez avec --force",
    ] {
        assert!(said.contains(&nbsp(words)), "{words:?} in:\n{said}");
    }
    assert_eq!(
        verified(dir.path(), &config_path),
        before,
        "nothing changed"
    );

    // A different register (not one the copy continues): refused too.
    let other = tempfile::tempdir().expect("tempdir");
    let other_config = other.path().join("config.toml");
    std::fs::write(&other_config, config(other.path(), &sim.link, 14, "")).expect("config");
    tokio::task::block_in_place(|| {
        add_org_with_key(other.path(), &other_config, "other-org", "shop", None)
    });
    let out = cli(other.path(), &other_config, &["restore", &copy_text]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
    assert!(stderr_of(&out).contains("--force"), "{}", stderr_of(&out));

    // With --force: done, and the register that was there is kept aside, not deleted.
    let out = cli(
        dir.path(),
        &config_path,
        &["restore", &copy_text, "--force"],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let after = verified(dir.path(), &config_path);
    assert_eq!(
        after["head_sha256"],
        manifest(&copy)["journal"]["head_sha256"]
    );
    assert_eq!(after["certified"], 1);
    let aside: Vec<PathBuf> = std::fs::read_dir(dir.path().join("state"))
        .expect("state")
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("before-restore-"))
        })
        .collect();
    assert_eq!(aside.len(), 1, "{aside:?}");
    let kept = aside[0].join("journal/journal.log");
    let kept_len = std::fs::metadata(&kept).expect("kept journal").len();
    assert!(
        kept_len
            > manifest(&copy)["journal"]["bytes"]
                .as_u64()
                .unwrap_or(u64::MAX)
    );
}

/// `restore` as `EMCF_FAILPOINTS=point` makes it: it dies there (as `kill -9` would).
fn restore_dying_at(dir: &Path, config: &Path, args: &[&str], point: &str) -> std::process::Output {
    std::process::Command::new(binary())
        .args(["--config", config.to_str().expect("utf-8"), "restore"])
        .args(args)
        .env("EMCF_CONFIG", "")
        .env("EMCF_FAILPOINTS", point)
        .current_dir(dir)
        .output()
        .expect("restore runs")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_restore_that_dies_midway_is_refused_by_every_open_until_it_is_redone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_sim, mut gateway, key) = certified_once(dir.path(), "R-1").await;
    let copy = tokio::task::block_in_place(|| backup(dir.path(), &gateway.config, &[]));
    let copy_text = copy.to_str().expect("utf-8").to_string();
    let answer = post_invoice(gateway.addr, &key, &invoice("R-2")).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let config_path = gateway.config.clone();
    assert!(gateway.terminate(), "clean exit");
    let state = dir.path().join("state");
    let register = std::fs::read(state.join("journal/journal.log")).expect("journal");

    // Dies once what was there is moved aside, before the copy is in place.
    let out = restore_dying_at(
        dir.path(),
        &config_path,
        &[&copy_text, "--force"],
        "restore_after_aside",
    );
    assert!(!out.status.success(), "{}", stderr_of(&out));
    assert!(state.join("restore-in-progress").is_file());
    assert!(
        !state.join("journal").exists(),
        "moved aside, nothing in place"
    );

    // Nothing opens it: not `log verify`, not `serve` (which would start a new register).
    let out = cli(dir.path(), &config_path, &["log", "verify"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
    let said = stderr_of(&out);
    for words in [
        "n'est pas allée au bout",
        "Relancez la même commande « emcf-gateway restore »",
    ] {
        assert!(said.contains(&nbsp(words)), "{words:?} in:\n{said}");
    }
    let (status, said) = serve_expecting_exit(dir.path(), &config_path, Duration::from_secs(30));
    assert!(!status.success());
    assert!(said.contains(&nbsp("n'est pas allée au bout")), "{said}");
    assert!(!state.join("journal").exists(), "no new register started");

    // Run again: the register that was there (2 invoices, moved aside by the dead run) is
    // still what the copy is compared with; with --force the restore is redone.
    let out = cli(dir.path(), &config_path, &["restore", &copy_text]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
    assert!(stderr_of(&out).contains("--force"), "{}", stderr_of(&out));
    let out = cli(
        dir.path(),
        &config_path,
        &["restore", &copy_text, "--force"],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("ne s'est pas terminée"),
        "{}",
        stderr_of(&out)
    );
    assert!(!state.join("restore-in-progress").exists());
    let after = verified(dir.path(), &config_path);
    assert_eq!(
        after["head_sha256"],
        manifest(&copy)["journal"]["head_sha256"]
    );
    assert_eq!(after["certified"], 1);
    let names: Vec<String> = std::fs::read_dir(&state)
        .expect("state")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !names.iter().any(|n| n.starts_with(".restore-")),
        "{names:?}"
    );
    let kept: Vec<Vec<u8>> = names
        .iter()
        .filter(|n| n.starts_with("before-restore-"))
        .filter_map(|n| std::fs::read(state.join(n).join("journal/journal.log")).ok())
        .collect();
    assert!(
        kept.contains(&register),
        "the register that was there is kept whole"
    );
}

#[test]
fn config_in_place_writes_only_the_paths_the_configuration_names() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config_path = dir.path().join("config.toml");
    let password = dir.path().join("smtp-password");
    std::fs::write(&password, "s3cret\n").expect("password");
    let smtp = format!(
        "[smtp]\nhost = \"127.0.0.1\"\nport = 9\nfrom = \"gw <gw@example.cd>\"\nusername = \"gw\"\npassword_file = {password:?}\ntls = \"none\"\n"
    );
    let text = config(dir.path(), Path::new("/dev/null"), 14, &smtp);
    std::fs::write(&config_path, &text).expect("config");
    add_org_with_key(dir.path(), &config_path, ORG, "shop", None);
    let copy = backup(dir.path(), &config_path, &[]);

    // Someone edits the copy's manifest: the password file "came from" another file.
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "keep me\n").expect("victim");
    let mut tampered = manifest(&copy);
    for file in tampered["files"].as_array_mut().expect("files") {
        if file["role"] == "secret" {
            file["original"] = Value::String(victim.to_str().expect("utf-8").to_string());
        }
    }
    std::fs::write(
        copy.join("manifest.json"),
        serde_json::to_vec_pretty(&tampered).expect("JSON"),
    )
    .expect("manifest");
    std::fs::write(&password, "changed\n").expect("password");

    let copy_text = copy.to_str().expect("utf-8").to_string();
    let out = cli(
        dir.path(),
        &config_path,
        &["restore", &copy_text, "--config-in-place"],
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let said = stderr_of(&out);
    assert!(said.contains(&nbsp("n'est pas remis à sa place")), "{said}");
    assert_eq!(
        std::fs::read_to_string(&victim).expect("victim"),
        "keep me\n",
        "a path only the manifest names is never written"
    );
    assert_eq!(std::fs::read_to_string(&password).expect("pw"), "changed\n");
    // The configuration file itself, which the configuration read is, is put back.
    assert_eq!(std::fs::read_to_string(&config_path).expect("config"), text);
    let kept = std::fs::read_dir(dir.path())
        .expect("dir")
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("config.toml.before-restore-")
        })
        .count();
    assert_eq!(kept, 1, "the file that was there is kept beside it");
}
