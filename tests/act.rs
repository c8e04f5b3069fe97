//! Actions in a real page: they change it as a person's would, re-resolve stale
//! targets by fingerprint, and report covered or changed targets instead of
//! acting on whatever is there now.

use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use axum::routing::post;
use chromiumoxide::Page;
use itinero::harness::tree::find_by_id as find;
use itinero::harness::{Harness, PageExt, WAIT};
use itinero_shared::observation::Observation;
use itinero_shared::Target;
use serde_json::{json, Value};

struct Tab {
    page: Page,
    panel: Page,
    url: String,
}

async fn open(h: &Harness, path: &str) -> Result<Tab> {
    let url = h.fixture_url(path);
    let page = h.chromium.open(&url).await?;
    page.wait_for("document.readyState === 'complete'", WAIT)
        .await?;
    let panel = h.open_panel().await?;
    // The agent works on the tab the user sees; background tabs skip rendering work.
    page.bring_to_front().await?;
    Ok(Tab { page, panel, url })
}

async fn observe(tab: &Tab) -> Result<Observation> {
    let obs = tab
        .panel
        .tab_message_when_ready(&tab.url, &json!({"kind": "observe"}))
        .await?;
    Ok(serde_json::from_value(obs)?)
}

/// Sends an action exactly once (retrying could act twice).
async fn act(tab: &Tab, action: Value) -> Result<Value> {
    let msg = json!({"kind": "act", "action": action});
    tab.panel.tab_message(&tab.url, &msg).await
}

fn target(obs: &Observation, id: &str) -> Result<Value> {
    let node = find(&obs.root, id).with_context(|| format!("#{id} is not in the observation"))?;
    let index = node.index.with_context(|| format!("#{id} has no index"))?;
    Ok(serde_json::to_value(Target {
        index,
        fingerprint: node.fingerprint.clone().unwrap(),
    })?)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typing_and_pressing_enter_submits_the_form_to_the_server() -> Result<()> {
    let received = Arc::new(Mutex::new(Vec::<String>::new()));
    let store = received.clone();
    let routes = axum::Router::new().route(
        "/submit",
        post(move |body: String| async move {
            store.lock().unwrap().push(body);
            axum::response::Html("<p>Booked</p>")
        }),
    );
    let h = Harness::start_with_routes(routes).await?;
    let tab = open(&h, "observe/frame-form.html").await?;
    let obs = observe(&tab).await?;
    let outcome = act(
        &tab,
        json!({"kind": "select", "target": target(&obs, "room-type")?, "value": "Suite"}),
    )
    .await?;
    assert_eq!(outcome["kind"], "done", "{outcome}");
    // Submitting navigates: the reply may come back, or the page may unload first.
    let _ = act(
        &tab,
        json!({"kind": "type", "target": target(&obs, "guest-name")?, "text": "Ana Lima", "submit": true}),
    )
    .await;
    let deadline = std::time::Instant::now() + WAIT;
    while received.lock().unwrap().is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the form never reached the server"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(received.lock().unwrap()[0], "name=Ana+Lima&room=suite");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_and_select_change_state_like_a_person() -> Result<()> {
    let h = Harness::start().await?;
    let tab = open(&h, "observe/controls.html").await?;
    let obs = observe(&tab).await?;
    let checked = act(
        &tab,
        json!({"kind": "check", "target": target(&obs, "cb-unchecked")?, "checked": true}),
    )
    .await?;
    assert_eq!(checked["kind"], "done", "{checked}");
    let selected = act(
        &tab,
        json!({"kind": "select", "target": target(&obs, "sel-airport")?, "value": "porto"}),
    )
    .await?;
    assert_eq!(selected["kind"], "done", "{selected}");
    let missing = act(
        &tab,
        json!({"kind": "select", "target": target(&obs, "sel-airport")?, "value": "Paris"}),
    )
    .await?;
    assert_eq!(missing["kind"], "value_rejected", "{missing}");
    assert!(
        missing["reason"].as_str().unwrap().contains("Lisbon"),
        "{missing}"
    );

    let state: Value = tab
        .page
        .run_js("return { box: document.getElementById('cb-unchecked').checked, airport: document.getElementById('sel-airport').value };")
        .await?;
    assert_eq!(state, json!({"box": true, "airport": "OPO"}));
    let after = observe(&tab).await?;
    let node = find(&after.root, "cb-unchecked").unwrap();
    assert!(node.states.contains(&"checked".to_owned()));
    assert_eq!(
        find(&after.root, "sel-airport").unwrap().value.as_deref(),
        Some("Porto")
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replaced_element_is_found_again_by_its_fingerprint() -> Result<()> {
    let h = Harness::start().await?;
    let tab = open(&h, "observe/mutating.html").await?;
    let obs = observe(&tab).await?;
    let old = target(&obs, "swap-button")?;
    // The page swaps the button for a new node after the observation (generation 2).
    tab.page
        .run_js::<Value>("document.getElementById('swap-button').click(); return null;")
        .await?;
    let outcome = act(&tab, json!({"kind": "click", "target": old})).await?;
    assert_eq!(outcome["kind"], "done", "{outcome}");
    assert_eq!(tab.page.text_of("#swap-count").await?, "Added 2 time(s)");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_control_that_now_means_something_else_is_not_clicked() -> Result<()> {
    let h = Harness::start().await?;
    let tab = open(&h, "observe/mutating.html").await?;
    let obs = observe(&tab).await?;
    let old = target(&obs, "swap-button")?;
    tab.page
        .run_js::<Value>(
            "const b = document.getElementById('swap-button');
             b.textContent = 'Delete account';
             window.__clicked = 0; b.addEventListener('click', () => window.__clicked++);
             return null;",
        )
        .await?;
    let outcome = act(&tab, json!({"kind": "click", "target": old})).await?;
    assert_eq!(outcome["kind"], "target_detached", "{outcome}");
    assert_eq!(tab.page.run_js::<u32>("return window.__clicked;").await?, 0);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_covered_target_is_reported_with_what_covers_it() -> Result<()> {
    let h = Harness::start().await?;
    let tab = open(&h, "observe/cookie-banner.html").await?;
    let obs = observe(&tab).await?;
    let read_more = target(&obs, "read-more")?;
    tab.page
        .run_js::<Value>(
            "window.__clicked = 0;
             document.getElementById('read-more').addEventListener('click', () => window.__clicked++);
             document.getElementById('cookie-banner').style.height = '100%';
             return null;",
        )
        .await?;
    let outcome = act(&tab, json!({"kind": "click", "target": read_more})).await?;
    assert_eq!(outcome["kind"], "target_occluded", "{outcome}");
    assert!(
        outcome["by"].as_str().unwrap().contains("cookie-banner"),
        "{outcome}"
    );
    assert_eq!(tab.page.run_js::<u32>("return window.__clicked;").await?, 0);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_react_app_with_controlled_inputs_sees_what_is_typed() -> Result<()> {
    let received = Arc::new(Mutex::new(Vec::<Value>::new()));
    let store = received.clone();
    let routes = axum::Router::new().route(
        "/react-signup",
        post(move |axum::Json(body): axum::Json<Value>| async move {
            store.lock().unwrap().push(body);
            "ok"
        }),
    );
    let h = Harness::start_with_routes(routes).await?;
    let tab = open(&h, "react/index.html").await?;
    tab.page
        .wait_for("document.querySelector('#name') !== null", WAIT)
        .await?;
    let obs = observe(&tab).await?;
    let typed = act(
        &tab,
        json!({"kind": "type", "target": target(&obs, "name")?, "text": "Ana Lima"}),
    )
    .await?;
    assert_eq!(typed["kind"], "done", "{typed}");
    // React re-rendered from its state: the greeting shows the typed name.
    assert_eq!(tab.page.text_of("#greeting").await?, "Hello, Ana Lima");
    let chosen = act(
        &tab,
        json!({"kind": "select", "target": target(&obs, "country")?, "value": "France"}),
    )
    .await?;
    assert_eq!(chosen["kind"], "done", "{chosen}");
    let ticked = act(
        &tab,
        json!({"kind": "check", "target": target(&obs, "terms")?, "checked": true}),
    )
    .await?;
    assert_eq!(ticked["kind"], "done", "{ticked}");
    // The button was disabled until now: observe again, as the agent would, and click it.
    let obs = observe(&tab).await?;
    let clicked = act(
        &tab,
        json!({"kind": "click", "target": target(&obs, "signup")?}),
    )
    .await?;
    assert_eq!(clicked["kind"], "done", "{clicked}");
    tab.page
        .wait_for("document.querySelector('#welcome')?.textContent", WAIT)
        .await?;
    assert_eq!(
        received.lock().unwrap().clone(),
        vec![json!({"name": "Ana Lima", "country": "fr", "terms": true})]
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_click_that_leaves_the_page_reports_where_it_went() -> Result<()> {
    let h = Harness::start().await?;
    let tab = open(&h, "observe/mutating.html").await?;
    let obs = observe(&tab).await?;
    // The button navigates 50 ms after the click; the content script is torn down with the page.
    let outcome = act(
        &tab,
        json!({"kind": "click", "target": target(&obs, "nav-button")?}),
    )
    .await?;
    assert_eq!(outcome["kind"], "navigated", "{outcome}");
    assert!(
        outcome["url"]
            .as_str()
            .unwrap()
            .ends_with("/observe/plain-target.html"),
        "{outcome}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_spa_route_change_is_reported_as_a_navigation() -> Result<()> {
    let h = Harness::start().await?;
    let mut tab = open(&h, "observe/spa.html").await?;
    let obs = observe(&tab).await?;
    let outcome = act(
        &tab,
        json!({"kind": "click", "target": target(&obs, "nav-products")?}),
    )
    .await?;
    assert_eq!(outcome["kind"], "navigated", "{outcome}");
    assert!(
        outcome["url"]
            .as_str()
            .unwrap()
            .ends_with("spa.html?route=products"),
        "{outcome}"
    );
    // Same document: the content script is still there and sees the new route.
    tab.url = h.fixture_url("observe/spa.html?route=products");
    let after = observe(&tab).await?;
    assert!(after.url.ends_with("?route=products"), "{}", after.url);
    Ok(())
}
