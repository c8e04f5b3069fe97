//! Proof that secrets stayed secret: after a test, no file of the browser profile (which holds
//! the host's data directory, its store and its logs), no log line and nothing in the
//! extension's storage may hold one.

use std::path::Path;

use anyhow::{ensure, Result};
use chromiumoxide::Page;

use super::{Harness, PageExt};

/// Every file under `dir` holding `needle`, byte for byte.
pub fn files_holding(dir: &Path, needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files_holding(&path, needle));
        } else if let Ok(bytes) = std::fs::read(&path) {
            if bytes.windows(needle.len()).any(|w| w == needle.as_bytes()) {
                found.push(path.display().to_string());
            }
        }
    }
    found
}

/// Fails naming where a secret was found (never the secret itself): the extension's storage
/// and the side panel's page (read from `panel`), the host's log, or any file of the profile.
pub async fn assert_nowhere(h: &Harness, panel: &Page, secrets: &[&str]) -> Result<()> {
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
    for (n, secret) in secrets.iter().enumerate() {
        ensure!(
            !storage.contains(secret),
            "the extension's storage holds secret #{n}"
        );
        ensure!(!log.contains(secret), "the host log holds secret #{n}");
        ensure!(!shown.contains(secret), "the side panel shows secret #{n}");
        let found = files_holding(h.chromium.profile_dir(), secret);
        ensure!(found.is_empty(), "secret #{n} is readable in {found:?}");
    }
    Ok(())
}
