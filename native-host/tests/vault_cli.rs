//! `itinero-host vault …` as a person (or a script) runs it: the real binary on a store in a
//! temporary data directory, with no OS secret store (`ITINERO_VAULT_KEYRING=off`, as on a
//! headless machine), so the vault is keyed by a passphrase. Secrets go in on standard input and
//! must come out nowhere: not on the terminal, not in the store file, not in the logs.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

const PASSWORD: &str = "correct horse battery staple";
const SEED: &str = "JBSWY3DPEHPK3PXP";
const PASSPHRASE: &str = "tr0ub4dor&3 tr0ub4dor";

fn vault(data: &Path, args: &[&str], passphrase: Option<&str>, stdin: &str) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_itinero-host"));
    cmd.arg("vault")
        .args(args)
        .env("ITINERO_DATA_DIR", data)
        .env("ITINERO_VAULT_KEYRING", "off")
        .env("RUST_LOG", "debug")
        .env_remove("ITINERO_VAULT_PASSPHRASE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(p) = passphrase {
        cmd.env("ITINERO_VAULT_PASSPHRASE", p);
    }
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn ok(data: &Path, args: &[&str], passphrase: Option<&str>, stdin: &str) -> String {
    let out = vault(data, args, passphrase, stdin);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "vault {args:?} failed: {stderr}");
    for secret in [PASSWORD, SEED, PASSPHRASE] {
        assert!(
            !stdout.contains(secret) && !stderr.contains(secret),
            "vault {args:?} printed a secret"
        );
    }
    stdout.into_owned()
}

fn fails(data: &Path, args: &[&str], passphrase: Option<&str>, stdin: &str) -> String {
    let out = vault(data, args, passphrase, stdin);
    assert!(!out.status.success(), "vault {args:?} should fail");
    String::from_utf8(out.stderr).unwrap()
}

/// Every file under `dir`, read whole.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files(&path));
        } else if let Ok(bytes) = std::fs::read(&path) {
            out.push((path.display().to_string(), bytes));
        }
    }
    out
}

#[test]
fn credentials_are_added_listed_imported_and_removed_without_a_secret_leaking() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();

    let status = ok(data, &["status"], None, "");
    assert!(status.contains("vault: not created yet"), "{status}");
    assert!(
        status.contains("OS secret store: unavailable (the OS secret store is turned off"),
        "{status}"
    );

    // The first add creates the vault with the passphrase (a short one is refused).
    let err = fails(
        data,
        &["add", "https://shop.example/login", "alice"],
        Some("short"),
        &format!("{PASSWORD}\n"),
    );
    assert!(err.contains("at least 8 characters"), "{err}");
    let out = ok(
        data,
        &["add", "https://shop.example/login", "alice", "--totp"],
        Some(PASSPHRASE),
        &format!("{PASSWORD}\n{}\n", "jbsw y3dp ehpk 3pxp"),
    );
    assert_eq!(out, "saved alice on https://shop.example\n");

    // A wrong passphrase changes nothing.
    let err = fails(
        data,
        &["add", "https://bank.example", "bob"],
        Some("not the passphrase"),
        "hunter2\n",
    );
    assert!(err.contains("wrong passphrase"), "{err}");
    let err = fails(
        data,
        &["add", "ftp://files.example", "bob"],
        Some(PASSPHRASE),
        "hunter2\n",
    );
    assert!(err.contains("is not a web address"), "{err}");

    let csv = dir.path().join("chrome.csv");
    std::fs::write(
        &csv,
        "name,url,username,password,note\nbank,https://bank.example/,bob,hunter2,\nnothing,,x,y,\n",
    )
    .unwrap();
    let out = ok(
        data,
        &["import", csv.to_str().unwrap()],
        Some(PASSPHRASE),
        "",
    );
    assert!(
        out.starts_with("chrome export: 1 added, 0 updated, 1 skipped\n  skipped line 3: no URL"),
        "{out}"
    );
    std::fs::remove_file(&csv).unwrap();

    let list = ok(data, &["list"], None, "");
    assert!(list.contains("https://shop.example"), "{list}");
    assert!(list.contains("alice") && list.contains("TOTP"), "{list}");
    assert!(
        list.contains("https://bank.example") && !list.contains("hunter2"),
        "{list}"
    );
    let status = ok(data, &["status"], None, "");
    assert!(
        status.contains("vault: locked; its key comes from a passphrase")
            && status.contains("credentials: 2"),
        "{status}"
    );

    ok(data, &["remove", "https://bank.example", "bob"], None, "");
    let audit = ok(data, &["audit"], None, "");
    let whats: Vec<&str> = audit
        .lines()
        .filter_map(|l| l.split_whitespace().nth(3))
        .collect();
    assert_eq!(whats, ["removed", "added", "added"], "{audit}");
    let audit: serde_json::Value =
        serde_json::from_str(&ok(data, &["audit", "--json"], None, "")).unwrap();
    let whats: Vec<&str> = audit
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["what"].as_str().unwrap())
        .collect();
    assert_eq!(whats, ["removed", "added", "added"], "{audit}");
    let status: serde_json::Value =
        serde_json::from_str(&ok(data, &["status", "--json"], None, "")).unwrap();
    assert_eq!(status["state"], "locked", "{status}");
    assert_eq!(status["source"], "passphrase", "{status}");
    assert!(status["credentials"].as_u64().is_some(), "{status}");

    for (file, bytes) in files(data) {
        for secret in [PASSWORD, SEED, "hunter2", PASSPHRASE] {
            assert!(
                !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                "{file} holds a secret"
            );
        }
    }
}

#[test]
fn an_api_key_is_kept_sealed_and_status_names_only_its_server() {
    const KEY: &str = "sk-cli-3c2b1a0f9e8d7c6b";
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let out = ok(
        data,
        &["api-key", "set", "http://127.0.0.1:8080/v1"],
        Some(PASSPHRASE),
        &format!("{KEY}\n"),
    );
    assert_eq!(out, "saved the API key for http://127.0.0.1:8080\n");
    // Refused before the key is asked for.
    let err = fails(
        data,
        &["api-key", "set", "127.0.0.1:8080"],
        Some(PASSPHRASE),
        "",
    );
    assert!(err.contains("is not a server address"), "{err}");

    // Locked (no passphrase given): the server is named, the key is not.
    let status = ok(data, &["status"], None, "");
    assert!(
        status.contains("API keys: http://127.0.0.1:8080"),
        "{status}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&ok(data, &["status", "--json"], None, "")).unwrap();
    assert_eq!(
        json["api_key_servers"],
        serde_json::json!(["http://127.0.0.1:8080"])
    );
    for (file, bytes) in files(data) {
        assert!(
            !bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()),
            "{file} holds the key"
        );
    }

    ok(
        data,
        &["api-key", "remove", "http://127.0.0.1:8080/"],
        None,
        "",
    );
    let err = fails(
        data,
        &["api-key", "remove", "http://127.0.0.1:8080"],
        None,
        "",
    );
    assert!(
        err.contains("there is no API key for http://127.0.0.1:8080"),
        "{err}"
    );
    let status = ok(data, &["status"], None, "");
    assert!(status.contains("API keys: none"), "{status}");
    let audit: serde_json::Value =
        serde_json::from_str(&ok(data, &["audit", "--json"], None, "")).unwrap();
    let whats: Vec<&str> = audit
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["what"].as_str().unwrap())
        .collect();
    assert_eq!(whats, ["API key removed", "API key saved"], "{audit}");
    assert!(!audit.to_string().contains(KEY));
}

#[test]
fn a_command_that_cannot_run_exits_2_and_one_that_did_not_succeed_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_itinero-host"))
            .args(args)
            .env("ITINERO_DATA_DIR", dir.path())
            .env("HOME", dir.path())
            .output()
            .unwrap()
    };
    // No browser runs, so no host: itinero could not do it.
    let tabs = run(&["tabs"]);
    assert_eq!(tabs.status.code(), Some(2), "{tabs:?}");
    assert!(String::from_utf8_lossy(&tabs.stderr).contains("no running itinero host"));
    // The checks ran and one failed: nothing is installed in this browser profile.
    let profile = dir.path().join("profile");
    std::fs::create_dir_all(&profile).unwrap();
    let doctor = run(&[
        "doctor",
        "--json",
        "--profile-dir",
        profile.to_str().unwrap(),
    ]);
    let report: serde_json::Value = serde_json::from_slice(&doctor.stdout).unwrap();
    assert_eq!(report["ok"], false, "{report}");
    assert_eq!(doctor.status.code(), Some(1), "{report}");
    assert!(report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["status"] == "fail" && c["fix"].is_string()));
}
