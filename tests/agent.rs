//! The agent end to end: a goal typed in the real side panel becomes a task in the real host,
//! which drives the fixture shop in real Chromium and shows its answer in the panel. The model
//! is the scripted backend (`ITINERO_BACKEND=scripted:FILE`, passed to the host through
//! Chromium's environment), whose steps also check what the prompt showed.

use std::sync::{Arc, Mutex};

use anyhow::Result;
use axum::routing::post;
use itinero::harness::{Harness, LaunchOptions, PageExt, WAIT};

/// What the shop's server received.
#[derive(Default)]
struct Shop {
    orders: Mutex<Vec<String>>,
}

fn routes(shop: Arc<Shop>) -> axum::Router {
    axum::Router::new().route(
        "/agent/buy",
        post(move |body: String| {
            shop.orders.lock().unwrap().push(body);
            async { axum::response::Html("<p>Ordered</p>") }
        }),
    )
}

/// Starts everything with the script as the model; returns the harness, the panel and the shop tab.
async fn start(
    script: &str,
    shop: Arc<Shop>,
) -> Result<(
    Harness,
    tempfile::TempDir,
    chromiumoxide::Page,
    chromiumoxide::Page,
)> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("script.json");
    std::fs::write(&path, script)?;
    let options = LaunchOptions {
        host_env: vec![(
            "ITINERO_BACKEND".into(),
            format!("scripted:{}", path.display()),
        )],
        ..Default::default()
    };
    let h = Harness::start_full(options, routes(shop)).await?;
    let panel = h.connected_panel().await?;
    let tab = h.chromium.open(&h.fixture_url("agent/shop.html")).await?;
    tab.wait_for("document.readyState === 'complete'", WAIT)
        .await?;
    Ok((h, dir, panel, tab))
}

async fn type_goal(panel: &chromiumoxide::Page, goal: &str) -> Result<()> {
    // The panel is a tab here, behind the shop's: input goes to the tab in front.
    panel.bring_to_front().await?;
    panel
        .find_element("#goal")
        .await?
        .click()
        .await?
        .type_str(goal)
        .await?
        .press_key("Enter")
        .await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_goal_in_the_panel_searches_the_shop_and_shows_the_answer() -> Result<()> {
    let shop = Arc::new(Shop::default());
    let (_h, _dir, panel, tab) = start(
        r#"[
          {"expect": ["Goal: What do wool socks cost?", "[0]<input type=search", "Sock shop"],
           "reply": "{\"thought\": \"Search for them.\", \"action\": \"type\", \"index\": 0, \"text\": \"wool socks\", \"submit\": true}"},
          {"expect": ["Results for wool socks", "12.99 EUR", "1. type [0] input"],
           "reply": "{\"thought\": \"The price is listed.\", \"action\": \"done\", \"answer\": \"Wool socks cost 12.99 EUR.\"}"}
        ]"#,
        shop.clone(),
    )
    .await?;
    type_goal(&panel, "What do wool socks cost?").await?;
    let answer = panel
        .wait_for("!document.querySelector('#answer').hidden && document.querySelector('#answer-text').textContent", WAIT)
        .await?;
    assert_eq!(answer, "Wool socks cost 12.99 EUR.");
    assert_eq!(panel.text_of("#answer-status").await?, "Done");
    let searched: String = tab
        .run_js("return new URLSearchParams(location.search).get('q');")
        .await?;
    assert_eq!(
        searched, "wool socks",
        "the search was submitted in the tab"
    );
    let log: Vec<String> = panel
        .run_js("return [...document.querySelectorAll('#log li')].map(li => li.textContent);")
        .await?;
    let joined = log.join("\n");
    assert!(
        joined.contains("1. type [0] \"Search products\" \"wool socks\" — Search for them. (llm)"),
        "{joined}"
    );
    assert!(joined.contains("2. Saw Results — "), "{joined}");
    // Run is back, Stop is gone.
    let idle: bool = panel
        .run_js("return !document.querySelector('#run').hidden && document.querySelector('#stop').hidden;")
        .await?;
    assert!(idle);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn buying_waits_for_approval_and_deny_stops_the_purchase() -> Result<()> {
    let shop = Arc::new(Shop::default());
    let (_h, _dir, panel, _tab) = start(
        r#"[{"expect": ["Buy now"], "reply": "{\"thought\": \"Buy them.\", \"action\": \"click\", \"index\": 2}"}]"#,
        shop.clone(),
    )
    .await?;
    type_goal(&panel, "Buy wool socks").await?;
    let question = panel
        .wait_for("!document.querySelector('#ask').hidden && document.querySelector('#ask-text').textContent", WAIT)
        .await?;
    assert!(
        question.as_str().unwrap_or_default().contains("Buy now"),
        "{question}"
    );
    let approval_shown: bool = panel
        .run_js("return !document.querySelector('#ask-approval').hidden && document.querySelector('#ask-question').hidden;")
        .await?;
    assert!(approval_shown);
    panel.find_element("#ask-deny").await?.click().await?;
    let status = panel
        .wait_for("!document.querySelector('#answer').hidden && document.querySelector('#answer-status').textContent", WAIT)
        .await?;
    assert_eq!(status, "Stopped");
    assert!(panel
        .text_of("#answer-text")
        .await?
        .contains("you did not allow click [2]"));
    assert!(shop.orders.lock().unwrap().is_empty(), "nothing was bought");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_model_server_the_panel_says_how_to_start_one() -> Result<()> {
    // Nothing listens on the discard port: Ollama is "not running".
    let options = LaunchOptions {
        host_env: vec![
            ("ITINERO_BACKEND".into(), "ollama".into()),
            ("OLLAMA_HOST".into(), "127.0.0.1:9".into()),
        ],
        ..Default::default()
    };
    let h = Harness::start_full(options, axum::Router::new()).await?;
    let panel = h.connected_panel().await?;
    let tab = h.chromium.open(&h.fixture_url("agent/shop.html")).await?;
    tab.wait_for("document.readyState === 'complete'", WAIT)
        .await?;
    type_goal(&panel, "find the invoice").await?;
    let status = panel
        .wait_for("!document.querySelector('#answer').hidden && document.querySelector('#answer-status').textContent", WAIT)
        .await?;
    assert_eq!(status, "Failed");
    let text = panel.text_of("#answer-text").await?;
    assert!(
        text.contains("Ollama is not reachable at http://127.0.0.1:9/"),
        "{text}"
    );
    assert!(text.contains("ollama serve"), "{text}");
    Ok(())
}
