//! Faults a user's machine has, with the real binary: the host killed outright (SIGKILL, so no
//! clean-up of its own runs) in the middle of a vault import, and two hosts importing into one
//! store at once. Whatever was committed stays, the store passes SQLite's integrity check, every
//! saved sign-in still opens with the vault's key, and running the import again finishes it.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use itinero_host::store::Store;
use itinero_host::vault::key_store::NoKeyring;
use itinero_host::vault::Vault;

const PASSPHRASE: &str = "tr0ub4dor&3 tr0ub4dor";
/// Generous: a row takes milliseconds; this is only how long a broken test waits.
const PATIENCE: Duration = Duration::from_secs(120);

fn vault_cli(data: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_itinero-host"));
    cmd.arg("vault")
        .args(args)
        .env("ITINERO_DATA_DIR", data)
        .env("ITINERO_VAULT_KEYRING", "off")
        .env("ITINERO_VAULT_PASSPHRASE", PASSPHRASE)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Creates the vault with its passphrase (the first add does).
fn create(data: &Path) {
    let mut child = vault_cli(data, &["add", "https://first.example", "ann"])
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"first password\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A Bitwarden-style export of `n` sign-ins on `site-{tag}-{i}.example`.
fn export(dir: &Path, tag: &str, n: usize) -> std::path::PathBuf {
    let mut csv = String::from("url,username,password\n");
    for i in 0..n {
        csv.push_str(&format!(
            "https://site-{tag}-{i}.example/,user{i},pw-{tag}-{i}\n"
        ));
    }
    let path = dir.join(format!("{tag}.csv"));
    std::fs::write(&path, csv).unwrap();
    path
}

fn import(data: &Path, csv: &Path) -> Child {
    vault_cli(data, &["import", csv.to_str().unwrap()])
        .spawn()
        .unwrap()
}

/// The sign-ins the store holds now, counted by a reader beside the writer.
fn saved(data: &Path) -> usize {
    let store = Store::open(&data.join("itinero.sqlite3")).unwrap();
    let vault = Vault::new(store, Box::new(NoKeyring("tests".into())));
    vault.list().unwrap().len()
}

/// The store is whole, and every sign-in in it opens with the passphrase's key.
fn check(data: &Path) -> usize {
    let store = Store::open(&data.join("itinero.sqlite3")).unwrap();
    assert_eq!(store.integrity_check().unwrap(), Ok(()));
    let vault = Vault::new(store, Box::new(NoKeyring("tests".into())));
    vault.unlock(PASSPHRASE).unwrap();
    let all = vault.list().unwrap();
    for c in &all {
        let (_, secrets) = vault
            .secrets(c.id)
            .unwrap_or_else(|e| panic!("{} on {}: {e}", c.username, c.origin));
        assert!(!secrets.password.is_empty());
    }
    all.len()
}

#[test]
fn a_host_killed_in_the_middle_of_an_import_loses_no_committed_row() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    create(&data);
    let csv = export(dir.path(), "a", 3000);
    let mut child = import(&data, &csv);
    // Killed once it is well into the rows (and long before it is done).
    let started = Instant::now();
    let mut seen = saved(&data);
    while seen < 60 {
        assert!(started.elapsed() < PATIENCE, "the import never got going");
        assert!(
            child.try_wait().unwrap().is_none(),
            "the import finished before it could be killed ({seen} saved)"
        );
        std::thread::yield_now();
        seen = saved(&data);
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let after_kill = check(&data);
    assert!(
        after_kill > 1 && after_kill < 3001,
        "{after_kill} sign-ins after the kill"
    );

    // Running it again adds what was missing and updates the rest.
    let out = import(&data, &csv).wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(check(&data), 3001);
}

#[test]
fn two_hosts_importing_into_one_store_at_once_both_finish() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    create(&data);
    let (a, b) = (export(dir.path(), "a", 400), export(dir.path(), "b", 400));
    let (one, two) = (import(&data, &a), import(&data, &b));
    for child in [one, two] {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "a writer failed beside the other: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(check(&data), 801);
}
