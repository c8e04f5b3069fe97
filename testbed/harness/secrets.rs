//! Proof that secrets stayed secret: after a test, no file of the browser profile (which holds
//! the host's data directory, its store and its logs), no log line and nothing in the
//! extension's storage may hold one, in any of the encodings a page address, a form, JSON or
//! base64 would give it.

use std::path::Path;

use aho_corasick::AhoCorasick;
use anyhow::{bail, ensure, Result};
use base64::Engine;
use chromiumoxide::Page;
use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};

use super::{Harness, PageExt};

/// Every file under `dir` holding one of `needles`, byte for byte, with the needle's number.
pub fn files_holding(dir: &Path, needles: &AhoCorasick) -> Vec<(String, usize)> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files_holding(&path, needles));
        } else if let Ok(bytes) = std::fs::read(&path) {
            if let Some(m) = needles.find(&bytes) {
                found.push((path.display().to_string(), m.pattern().as_usize()));
            }
        }
    }
    found
}

/// `secret` as it is and as it would be written into an address (percent-encoded, a form's `+`
/// for spaces), a JSON string, an HTML attribute or base64 (the whole three-byte groups from its
/// start, which any base64 of a text starting with it holds).
pub fn encodings(secret: &str) -> Vec<String> {
    let percent = utf8_percent_encode(secret, NON_ALPHANUMERIC).to_string();
    let unreserved = ["-", "_", ".", "~", "*"]
        .iter()
        .fold(percent.clone(), |p, c| {
            p.replace(&format!("%{:02X}", c.as_bytes()[0]), c)
        });
    let whole = &secret.as_bytes()[..secret.len() - secret.len() % 3];
    let mut forms = vec![
        secret.to_owned(),
        percent,
        unreserved.replace("%20", "+"),
        unreserved,
        serde_json::to_string(secret).unwrap_or_default(),
        secret.replace('&', "&amp;").replace('"', "&quot;"),
        base64::engine::general_purpose::STANDARD_NO_PAD.encode(whole),
    ];
    forms.sort();
    forms.dedup();
    forms.retain(|f| f.len() >= 4);
    forms
}

/// Fails naming where a secret was found (never the secret itself): the extension's storage
/// and the side panel's page (read from `panel`), the host's log, or any file of the profile.
pub async fn assert_nowhere(h: &Harness, panel: &Page, secrets: &[&str]) -> Result<()> {
    assert_nowhere_in(h, panel, secrets, &[h.chromium.profile_dir().to_path_buf()]).await
}

/// [`assert_nowhere`] over what itinero writes alone: its data directory (store and logs) and
/// the extension's storage, leaving out the browser's own history and cache, where a page
/// that puts a password in its own address or title has put it, whatever the agent does.
pub async fn assert_itinero_kept_nothing(
    h: &Harness,
    panel: &Page,
    secrets: &[&str],
) -> Result<()> {
    let profile = h.chromium.profile_dir();
    let dirs = [
        h.host_data_dir(),
        profile.join("Default/Local Extension Settings"),
        profile.join("Default/Extension State"),
    ];
    assert_nowhere_in(h, panel, secrets, &dirs).await
}

async fn assert_nowhere_in(
    h: &Harness,
    panel: &Page,
    secrets: &[&str],
    dirs: &[std::path::PathBuf],
) -> Result<()> {
    let storage: String = panel
        .run_js(
            "const l = await chrome.storage.local.get(null); \
             const s = await chrome.storage.session.get(null); \
             return JSON.stringify([l, s]);",
        )
        .await?;
    // What the panel shows: every task event, question and note it received.
    let shown: String = panel
        .run_js("return document.body.innerText + document.body.innerHTML;")
        .await?;
    let log = h.chromium.host_log();
    // Each encoding of each secret, with the secret's number (never the secret) to name it by.
    let (forms, owner): (Vec<String>, Vec<usize>) = secrets
        .iter()
        .enumerate()
        .flat_map(|(n, s)| encodings(s).into_iter().map(move |f| (f, n)))
        .unzip();
    let needles = AhoCorasick::new(&forms)?;
    let which = |text: &str| needles.find(text).map(|m| owner[m.pattern().as_usize()]);
    for (place, text) in [
        ("the extension's storage", &storage),
        ("the host log", &log),
        ("the side panel", &shown),
    ] {
        if let Some(n) = which(text) {
            bail!("{place} holds secret #{n}");
        }
    }
    let found: Vec<_> = dirs
        .iter()
        .flat_map(|d| files_holding(d, &needles))
        .collect();
    ensure!(
        found.is_empty(),
        "secrets are readable in {:?}",
        found
            .iter()
            .map(|(f, p)| format!("{f} (secret #{})", owner[*p]))
            .collect::<Vec<_>>()
    );
    Ok(())
}
