//! The vault in the side panel (real Chromium, extension, host and store; no OS secret store, as
//! on a headless machine): the vault is created with a passphrase, a sign-in is saved, shown
//! only after a second click, hidden again, locked and unlocked (a wrong passphrase refused),
//! imported from a Chrome CSV and deleted — and afterwards the password is in no file of the
//! browser profile, the host's data directory or its logs, and in none of the extension's
//! storage. An OpenAI-compatible server's API key, typed on the Settings page, goes the same
//! way: sealed in the vault (the command line finds it there), and nowhere else.

use std::process::Command;

use anyhow::{ensure, Context, Result};
use chromiumoxide::cdp::browser_protocol::dom::SetFileInputFilesParams;
use chromiumoxide::Page;
use itinero::harness::panel::{choose, click, fill, open_settings, save, text_with};
use itinero::harness::secrets::assert_nowhere;
use itinero::harness::{host_binary, Harness, PageExt, WAIT};
use itinero_host::store::Store;
use itinero_host::vault::key_store::NoKeyring;
use itinero_host::vault::Vault;

const PASSWORD: &str = "correct horse battery staple";
const IMPORTED: &str = "hunter2-imported";
const PASSPHRASE: &str = "tr0ub4dor&3 tr0ub4dor";

async fn state_is(panel: &Page, state: &str) -> Result<()> {
    panel
        .wait_for(
            &format!("document.querySelector('#vault-state').dataset.state === {state:?}"),
            WAIT,
        )
        .await
        .with_context(|| format!("the vault never showed {state}"))?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_panel_keeps_sign_ins_in_the_vault_and_the_password_nowhere_else() -> Result<()> {
    let h = Harness::start().await?;
    let panel = h.connected_panel().await?;
    click(&panel, "#nav-vault").await?;
    state_is(&panel, "not_created").await?;
    text_with(&panel, "#vault-state", "Choose a passphrase").await?;

    // Created with a passphrase typed twice.
    fill(&panel, "#vault-passphrase", "short").await?;
    fill(&panel, "#vault-passphrase-again", "short").await?;
    click(&panel, "#vault-unlock").await?;
    text_with(&panel, "#vault-status", "at least 8 characters").await?;
    fill(&panel, "#vault-passphrase", PASSPHRASE).await?;
    fill(&panel, "#vault-passphrase-again", PASSPHRASE).await?;
    click(&panel, "#vault-unlock").await?;
    state_is(&panel, "unlocked").await?;

    // A sign-in; the form forgets the password as it sends it.
    fill(&panel, "#vault-origin", "https://shop.example/login").await?;
    fill(&panel, "#vault-username", "alice").await?;
    fill(&panel, "#vault-password", PASSWORD).await?;
    fill(&panel, "#vault-totp", "jbsw y3dp ehpk 3pxp").await?;
    click(&panel, "#vault-save").await?;
    text_with(
        &panel,
        "#vault-add-status",
        "Saved alice on https://shop.example.",
    )
    .await?;
    let kept: String = panel
        .run_js("return document.querySelector('#vault-password').value + document.querySelector('#vault-totp').value;")
        .await?;
    assert_eq!(kept, "");
    let row = text_with(&panel, "#vault-list", "alice").await?;
    assert!(
        row.contains("https://shop.example · TOTP") && !row.contains(PASSWORD),
        "{row}"
    );

    // Shown only on a second click, and only with the vault's passphrase given again (the
    // vault is unlocked: a wrong one is refused, and the refusal listed); hidden again.
    let reveal = "#vault-list li button[data-act='reveal']";
    click(&panel, reveal).await?;
    text_with(&panel, reveal, "Really show it?").await?;
    assert!(!text_with(&panel, "#vault-list", "alice")
        .await?
        .contains(PASSWORD));
    panel
        .wait_for("!document.querySelector('#vault-reveal-row').hidden", WAIT)
        .await?;
    fill(&panel, "#vault-reveal-passphrase", "not the passphrase").await?;
    click(&panel, reveal).await?;
    text_with(&panel, "#vault-status", "Wrong passphrase").await?;
    text_with(
        &panel,
        "#vault-audit",
        "reveal refused alice on https://shop.example",
    )
    .await?;
    assert!(!text_with(&panel, "#vault-list", "alice")
        .await?
        .contains(PASSWORD));
    click(&panel, reveal).await?;
    fill(&panel, "#vault-reveal-passphrase", PASSPHRASE).await?;
    click(&panel, reveal).await?;
    let shown = text_with(&panel, "#vault-list .secret", PASSWORD).await?;
    let left: String = panel
        .run_js("return document.querySelector('#vault-reveal-passphrase').value;")
        .await?;
    assert_eq!(left, "", "the passphrase is not kept in its field");
    assert!(shown.contains("code now: "), "{shown}");
    click(&panel, "#vault-list li button[data-act='hide']").await?;
    panel
        .wait_for("!document.querySelector('#vault-list .secret')", WAIT)
        .await?;
    text_with(
        &panel,
        "#vault-audit",
        "revealed alice on https://shop.example",
    )
    .await?;

    // Locked: nothing can be shown; a wrong passphrase is refused, the right one unlocks.
    click(&panel, "#vault-lock").await?;
    state_is(&panel, "locked").await?;
    click(&panel, reveal).await?;
    click(&panel, reveal).await?;
    text_with(&panel, "#vault-status", "The vault is locked").await?;
    fill(&panel, "#vault-passphrase", "not the passphrase").await?;
    click(&panel, "#vault-unlock").await?;
    text_with(&panel, "#vault-status", "Wrong passphrase").await?;
    fill(&panel, "#vault-passphrase", PASSPHRASE).await?;
    click(&panel, "#vault-unlock").await?;
    state_is(&panel, "unlocked").await?;

    // A Chrome export, chosen in the file input.
    let csv = h.chromium.profile_dir().join("passwords.csv");
    std::fs::write(
        &csv,
        format!("name,url,username,password,note\nbank,https://bank.example/,bob,{IMPORTED},\n,android://x@y/,z,w,\n"),
    )?;
    let input = panel.find_element("#vault-import-file").await?;
    panel
        .execute(
            SetFileInputFilesParams::builder()
                .file(csv.display().to_string())
                .object_id(input.remote_object_id.clone())
                .build()
                .map_err(anyhow::Error::msg)?,
        )
        .await?;
    // Choosing the file fires the input's `change`, as a person's choice does.
    let report = text_with(&panel, "#vault-import-status", "chrome export: 1 added").await?;
    assert!(
        report.contains("1 skipped") && !report.contains(IMPORTED),
        "{report}"
    );
    std::fs::remove_file(&csv)?;
    text_with(&panel, "#vault-list", "bob").await?;

    // Deleted on the second click.
    let delete = "#vault-list li[data-credential-id] button[data-act='delete']";
    click(&panel, delete).await?;
    text_with(&panel, delete, "Click again to delete").await?;
    click(&panel, delete).await?;
    text_with(&panel, "#vault-status", "Deleted.").await?;

    // The password is nowhere but sealed in the vault.
    assert_nowhere(
        &h,
        &panel,
        &[PASSWORD, IMPORTED, PASSPHRASE, "JBSWY3DPEHPK3PXP"],
    )
    .await?;
    Ok(())
}

/// `itinero-host vault status --json` on the harness's host data, as the user would run it.
fn vault_status(h: &Harness) -> Result<serde_json::Value> {
    let out = Command::new(host_binary()?)
        .args(["vault", "status", "--json"])
        .env("ITINERO_DATA_DIR", h.host_data_dir())
        .env("ITINERO_VAULT_KEYRING", "off")
        .env_remove("ITINERO_VAULT_PASSPHRASE")
        .output()?;
    ensure!(
        out.status.success(),
        "vault status failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(serde_json::from_slice(&out.stdout)?)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_settings_page_keeps_an_api_key_in_the_vault_and_nowhere_else() -> Result<()> {
    const KEY: &str = "sk-settings-4b3a2f1e0d9c8b7a";
    const SERVER: &str = "http://127.0.0.1:8080";
    let h = Harness::start().await?;
    let panel = h.connected_panel().await?;
    open_settings(&panel).await?;
    // The key's field shows for an OpenAI-compatible server only.
    panel
        .wait_for("document.getElementById('settings-openai').hidden", WAIT)
        .await?;
    choose(&panel, "#settings-backend", "openai").await?;
    fill(&panel, "#settings-openai-url", &format!("{SERVER}/v1")).await?;
    panel
        .wait_for("!document.getElementById('settings-openai').hidden", WAIT)
        .await?;

    // No vault yet (no OS secret store here): the page says so, and the way there.
    let line = "#settings-api-key-line";
    text_with(&panel, line, &format!("No key saved for {SERVER}.")).await?;
    text_with(&panel, line, "create it on the Vault page").await?;
    fill(&panel, "#settings-api-key", KEY).await?;
    click(&panel, "#settings-api-key-save").await?;
    text_with(&panel, "#settings-api-key-status", "choose a passphrase").await?;
    let kept: String = panel
        .run_js("return document.getElementById('settings-api-key').value;")
        .await?;
    assert_eq!(kept, "", "the key is not kept in its field");
    click(&panel, "#settings-api-key-vault").await?;
    state_is(&panel, "not_created").await?;
    fill(&panel, "#vault-passphrase", PASSPHRASE).await?;
    fill(&panel, "#vault-passphrase-again", PASSPHRASE).await?;
    click(&panel, "#vault-unlock").await?;
    state_is(&panel, "unlocked").await?;

    // Back on Settings (the edits kept), the key is saved; the field is emptied.
    open_settings(&panel).await?;
    text_with(&panel, line, &format!("No key saved for {SERVER}.")).await?;
    fill(&panel, "#settings-api-key", KEY).await?;
    click(&panel, "#settings-api-key-save").await?;
    text_with(
        &panel,
        "#settings-api-key-status",
        &format!("Key saved for {SERVER}."),
    )
    .await?;
    text_with(
        &panel,
        line,
        &format!("A key is saved for {SERVER} (kept in the vault)."),
    )
    .await?;
    let kept: String = panel
        .run_js("return document.getElementById('settings-api-key').value;")
        .await?;
    assert_eq!(kept, "");
    // Typing the key was no edit of the settings; saving them keeps the server, not the key.
    let (said, class) = save(&panel).await?;
    assert!(class.contains("ok"), "{said}");

    // The vault holds it: `vault status` names the server, and the key opens with the
    // vault's passphrase.
    let status = vault_status(&h)?;
    assert_eq!(
        status["api_key_servers"],
        serde_json::json!([SERVER]),
        "{status}"
    );
    let vault = Vault::new(
        Store::open(&h.host_data_dir().join("itinero.sqlite3"))?,
        Box::new(NoKeyring("tests".into())),
    );
    vault.unlock(PASSPHRASE)?;
    assert_eq!(
        vault
            .api_key(&format!("{SERVER}/v1"))?
            .as_deref()
            .map(String::as_str),
        Some(KEY)
    );

    // Locked, the page says what a task would need; the key is still saved.
    click(&panel, "#nav-vault").await?;
    click(&panel, "#vault-lock").await?;
    state_is(&panel, "locked").await?;
    open_settings(&panel).await?;
    text_with(
        &panel,
        line,
        "unlock it on the Vault page for tasks to use the key",
    )
    .await?;

    // Removed: gone from the vault.
    click(&panel, "#settings-api-key-remove").await?;
    text_with(
        &panel,
        "#settings-api-key-status",
        &format!("Key removed for {SERVER}."),
    )
    .await?;
    text_with(&panel, line, &format!("No key saved for {SERVER}.")).await?;
    let status = vault_status(&h)?;
    assert_eq!(status["api_key_servers"], serde_json::json!([]), "{status}");

    assert_nowhere(&h, &panel, &[KEY, PASSPHRASE]).await?;
    Ok(())
}
