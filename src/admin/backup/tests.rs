use std::path::Path;

use chrono::{Duration, TimeZone, Utc};

use super::*;
use crate::model::Environment;
use crate::store::tests::{certify, seeded};

/// A plan for a state directory whose store this test holds open (as a running service
/// would): nothing is being written, so the journal is durable to its end.
fn plan(state: &Path, dest: &Path, keep: u32) -> BackupPlan {
    let durable = std::fs::metadata(crate::store::journal_path(state)).map(|m| m.len());
    BackupPlan {
        state_dir: state.to_path_buf(),
        config_file: None,
        named_files: Vec::new(),
        dest: dest.to_path_buf(),
        keep,
        durable: Some(durable.unwrap()),
    }
}

/// A copy into `dest` of the state directory `state` with one certification, and of its
/// configuration `config` (written: `language = "fr"`) naming the files `named`; the store is
/// closed again.
fn copy_with_config(
    state: &Path,
    dest: &Path,
    config: &Path,
    named: &[std::path::PathBuf],
) -> Taken {
    let store = seeded(state);
    certify(&store, "demo", Environment::Production, "FN-1", 2026);
    std::fs::write(config, "language = \"fr\"\n").unwrap();
    let mut with_config = plan(state, dest, 14);
    with_config.config_file = Some(config.to_path_buf());
    with_config.named_files = named.to_vec();
    let copy = take(&with_config, Utc::now()).unwrap();
    drop(store);
    copy
}

#[test]
fn keeps_the_last_n_good_copies_and_nothing_else_is_touched() {
    let state = tempfile::tempdir().unwrap();
    let dest = tempfile::tempdir().unwrap();
    let store = seeded(state.path());
    certify(&store, "demo", Environment::Production, "FN-1", 2026);
    // Not ours: a file, a folder of another name, a folder of our name without a manifest.
    std::fs::write(dest.path().join("notes.txt"), "mine").unwrap();
    std::fs::create_dir(dest.path().join("emcf-backup-old-by-hand")).unwrap();
    std::fs::create_dir(dest.path().join("emcf-backup-20200101T000000Z")).unwrap();
    // A run that died half-way.
    std::fs::create_dir_all(
        dest.path()
            .join(".emcf-backup-tmp-20261101T010000Z-7/state"),
    )
    .unwrap();
    let start = Utc.with_ymd_and_hms(2026, 11, 1, 2, 0, 0).unwrap();
    let mut taken = Vec::new();
    for day in 0..5 {
        let copy = take(
            &plan(state.path(), dest.path(), 3),
            start + Duration::days(day),
        )
        .unwrap();
        taken.push(copy.dir);
    }
    let mut names: Vec<String> = std::fs::read_dir(dest.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            ".emcf-backup.lock",
            "emcf-backup-20200101T000000Z",
            "emcf-backup-20261103T020000Z",
            "emcf-backup-20261104T020000Z",
            "emcf-backup-20261105T020000Z",
            "emcf-backup-old-by-hand",
            "notes.txt"
        ]
    );
    let last = LastBackup::read(state.path()).unwrap().unwrap();
    assert_eq!(last.path, taken[4]);
    assert_eq!(last.entries, 1);
    drop(store);
}

#[test]
fn a_changed_file_or_journal_fails_the_check() {
    let state = tempfile::tempdir().unwrap();
    let dest = tempfile::tempdir().unwrap();
    let store = seeded(state.path());
    certify(&store, "demo", Environment::Production, "FN-1", 2026);
    std::fs::write(state.path().join("alerts.json"), "{}").unwrap();
    let copy = take(&plan(state.path(), dest.path(), 14), Utc::now()).unwrap();
    assert!(verify(&copy.dir).is_ok());
    std::fs::write(copy.dir.join("state/alerts.json"), "{ }").unwrap();
    assert!(verify(&copy.dir).is_err(), "a file changed");
    std::fs::write(copy.dir.join("state/alerts.json"), "{}").unwrap();
    let journal = Manifest::journal_in(&copy.dir);
    let mut bytes = std::fs::read(&journal).unwrap();
    let last = bytes.len() - 3;
    bytes[last] ^= 1;
    std::fs::write(&journal, bytes).unwrap();
    assert!(verify(&copy.dir).is_err(), "the journal changed");
    drop(store);
}

#[test]
fn two_state_directories_sharing_a_destination_keep_their_own_copies() {
    let (one, two) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let dest = tempfile::tempdir().unwrap();
    let stores = [seeded(one.path()), seeded(two.path())];
    let start = Utc.with_ymd_and_hms(2026, 11, 1, 2, 0, 0).unwrap();
    let first_two = take(&plan(two.path(), dest.path(), 1), start).unwrap();
    let mut last_one = None;
    for day in 1..3 {
        let at = start + Duration::days(day);
        last_one = Some(take(&plan(one.path(), dest.path(), 1), at).unwrap());
    }
    let last_one = last_one.unwrap();
    assert!(
        first_two.dir.is_dir(),
        "the other state directory's copy is its own"
    );
    assert_eq!(last_one.removed.len(), 1, "its own older copy went");
    let later = take(&plan(two.path(), dest.path(), 1), start + Duration::days(4)).unwrap();
    assert!(last_one.dir.is_dir() && later.dir.is_dir() && !first_two.dir.exists());
    drop(stores);
}

#[test]
fn a_copy_stops_at_the_durable_length_or_holds_the_state_lock() {
    let state = tempfile::tempdir().unwrap();
    let dest = tempfile::tempdir().unwrap();
    let store = seeded(state.path());
    certify(&store, "demo", Environment::Production, "FN-1", 2026);
    let durable = store.durable_journal().unwrap();
    certify(&store, "demo", Environment::Production, "FN-2", 2026);
    // What the service said before FN-2 was fsynced: FN-2 is not in the copy.
    let mut early = plan(state.path(), dest.path(), 14);
    early.durable = Some(durable.bytes);
    let copy = take(&early, Utc::now()).unwrap();
    assert_eq!(copy.manifest.journal.head_sha256, durable.head_sha256);
    assert_eq!(copy.manifest.journal.entries_total, 1);
    // No service answered: the state directory's lock is taken, refused while held.
    let mut stopped = plan(state.path(), dest.path(), 14);
    stopped.durable = None;
    assert!(
        take(&stopped, Utc::now()).is_err(),
        "a process holds the lock"
    );
    drop(store);
    let copy = take(&stopped, Utc::now() + Duration::seconds(1)).unwrap();
    assert_eq!(copy.manifest.journal.entries_total, 2);
}

#[test]
fn copy_names() {
    assert!(is_copy_name("emcf-backup-20261126T020000Z"));
    assert!(is_copy_name("emcf-backup-20261126T020000Z-2"));
    assert!(!is_copy_name("emcf-backup-20261126T020000Z-"));
    assert!(!is_copy_name("emcf-backup-2026112T020000Z"));
    assert!(!is_copy_name(".emcf-backup-tmp-20261126T020000Z-1"));
    assert!(!is_copy_name("emcf-backup-20261126T020000Z.old"));
    // A folder named by hand with a character of several bytes at or around the 16th byte.
    assert!(!is_copy_name("emcf-backup-202611260200000é"));
    assert!(!is_copy_name("emcf-backup-20261126T02000é"));
    assert!(!is_copy_name("emcf-backup-20261126T020000Zé"));
}

#[test]
fn a_destination_inside_the_state_directory_is_refused() {
    let state = tempfile::tempdir().unwrap();
    let store = seeded(state.path());
    let inside = state.path().join("backups");
    let refused = take(&plan(state.path(), &inside, 14), Utc::now());
    assert!(
        matches!(refused, Err(AdminError::Invalid(_))),
        "{refused:?}"
    );
    drop(store);
}

#[test]
fn the_configuration_comes_back_beside_the_state_or_in_place_with_its_modes() {
    use std::os::unix::fs::PermissionsExt;
    let state = tempfile::tempdir().unwrap();
    let dest = tempfile::tempdir().unwrap();
    let etc = tempfile::tempdir().unwrap();
    let config = etc.path().join("config.toml");
    let token = etc.path().join("dgi.token");
    std::fs::write(&token, "secret\n").unwrap();
    std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o640)).unwrap();
    let copy = copy_with_config(
        state.path(),
        dest.path(),
        &config,
        std::slice::from_ref(&token),
    );

    // On a fresh state directory: beside it, modes kept, /etc untouched.
    std::fs::write(&token, "changed\n").unwrap();
    let fresh = tempfile::tempdir().unwrap();
    let restore = Restore::begin(fresh.path()).unwrap();
    let (manifest, standing) = restore.assess(&copy.dir).unwrap();
    assert!(matches!(standing, Standing::Empty));
    let mut put_back = RestorePlan {
        src: copy.dir.clone(),
        state_dir: fresh.path().to_path_buf(),
        config_in_place: false,
        config_paths: vec![config.clone(), token.clone()],
        now: Utc::now(),
    };
    let done = restore.apply(&put_back, &manifest).unwrap();
    assert!(done.aside.is_none(), "nothing was there to keep aside");
    let (original, at) = &done.config[1];
    assert_eq!(original, &token);
    assert!(at.starts_with(fresh.path()));
    assert_eq!(std::fs::read_to_string(at).unwrap(), "secret\n");
    let mode = std::fs::metadata(at).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
    assert_eq!(std::fs::read_to_string(&token).unwrap(), "changed\n");
    assert!(crate::store::journal_path(fresh.path()).is_file());

    // In place (--force): the file there is kept aside.
    put_back.config_in_place = true;
    put_back.now += Duration::seconds(1);
    let (manifest, standing) = restore.assess(&copy.dir).unwrap();
    assert!(matches!(standing, Standing::Held(_)), "the same register");
    let done = restore.apply(&put_back, &manifest).unwrap();
    assert!(done
        .aside
        .is_some_and(|dir| dir.join("journal/journal.log").is_file()));
    assert_eq!(std::fs::read_to_string(&token).unwrap(), "secret\n");
    let kept: Vec<String> = std::fs::read_dir(etc.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("dgi.token.before-restore-"))
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");

    // A manifest that names another path for a file (tampered): never written there, even
    // in place; the file stays beside the state.
    let target = etc.path().join("elsewhere");
    let path = copy.dir.join(MANIFEST_FILE);
    let mut tampered: Manifest = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let secret = tampered
        .files
        .iter_mut()
        .find(|f| f.role == manifest::Role::Secret);
    secret.unwrap().original = target.clone();
    std::fs::write(&path, serde_json::to_vec(&tampered).unwrap()).unwrap();
    put_back.now += Duration::seconds(1);
    let (manifest, _) = restore.assess(&copy.dir).unwrap();
    let done = restore.apply(&put_back, &manifest).unwrap();
    assert_eq!(done.not_in_place, vec![target.clone()]);
    assert!(!target.exists());
    let (_, beside) = &done.config[1];
    assert!(beside.starts_with(fresh.path()), "{beside:?}");
}

#[test]
fn a_full_destination_is_named_not_the_register() {
    use crate::i18n::{Lang, Localized};
    let to = Path::new("/mnt/usb/.emcf-backup-tmp-1/state/journal/journal.log");
    let full = crate::store::StoreError::Io(std::io::Error::from(std::io::ErrorKind::StorageFull));
    let said = journal_copy_error(to, full).message().render(Lang::Fr);
    assert!(
        said.contains("/mnt/usb/") && said.contains("plein"),
        "{said}"
    );
    assert!(!said.contains("registre"), "{said}");
}

#[test]
fn a_copy_taken_as_root_goes_to_the_destinations_owner() {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid takes no argument and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return; // only root can give files away; the CI runs as root
    }
    let state = tempfile::tempdir().unwrap();
    let dest = tempfile::tempdir().unwrap();
    let store = seeded(state.path());
    std::os::unix::fs::chown(dest.path(), Some(65534), Some(65534)).unwrap();
    // A copy folder whose manifest cannot be read: said, not counted, not removed.
    let bad = dest.path().join("emcf-backup-20200101T000000Z");
    std::fs::create_dir(&bad).unwrap();
    std::fs::write(bad.join(MANIFEST_FILE), "{ not json").unwrap();
    let copy = take(&plan(state.path(), dest.path(), 1), Utc::now()).unwrap();
    assert_eq!(copy.unreadable, vec![bad.clone()]);
    assert!(bad.is_dir());
    for path in [
        copy.dir.clone(),
        copy.dir.join(MANIFEST_FILE),
        copy.dir.join("state/journal"),
        copy.dir.join("state/journal/journal.log"),
        dest.path().join(".emcf-backup.lock"),
    ] {
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(
            (meta.uid(), meta.gid()),
            (65534, 65534),
            "{}",
            path.display()
        );
    }
    drop(store);
}

/// A restore marker that does not read is damage, not "no restore under way": which folder
/// holds the register that was there is unknown, so restore stops there.
#[test]
fn an_unreadable_restore_marker_stops_the_restore() {
    let state = tempfile::tempdir().unwrap();
    std::fs::write(
        state.path().join(crate::store::RESTORE_MARKER),
        b"{\"copy\":",
    )
    .unwrap();
    match Restore::begin(state.path()) {
        Err(AdminError::Invalid(message)) => {
            assert_eq!(message.id(), "restore-marker-bad");
        }
        Err(other) => panic!("another refusal: {other:?}"),
        Ok(_) => panic!("a restore began over an unreadable marker"),
    }
}

/// A folder `before-restore-<stamp>` already there (an earlier restore in the same second):
/// the register in place goes to another folder, and the marker written before the move
/// names that folder, not the earlier one.
#[test]
fn the_folder_set_aside_is_the_one_the_answer_names() {
    let state = tempfile::tempdir().unwrap();
    let dest = tempfile::tempdir().unwrap();
    let store = seeded(state.path());
    certify(&store, "demo", Environment::Production, "FN-1", 2026);
    let copy = take(&plan(state.path(), dest.path(), 14), Utc::now()).unwrap();
    drop(store);
    let now = Utc.with_ymd_and_hms(2026, 11, 26, 12, 0, 0).unwrap();
    let earlier = state.path().join("before-restore-20261126T120000Z");
    std::fs::create_dir(&earlier).unwrap();
    std::fs::write(earlier.join("mark"), b"an earlier restore's").unwrap();
    let restore = Restore::begin(state.path()).unwrap();
    let (manifest, _) = restore.assess(&copy.dir).unwrap();
    let put_back = RestorePlan {
        src: copy.dir.clone(),
        state_dir: state.path().to_path_buf(),
        config_in_place: false,
        config_paths: Vec::new(),
        now,
    };
    let done = restore.apply(&put_back, &manifest).unwrap();
    let aside = done.aside.expect("the register in place was set aside");
    assert_eq!(
        aside,
        state.path().join("before-restore-20261126T120000Z-2")
    );
    assert!(aside.join("journal/journal.log").is_file());
    assert_eq!(
        std::fs::read(earlier.join("mark")).unwrap(),
        b"an earlier restore's"
    );
}

/// Two restores in place within one second: the second sets aside what the first put in
/// place under names of its own, and loses nothing the first kept (the configuration file
/// that was there before it, the configuration it brought back beside the state).
#[test]
fn two_restores_in_one_second_keep_every_old_configuration() {
    let state = tempfile::tempdir().unwrap();
    let dest = tempfile::tempdir().unwrap();
    let etc = tempfile::tempdir().unwrap();
    let config = etc.path().join("config.toml");
    let copy = copy_with_config(state.path(), dest.path(), &config, &[]);
    std::fs::write(&config, "language = \"en\" # before the first\n").unwrap();

    let now = Utc.with_ymd_and_hms(2026, 11, 26, 12, 0, 0).unwrap();
    let put_back = RestorePlan {
        src: copy.dir.clone(),
        state_dir: state.path().to_path_buf(),
        config_in_place: true,
        config_paths: vec![config.clone()],
        now,
    };
    let restore = Restore::begin(state.path()).unwrap();
    let (manifest, _) = restore.assess(&copy.dir).unwrap();
    let first = restore.apply(&put_back, &manifest).unwrap();
    std::fs::write(&config, "language = \"en\" # before the second\n").unwrap();
    let (manifest, _) = restore.assess(&copy.dir).unwrap();
    let second = restore.apply(&put_back, &manifest).unwrap();

    let stamp = "20261126T120000Z";
    let read = |path: std::path::PathBuf| std::fs::read_to_string(path).unwrap();
    let kept = |suffix: &str| {
        let mut name = config.as_os_str().to_owned();
        name.push(format!(".before-restore-{stamp}{suffix}"));
        read(name.into())
    };
    assert_eq!(kept(""), "language = \"en\" # before the first\n");
    assert_eq!(kept("-2"), "language = \"en\" # before the second\n");
    assert_eq!(read(config.clone()), "language = \"fr\"\n");
    assert_eq!(
        first.aside,
        Some(state.path().join(format!("before-restore-{stamp}")))
    );
    assert_eq!(
        second.aside,
        Some(state.path().join(format!("before-restore-{stamp}-2")))
    );
    assert!(state
        .path()
        .join(format!("restored-config-{stamp}/config.toml"))
        .is_file());
    assert!(state
        .path()
        .join(format!("restored-config-{stamp}-2/config.toml"))
        .is_file());
    assert!(crate::store::journal_path(state.path()).is_file());
}
