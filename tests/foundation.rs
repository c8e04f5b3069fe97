//! The foundation, end to end: side panel → Rust/WASM service worker → native host → back,
//! in a real Chromium with the built extension and the real host binary.

use anyhow::{Context, Result};
use itinero::harness::{Harness, PageExt, WAIT};
use serde_json::Value;

/// Sends one envelope from a fresh panel port through the background to the host; returns the reply envelope.
async fn via_background(panel: &chromiumoxide::Page, envelope: Value) -> Result<Value> {
    panel
        .run_js(&format!(
            r#"
            const envelope = {envelope};
            const port = chrome.runtime.connect({{ name: 'panel' }});
            try {{
              return await new Promise((resolve, reject) => {{
                port.onMessage.addListener((m) => {{
                  if (m.kind === 'host' && m.envelope.id === envelope.id) resolve(m.envelope);
                }});
                port.onDisconnect.addListener(() => reject(new Error('port closed')));
                port.postMessage({{ kind: 'to_host', envelope }});
              }});
            }} finally {{ port.disconnect(); }}
            "#
        ))
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn panel_shows_the_connected_host_and_its_version() -> Result<()> {
    let h = Harness::start().await?;
    let panel = h.connected_panel().await?;
    assert_eq!(panel.text_of("#status").await?, "connected");
    assert_eq!(
        panel.text_of("#host-version").await?,
        format!("host {}", env!("CARGO_PKG_VERSION"))
    );
    let pid = panel.text_of("#host-pid").await?;
    assert!(
        pid.strip_prefix("pid ")
            .and_then(|p| p.parse::<u32>().ok())
            .is_some(),
        "{pid:?}"
    );
    // The host logged the handshake to its file, not to the protocol channel.
    assert!(
        h.chromium.host_log().contains("hello"),
        "host log: {}",
        h.chromium.host_log()
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pings_small_and_large_and_refused_replies_keep_the_connection() -> Result<()> {
    let h = Harness::start().await?;
    let panel = h.connected_panel().await?;
    let small = via_background(
        &panel,
        serde_json::json!({"v": 1, "id": 41, "type": "Ping", "body": {"payload": "hi"}}),
    )
    .await?;
    assert_eq!(small["type"], "Pong");
    assert_eq!(small["body"]["payload"], "hi");

    // An observation-sized message (1 MiB) goes to the host; the acknowledgement is small.
    let big = via_background(
        &panel,
        serde_json::json!({"v": 1, "id": 42, "type": "Ping",
            "body": {"payload": "x".repeat(1 << 20), "echo": false}}),
    )
    .await?;
    assert_eq!(big["type"], "Pong");
    assert!(big["body"]["received_bytes"].as_u64().unwrap() > 1 << 20);

    // Echoing it would exceed Chrome's 1 MiB host→browser limit: the host says so instead.
    let refused = via_background(
        &panel,
        serde_json::json!({"v": 1, "id": 43, "type": "Ping",
            "body": {"payload": "x".repeat(1 << 20), "echo": true}}),
    )
    .await?;
    assert_eq!(refused["type"], "Error", "{refused}");
    assert!(refused["body"]["message"]
        .as_str()
        .unwrap()
        .contains("too large"));

    // Unknown types and bad bodies are answered, and the host keeps running.
    let unknown = via_background(
        &panel,
        serde_json::json!({"v": 1, "id": 44, "type": "Ping", "body": {"payload": 5}}),
    )
    .await?;
    assert_eq!(unknown["type"], "Error");
    let again = via_background(
        &panel,
        serde_json::json!({"v": 1, "id": 45, "type": "Ping", "body": {"payload": "still there"}}),
    )
    .await?;
    assert_eq!(again["body"]["payload"], "still there");
    assert_eq!(panel.text_of("#status").await?, "connected");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_the_host_shows_disconnected_then_reconnects() -> Result<()> {
    let h = Harness::start().await?;
    let panel = h.connected_panel().await?;
    let first_pid: u32 = panel
        .text_of("#host-pid")
        .await?
        .trim_start_matches("pid ")
        .parse()
        .context("reading the host's pid from the panel")?;
    // Record every state the panel shows, so a quick reconnect cannot hide the disconnect.
    panel
        .run_js::<Value>(
            r#"
            window.__states = [];
            const status = document.querySelector('#status');
            new MutationObserver(() => window.__states.push({
              state: status.dataset.state,
              error: document.querySelector('#host-error').textContent,
            })).observe(status, { attributes: true, childList: true, characterData: true, subtree: true });
            return null;
            "#,
        )
        .await?;
    let killed = std::process::Command::new("kill")
        .args(["-9", &first_pid.to_string()])
        .status()?;
    assert!(killed.success());
    let states = panel
        .wait_for(
            "window.__states.some(s => s.state === 'disconnected') && \
             window.__states.at(-1).state === 'connected' && window.__states",
            WAIT,
        )
        .await?;
    let disconnected = states
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["state"] == "disconnected")
        .unwrap();
    assert!(
        disconnected["error"]
            .as_str()
            .unwrap()
            .contains("retrying in"),
        "{disconnected}"
    );
    let second_pid: u32 = panel
        .text_of("#host-pid")
        .await?
        .trim_start_matches("pid ")
        .parse()?;
    assert_ne!(first_pid, second_pid, "a new host process serves the panel");
    let reply = via_background(
        &panel,
        serde_json::json!({"v": 1, "id": 7, "type": "Ping", "body": {"payload": "after restart"}}),
    )
    .await?;
    assert_eq!(reply["body"]["payload"], "after restart");
    Ok(())
}

/// Asks the content script in the top frame of the tab showing `url` which engine it runs on.
async fn content_engine(panel: &chromiumoxide::Page, url: &str) -> Result<Value> {
    panel
        .tab_message_when_ready(url, &serde_json::json!({"kind": "probe"}))
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn content_script_loads_as_wasm_and_as_wasm2js_under_a_strict_csp() -> Result<()> {
    let h = Harness::start().await?;
    let panel = h.connected_panel().await?;
    let plain_url = h.fixture_url("plain.html");
    let strict_url = h.fixture_url("strict-csp.html");
    let _plain = h.chromium.open(&plain_url).await?;
    let _strict = h.chromium.open(&strict_url).await?;

    let plain = content_engine(&panel, &plain_url).await?;
    assert_eq!(plain["engine"], "wasm", "{plain}");
    assert_eq!(plain["top"], true);

    let strict = content_engine(&panel, &strict_url).await?;
    assert_eq!(strict["engine"], "wasm2js", "{strict}");
    assert_eq!(strict["url"], strict_url.as_str());
    Ok(())
}
