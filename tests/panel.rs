//! The side panel's History and Settings pages and its "Always allow on this site" button, in
//! real Chromium with the real host and its store (`itinero-host`, built first; the harness's
//! host keeps its store in the profile's data directory, which a test can also open itself).

use anyhow::{Context, Result};
use chromiumoxide::Page;
use itinero::demo_shop::{DemoShop, ShopOptions};
use itinero::harness::panel::{choose, open, open_settings, result, save, type_goal};
use itinero::harness::{Harness, LaunchOptions, PageExt, WAIT};
use itinero_host::store::{NewRun, Store, FILE_NAME};
use itinero_shared::records::{ApprovalPolicy, BackendChoice, RunStatus, StepRecord};
use serde_json::{json, Value};

/// The store the harness's host uses (opened alongside it: SQLite in WAL mode takes both).
fn store(h: &Harness) -> Result<Store> {
    Ok(Store::open(&h.host_data_dir().join(FILE_NAME))?)
}

/// Replaces what an input holds with `text`, typed with the keyboard.
async fn type_into(panel: &Page, selector: &str, text: &str) -> Result<()> {
    let sel = serde_json::to_string(selector)?;
    panel
        .run_js::<Value>(&format!(
            "const e = document.querySelector({sel}); e.value = ''; e.focus(); return null;"
        ))
        .await?;
    panel.find_element(selector).await?.type_str(text).await?;
    Ok(())
}

async fn value_of(panel: &Page, selector: &str) -> Result<String> {
    let sel = serde_json::to_string(selector)?;
    panel
        .run_js(&format!("return document.querySelector({sel}).value;"))
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_are_saved_by_the_host_and_its_errors_are_shown() -> Result<()> {
    // Nothing listens on the discard port: Ollama is "not running", so its models cannot be listed.
    let h = Harness::start_with(itinero::harness::LaunchOptions {
        host_env: vec![("OLLAMA_HOST".into(), "127.0.0.1:9".into())],
        ..Default::default()
    })
    .await?;
    let panel = h.connected_panel().await?;
    panel.bring_to_front().await?;
    open_settings(&panel).await?;
    // A fresh store's defaults.
    assert_eq!(value_of(&panel, "#settings-backend").await?, "auto");
    assert_eq!(value_of(&panel, "#settings-model").await?, "");
    assert_eq!(value_of(&panel, "#settings-max-steps").await?, "30");
    assert_eq!(value_of(&panel, "#settings-approval").await?, "ask_risky");
    let openai_hidden: bool = panel
        .run_js("return document.getElementById('settings-openai').hidden;")
        .await?;
    assert!(
        openai_hidden,
        "the server address is only asked for an OpenAI-compatible backend"
    );

    type_into(&panel, "#settings-max-steps", "45").await?;
    type_into(&panel, "#settings-model", "qwen2.5:3b").await?;
    choose(&panel, "#settings-approval", "ask_every_action").await?;
    let help = panel.text_of("#settings-approval-help").await?;
    assert!(help.contains("every action"), "{help}");
    choose(&panel, "#settings-plan", "off").await?;
    choose(&panel, "#settings-vote", "unsure").await?;
    let voting_shown: bool = panel
        .run_js("return !document.getElementById('settings-voting').hidden;")
        .await?;
    assert!(voting_shown, "the voters' fields show once voting is on");
    type_into(&panel, "#settings-vote-samples", "5").await?;
    type_into(&panel, "#settings-vote-models", "llama3.2:3b, gemma3:4b").await?;
    let (status, class) = save(&panel).await?;
    assert_eq!((status.as_str(), class.contains("ok")), ("Saved", true));
    let stored = store(&h)?.settings()?;
    assert_eq!(stored.max_steps, 45);
    assert_eq!(stored.approval, ApprovalPolicy::AskEveryAction);
    assert_eq!(stored.model.as_deref(), Some("qwen2.5:3b"));
    assert_eq!(stored.plan, itinero_shared::messages::PlanMode::Off);
    assert_eq!(stored.vote, itinero_shared::messages::VoteMode::Unsure);
    assert_eq!(stored.vote_samples, 5);
    assert_eq!(stored.vote_models, ["llama3.2:3b", "gemma3:4b"]);

    // A new panel reads them back from the host.
    panel.reload().await?;
    panel
        .wait_for(
            "document.querySelector('#status')?.dataset.state === 'connected'",
            WAIT,
        )
        .await?;
    open_settings(&panel).await?;
    assert_eq!(value_of(&panel, "#settings-max-steps").await?, "45");
    assert_eq!(
        value_of(&panel, "#settings-approval").await?,
        "ask_every_action"
    );
    assert_eq!(value_of(&panel, "#settings-model").await?, "qwen2.5:3b");
    assert_eq!(value_of(&panel, "#settings-vote").await?, "unsure");
    assert_eq!(
        value_of(&panel, "#settings-vote-models").await?,
        "llama3.2:3b, gemma3:4b"
    );
    // No Ollama here: "automatic" offers the built-in engine's models, as a task would use it…
    panel
        .wait_for(
            "document.getElementById('settings-model-help').textContent.includes('smollm2-135m-instruct-q4_1')",
            WAIT,
        )
        .await?;
    // …and Ollama named outright says why its suggestions are missing.
    choose(&panel, "#settings-backend", "ollama").await?;
    panel
        .wait_for(
            "document.getElementById('settings-model-help').textContent.includes('Could not list the backend')",
            WAIT,
        )
        .await?;

    // Out of range: the host refuses, and the panel says why next to the form.
    type_into(&panel, "#settings-max-steps", "0").await?;
    let (status, class) = save(&panel).await?;
    assert!(class.contains("error"), "{class}");
    assert!(
        status.contains("step limit must be between 1 and 200, not 0"),
        "{status}"
    );
    // A server address with a password in it is refused too; the password is not echoed.
    type_into(&panel, "#settings-max-steps", "45").await?;
    choose(&panel, "#settings-backend", "openai").await?;
    panel
        .wait_for("!document.getElementById('settings-openai').hidden", WAIT)
        .await?;
    type_into(
        &panel,
        "#settings-openai-url",
        "http://me:hunter2@127.0.0.1:8080/v1",
    )
    .await?;
    let (status, class) = save(&panel).await?;
    assert!(class.contains("error"), "{class}");
    assert!(
        status.contains("must not contain a user name or password"),
        "{status}"
    );
    assert!(!status.contains("hunter2"), "{status}");
    assert_eq!(
        store(&h)?.settings()?.backend,
        BackendChoice::Auto,
        "nothing refused was kept"
    );
    // Fixed, it saves.
    type_into(&panel, "#settings-openai-url", "http://127.0.0.1:8080/v1").await?;
    let (status, _) = save(&panel).await?;
    assert_eq!(status, "Saved");
    let stored = store(&h)?.settings()?;
    assert_eq!(stored.backend, BackendChoice::OpenAi);
    assert_eq!(
        stored.openai_url.as_deref(),
        Some("http://127.0.0.1:8080/v1")
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_history_lists_recorded_runs_with_their_steps_and_deletes_them() -> Result<()> {
    let h = Harness::start().await?;
    let panel = h.connected_panel().await?;
    panel.bring_to_front().await?;
    let store = store(&h)?;
    let new = |goal: &str| NewRun {
        goal: goal.into(),
        start_url: "https://shop.example/search?q=socks".into(),
        tab_id: Some(3),
        backend: "scripted".into(),
        model: "script.json".into(),
    };
    let socks = store.begin_run(&new("What do wool socks cost?"))?;
    store.record_step(
        socks,
        &StepRecord {
            n: 1,
            url: "https://shop.example/".into(),
            action_summary: "type [1] \"Search products\" \"wool socks\"".into(),
            outcome_text: "navigated to https://shop.example/search?q=wool+socks".into(),
            strategy: "llm".into(),
            thought: "Search for them.".into(),
            decide_ms: Some(120),
            act_ms: Some(40),
            total_ms: Some(170),
            ..Default::default()
        },
    )?;
    store.record_step(
        socks,
        &StepRecord {
            n: 2,
            url: "https://shop.example/search?q=wool+socks".into(),
            action_summary: "done".into(),
            strategy: "llm".into(),
            thought: "The price is listed.".into(),
            ..Default::default()
        },
    )?;
    store.finish_run(
        socks,
        RunStatus::Succeeded,
        Some("Wool socks cost 12.99 EUR."),
    )?;
    let hats = store.begin_run(&new("Buy a hat"))?;
    store.finish_run(
        hats,
        RunStatus::Stopped,
        Some("you did not allow click [9]"),
    )?;
    let going = store.begin_run(&new("Find gloves"))?;

    open(&panel, "history").await?;
    let runs = panel
        .wait_for(
            "document.querySelectorAll('#runs li[data-run-id]').length === 3 && \
             [...document.querySelectorAll('#runs li[data-run-id]')].map(li => [li.dataset.runId, li.textContent])",
            WAIT,
        )
        .await?;
    let runs: Vec<(String, String)> = serde_json::from_value(runs)?;
    let ids: Vec<String> = runs.iter().map(|r| r.0.clone()).collect();
    assert_eq!(
        ids,
        [going, hats, socks].map(|id| id.to_string()),
        "newest first"
    );
    assert!(runs[0].1.starts_with("Find gloves"), "{}", runs[0].1);
    assert!(runs[0].1.contains("Running"), "{}", runs[0].1);
    assert!(runs[1].1.contains("Stopped"), "{}", runs[1].1);
    let socks_entry = &runs[2].1;
    for part in [
        "What do wool socks cost?",
        "Succeeded",
        "just now",
        "2 steps",
        "https://shop.example",
    ] {
        assert!(socks_entry.contains(part), "{part:?} in {socks_entry}");
    }

    // Its detail: the answer and every step.
    panel
        .find_element(&format!("#runs li[data-run-id='{socks}'] button"))
        .await?
        .click()
        .await?;
    let steps = panel
        .wait_for(
            "!document.getElementById('run-detail').hidden && \
             document.querySelectorAll('#run-steps li').length === 2 && \
             [...document.querySelectorAll('#run-steps li')].map(li => li.textContent)",
            WAIT,
        )
        .await?;
    let steps: Vec<String> = serde_json::from_value(steps)?;
    assert_eq!(
        panel.text_of("#run-goal").await?,
        "What do wool socks cost?"
    );
    assert_eq!(
        panel.text_of("#run-answer").await?,
        "Wool socks cost 12.99 EUR."
    );
    assert!(panel.text_of("#run-meta").await?.contains("Succeeded"));
    for part in [
        "1. type [1] \"Search products\" \"wool socks\"",
        "model",
        "navigated to https://shop.example/search?q=wool+socks",
        "Search for them.",
        "decided in 120 ms · acted in 40 ms · 170 ms in all",
    ] {
        assert!(steps[0].contains(part), "{part:?} in {}", steps[0]);
    }
    assert!(steps[1].starts_with("2. done"), "{}", steps[1]);
    assert!(
        panel
            .run_js::<bool>("return document.getElementById('history-list').hidden;")
            .await?
    );

    // Delete: gone from the list and from the store.
    panel.find_element("#run-delete").await?.click().await?;
    panel
        .wait_for(
            "document.getElementById('run-detail').hidden && \
             document.querySelectorAll('#runs li[data-run-id]').length === 2",
            WAIT,
        )
        .await?;
    assert_eq!(panel.text_of("#history-status").await?, "Run deleted.");
    assert!(store.run(socks)?.is_none());
    let left: usize = panel
        .run_js(&format!(
            "return document.querySelectorAll(\"#runs li[data-run-id='{socks}']\").length;"
        ))
        .await?;
    assert_eq!(left, 0);

    // Another run's page, and back to the list with the keyboard's focus on that run.
    panel
        .find_element(&format!("#runs li[data-run-id='{hats}'] button"))
        .await?
        .click()
        .await?;
    panel
        .wait_for(
            "document.getElementById('run-goal').textContent === 'Buy a hat'",
            WAIT,
        )
        .await?;
    assert!(
        panel
            .run_js::<bool>("return !document.getElementById('run-no-steps').hidden;")
            .await?
    );
    panel.find_element("#run-back").await?.click().await?;
    let focused: String = panel
        .run_js("return document.activeElement.closest('li')?.dataset.runId ?? '';")
        .await?;
    assert_eq!(focused, hats.to_string());
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_list_always_allowed_sites_and_lessons_which_can_be_removed() -> Result<()> {
    let h = Harness::start().await?;
    let panel = h.connected_panel().await?;
    panel.bring_to_front().await?;
    let store = store(&h)?;
    store.allow("https://shop.example/cart", "buy")?;
    store.allow("https://mail.example", "send")?;
    let lesson_id = store.add_lesson(
        "https://shop.example/",
        "The cart is under the basket icon.",
        "ask_human",
        None,
    )?;
    store.add_lesson(
        "https://mail.example/",
        "Sign in with the work account.",
        "ask_human",
        None,
    )?;

    open_settings(&panel).await?;
    let approvals = panel
        .wait_for(
            "document.querySelectorAll('#approvals li').length === 2 && \
             [...document.querySelectorAll('#approvals li')].map(li => li.textContent)",
            WAIT,
        )
        .await?;
    let approvals = approvals.to_string();
    assert!(
        approvals.contains("buy on https://shop.example"),
        "{approvals}"
    );
    assert!(
        approvals.contains("send on https://mail.example"),
        "{approvals}"
    );
    let lessons = panel
        .wait_for(
            "document.querySelectorAll('#lessons li').length === 2 && \
             [...document.querySelectorAll('#lessons li')].map(li => li.textContent)",
            WAIT,
        )
        .await?
        .to_string();
    assert!(
        lessons.contains("The cart is under the basket icon.https://shop.example"),
        "{lessons}"
    );

    panel
        .find_element("#approvals li[data-kind='buy'] button")
        .await?
        .click()
        .await?;
    panel
        .wait_for(
            "document.querySelectorAll('#approvals li').length === 1 && \
             document.querySelector('#approvals li').dataset.kind === 'send'",
            WAIT,
        )
        .await?;
    assert!(!store.is_allowed("https://shop.example/cart", "buy")?);
    assert!(store.is_allowed("https://mail.example/", "send")?);

    panel
        .find_element(&format!("#lessons li[data-lesson-id='{lesson_id}'] button"))
        .await?
        .click()
        .await?;
    panel
        .wait_for(
            "document.querySelectorAll('#lessons li').length === 1",
            WAIT,
        )
        .await?;
    let left = store.lessons(None, 10)?;
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].text, "Sign in with the work account.");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_store_the_pages_show_the_hosts_reason() -> Result<()> {
    let h = Harness::start().await?;
    let panel = h.connected_panel().await?;
    panel.bring_to_front().await?;
    open(&panel, "history").await?;
    panel
        .wait_for(
            "document.getElementById('history-status').textContent.startsWith('No runs yet')",
            WAIT,
        )
        .await?;
    // The next host finds a directory where its store should be.
    let path = h.host_data_dir().join(FILE_NAME);
    for suffix in ["", "-wal", "-shm"] {
        let mut p = path.clone().into_os_string();
        p.push(suffix);
        let _ = std::fs::remove_file(p);
    }
    std::fs::create_dir(&path)?;
    let pid = panel.text_of("#host-pid").await?;
    let pid = pid.trim_start_matches("pid ");
    assert!(std::process::Command::new("kill")
        .args(["-9", pid])
        .status()?
        .success());
    // Reconnected, the page on screen asks again, and says why it cannot show anything.
    let status = panel
        .wait_for(
            "document.getElementById('history-status').classList.contains('error') && \
             document.getElementById('history-status').textContent",
            WAIT,
        )
        .await?;
    let status = status.as_str().unwrap_or_default();
    assert!(
        status.starts_with("Cannot list the runs: the host's store could not be opened"),
        "{status}"
    );
    open(&panel, "settings").await?;
    let status = panel
        .wait_for(
            "document.getElementById('settings-status').classList.contains('error') && \
             document.getElementById('settings-status').textContent",
            WAIT,
        )
        .await?;
    assert!(
        status
            .as_str()
            .unwrap_or_default()
            .starts_with("Cannot read the settings: the host's store could not be opened"),
        "{status}"
    );
    let disabled: bool = panel
        .run_js("return document.getElementById('settings-fields').disabled;")
        .await?;
    assert!(disabled, "there is nothing to edit");
    Ok(())
}

/// Replaces the panel's port to the background with one the test speaks for: what the panel
/// posts is kept in `__itinero.sent`, and `__itinero.deliver(msg)` hands it a message.
const FAKE_BACKGROUND: &str = r#"
(() => {
  const sent = [], listeners = [];
  const event = list => ({ addListener: f => list.push(f), removeListener() {}, hasListener: () => false });
  window.__itinero = { sent, connected: false, deliver: m => listeners.forEach(f => f(m)) };
  chrome.runtime.connect = info => {
    window.__itinero.connected = true;
    return { name: info && info.name, postMessage: m => sent.push(JSON.parse(JSON.stringify(m))),
             onMessage: event(listeners), onDisconnect: event([]), disconnect() {} };
  };
})();
"#;

async fn deliver(panel: &Page, msg: Value) -> Result<()> {
    panel
        .run_js::<Value>(&format!("window.__itinero.deliver({msg}); return null;"))
        .await?;
    Ok(())
}

/// Answers the question on screen with the button `button` and returns the reply it sent.
async fn reply_with(panel: &Page, button: &str, question_id: u64) -> Result<Value> {
    panel.find_element(button).await?.click().await?;
    panel
        .wait_for(
            &format!(
                "window.__itinero.sent.map(m => m.envelope).find(e => e?.type === 'UserReply' && \
                 e.body.question_id === {question_id})?.body"
            ),
            WAIT,
        )
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_offers_always_allow_when_the_host_does() -> Result<()> {
    let shop = DemoShop::new(ShopOptions::default());
    let h = Harness::start_full(LaunchOptions::default(), shop.router()).await?;
    let tab = h.chromium.open(&h.fixture_url("shop/cart")).await?;
    tab.wait_for("document.readyState === 'complete'", WAIT)
        .await?;
    let panel = h.open_panel().await?;
    panel.evaluate_on_new_document(FAKE_BACKGROUND).await?;
    panel.reload().await?;
    panel.wait_for("window.__itinero?.connected", WAIT).await?;
    deliver(
        &panel,
        json!({"kind": "status", "status": {"state": "connected", "host_version": "test", "pid": 1,
               "capabilities": [], "error": null, "retry_in_ms": null, "attempts": 0}}),
    )
    .await?;
    type_goal(&panel, "Buy wool socks").await?;
    let id = panel
        .wait_for(
            "window.__itinero.sent.map(m => m.envelope).find(e => e?.type === 'StartTask')?.id",
            WAIT,
        )
        .await?;
    let ask = |question_id: u64, can_always: bool| {
        json!({"kind": "host", "envelope": {"v": 1, "id": id, "type": "AskUser", "body": {
            "task_id": 7, "question_id": question_id, "kind": "approval", "can_always": can_always,
            "question": "Allow click [9] \"Place order\"?"}}})
    };
    let buttons =
        "['ask-allow', 'ask-always', 'ask-deny'].map(id => !document.getElementById(id).hidden)";

    deliver(&panel, ask(1, true)).await?;
    let shown = panel
        .wait_for(
            &format!("!document.getElementById('ask').hidden && {buttons}"),
            WAIT,
        )
        .await?;
    assert_eq!(shown, json!([true, true, true]));
    assert_eq!(
        panel.text_of("#ask-always").await?,
        "Always allow on this site"
    );
    let reply = reply_with(&panel, "#ask-always", 1).await?;
    assert_eq!(
        reply,
        json!({"task_id": 7, "question_id": 1, "reply": "always"})
    );
    assert!(
        panel
            .run_js::<bool>("return document.getElementById('ask').hidden;")
            .await?
    );

    // Without `can_always` (or under a policy that asks every time) there is no third button.
    deliver(&panel, ask(2, false)).await?;
    let shown = panel
        .wait_for(
            &format!("!document.getElementById('ask').hidden && {buttons}"),
            WAIT,
        )
        .await?;
    assert_eq!(shown, json!([true, false, true]));
    assert_eq!(reply_with(&panel, "#ask-allow", 2).await?["reply"], "yes");

    deliver(&panel, ask(3, true)).await?;
    panel
        .wait_for("!document.getElementById('ask').hidden", WAIT)
        .await?;
    assert_eq!(reply_with(&panel, "#ask-deny", 3).await?["reply"], "no");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_task_appears_in_the_history_with_its_steps() -> Result<()> {
    let shop = DemoShop::new(ShopOptions::default());
    let dir = tempfile::tempdir()?;
    let script = dir.path().join("script.json");
    std::fs::write(
        &script,
        r#"[
          {"reply": "{\"thought\": \"Search for them.\", \"action\": \"type\", \"index\": 1, \"text\": \"wool socks\", \"submit\": true}"},
          {"reply": "{\"thought\": \"The price is listed.\", \"action\": \"done\", \"answer\": \"Wool socks cost 12.99 EUR.\"}"}
        ]"#,
    )?;
    let h = Harness::start_full(LaunchOptions::scripted(&script), shop.router()).await?;
    let panel = h.connected_panel().await?;
    let tab = h.chromium.open(&h.fixture_url("shop/")).await?;
    tab.wait_for("document.readyState === 'complete'", WAIT)
        .await?;
    type_goal(&panel, "What do wool socks cost?").await?;
    let (heading, text) = result(&panel, WAIT).await?;
    assert_eq!(heading, "Done", "{text}");
    assert_eq!(shop.searches(), ["wool socks"]);

    open(&panel, "history").await?;
    // Should the run be recorded a moment after the panel hears that it finished, Refresh
    // lists it.
    let entry = panel
        .wait_for(
            "document.querySelector('#runs li[data-run-id]')?.textContent ?? \
             (document.getElementById('history-status').textContent !== 'Loading…' && \
              document.getElementById('history-refresh').click(), null)",
            WAIT,
        )
        .await;
    let entry = match entry {
        Ok(entry) => entry.as_str().unwrap_or_default().to_owned(),
        Err(e) => anyhow::bail!(
            "the finished run is not in the history, which says {:?}: {e}",
            panel.text_of("#history-status").await?
        ),
    };
    assert!(entry.starts_with("What do wool socks cost?"), "{entry}");
    assert!(entry.contains("Succeeded"), "{entry}");
    let steps: u32 = entry
        .split(" · ")
        .find_map(|part| part.strip_suffix(" steps").or(part.strip_suffix(" step")))
        .and_then(|n| n.parse().ok())
        .with_context(|| format!("no step count in {entry:?}"))?;
    assert!(steps >= 1, "{entry}");

    panel
        .find_element("#runs li[data-run-id] button")
        .await?
        .click()
        .await?;
    let shown = panel
        .wait_for(
            &format!(
                "document.querySelectorAll('#run-steps li').length === {steps} && \
                 [...document.querySelectorAll('#run-steps li')].map(li => li.textContent)"
            ),
            WAIT,
        )
        .await?
        .to_string();
    assert!(shown.contains("wool socks"), "{shown}");
    assert!(shown.contains("Search for them."), "{shown}");
    assert_eq!(
        panel.text_of("#run-answer").await?,
        "Wool socks cost 12.99 EUR."
    );

    panel.find_element("#run-delete").await?.click().await?;
    panel
        .wait_for(
            "document.getElementById('run-detail').hidden && \
             document.querySelectorAll('#runs li[data-run-id]').length === 0",
            WAIT,
        )
        .await?;
    assert!(store(&h)?.recent_runs(10)?.is_empty());
    Ok(())
}
