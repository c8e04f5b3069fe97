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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hovering_and_keys_reach_the_page_as_a_persons_would() -> Result<()> {
    let h = Harness::start().await?;
    let tab = open(&h, "observe/gestures.html").await?;
    let obs = observe(&tab).await?;
    assert!(
        find(&obs.root, "menu-orders").is_none(),
        "the menu shows before the hover"
    );

    let hovered = act(
        &tab,
        json!({"kind": "hover", "target": target(&obs, "account")?}),
    )
    .await?;
    assert_eq!(hovered["kind"], "done", "{hovered}");
    let open = observe(&tab).await?;
    assert_eq!(
        find(&open.root, "menu-orders")
            .and_then(|n| n.name.clone())
            .as_deref(),
        Some("Orders")
    );
    assert!(find(&open.root, "menu-sign-out").unwrap().index.is_some());

    // Tab moves on from the field it is pressed in, Shift+Tab back from where focus is.
    let tabbed = act(
        &tab,
        json!({"kind": "press_key", "key": "Tab", "target": target(&open, "first-field")?}),
    )
    .await?;
    assert_eq!(tabbed["kind"], "done", "{tabbed}");
    let focus = "return document.activeElement.id;";
    assert_eq!(tab.page.run_js::<String>(focus).await?, "last-field");
    let focused = observe(&tab).await?;
    assert!(find(&focused.root, "last-field")
        .unwrap()
        .states
        .contains(&"focused".to_owned()));
    let back = act(
        &tab,
        json!({"kind": "press_key", "key": "Tab", "modifiers": ["shift"]}),
    )
    .await?;
    assert_eq!(back["kind"], "done", "{back}");
    assert_eq!(tab.page.run_js::<String>(focus).await?, "first-field");

    let chord = act(
        &tab,
        json!({"kind": "press_key", "key": "k", "modifiers": ["control", "shift"],
               "target": target(&open, "shortcut")?}),
    )
    .await?;
    assert_eq!(chord["kind"], "done", "{chord}");
    assert_eq!(tab.page.text_of("#keys").await?, "Control+Shift+k (KeyK)");

    // Escape goes to the focused field and bubbles up to the page, which closes the menu.
    let escaped = act(&tab, json!({"kind": "press_key", "key": "Escape"})).await?;
    assert_eq!(escaped["kind"], "done", "{escaped}");
    let closed = observe(&tab).await?;
    assert!(
        find(&closed.root, "menu-orders").is_none(),
        "the menu is still open"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scrolling_moves_what_a_wheel_would_and_says_when_nothing_can() -> Result<()> {
    let h = Harness::start().await?;
    let tab = open(&h, "observe/gestures.html").await?;
    let obs = observe(&tab).await?;
    assert!(find(&obs.root, "reply-1").unwrap().index.is_some());
    let shown = |obs: &Observation, id: &str| find(&obs.root, id).and_then(|n| n.index).is_some();
    assert!(
        !shown(&obs, "reply-6"),
        "a reply scrolled out of its box is shown"
    );

    // A button in the message box: its box scrolls by its own height, the page stays put.
    let scrolled = act(
        &tab,
        json!({"kind": "scroll", "target": target(&obs, "reply-1")?, "direction": "down", "pages": 1}),
    )
    .await?;
    assert_eq!(scrolled["kind"], "done", "{scrolled}");
    let at: Value = tab
        .page
        .run_js("const b = document.getElementById('messages'); return [b.scrollTop, b.clientHeight, window.scrollY];")
        .await?;
    assert_eq!(
        at,
        json!([200, 200, 0]),
        "[box scrollTop, box height, page scrollY]"
    );
    let moved = observe(&tab).await?;
    assert!(!shown(&moved, "reply-1"), "reply 1 is still shown");
    assert!(shown(&moved, "reply-6"));

    // Back up: the box returns to its top (the target was first centred in it, as for a click).
    let up = act(
        &tab,
        json!({"kind": "scroll", "target": target(&moved, "reply-6")?, "direction": "up", "pages": 1}),
    )
    .await?;
    assert_eq!(up["kind"], "done", "{up}");
    assert_eq!(
        tab.page
            .run_js::<Value>(
                "return [document.getElementById('messages').scrollTop, window.scrollY];"
            )
            .await?,
        json!([0, 0])
    );

    // A button below the viewport and no direction: scroll to it.
    let far = find(&obs.root, "far-button").unwrap();
    assert!(far.index.is_some() && !far.in_viewport, "{far:?}");
    let to = act(
        &tab,
        json!({"kind": "scroll", "target": target(&obs, "far-button")?}),
    )
    .await?;
    assert_eq!(to["kind"], "done", "{to}");
    let seen = observe(&tab).await?;
    assert!(seen.scroll_y > 0.0, "the page did not scroll");
    assert!(find(&seen.root, "far-button").unwrap().in_viewport);

    // The page by half a viewport (720 px high).
    let before = seen.scroll_y;
    let page = act(
        &tab,
        json!({"kind": "scroll", "direction": "up", "pages": 0.5}),
    )
    .await?;
    assert_eq!(page["kind"], "done", "{page}");
    let after = tab.page.run_js::<f64>("return window.scrollY;").await?;
    assert_eq!(before - after, 360.0);

    // Nothing can move that way: said so, not "done", and nothing is touched.
    let home = act(
        &tab,
        json!({"kind": "scroll", "direction": "up", "pages": 10}),
    )
    .await?;
    assert_eq!(home["kind"], "done", "{home}");
    let stuck = |why: &str| json!({"kind": "not_scrolled", "why": why});
    let top = act(&tab, json!({"kind": "scroll", "direction": "up"})).await?;
    assert_eq!(top, stuck("the page is already at its top"));
    let wide = act(&tab, json!({"kind": "scroll", "direction": "left"})).await?;
    assert_eq!(
        wide,
        stuck("the page does not scroll left: it fits in the window that way")
    );
    let at_top = observe(&tab).await?;
    let held = act(
        &tab,
        json!({"kind": "scroll", "target": target(&at_top, "reply-1")?, "direction": "up"}),
    )
    .await?;
    assert_eq!(
        held,
        stuck("no box holding the target scrolls further up, and the page is already at its top")
    );
    assert_eq!(
        tab.page
            .run_js::<Value>(
                "return [document.getElementById('messages').scrollTop, window.scrollX, window.scrollY];"
            )
            .await?,
        json!([0, 0, 0])
    );
    Ok(())
}

/// An app fixed to the window whose content scrolls in a full-height pane: "the page" is that
/// pane, in what the observation says lies below and in what a scroll with no target moves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_app_that_scrolls_in_a_pane_scrolls_there_as_under_a_wheel() -> Result<()> {
    let h = Harness::start().await?;
    let tab = open(&h, "observe/pane.html").await?;
    // Messages below the pane's edge are indexed, out of view, as those below a page's fold.
    let shown = |obs: &Observation, id: &str| {
        find(&obs.root, id).is_some_and(|n| n.index.is_some() && n.in_viewport)
    };
    let at = || {
        tab.page.run_js::<Value>(
            "const b = document.getElementById('inbox'); return [b.scrollTop, b.clientHeight, window.scrollY];",
        )
    };

    // 2 880 px of messages in a pane 664 px high: 2 216 px below, 3.3 of its lengths.
    let obs = observe(&tab).await?;
    assert_eq!((obs.pages_above, obs.pages_below), (0.0, 3.3));
    assert!(shown(&obs, "open-1") && !shown(&obs, "open-20"));

    let down = act(&tab, json!({"kind": "scroll", "direction": "down"})).await?;
    assert_eq!(down["kind"], "done", "{down}");
    assert_eq!(
        at().await?,
        json!([664, 664, 0]),
        "[pane scrollTop, pane height, page scrollY]"
    );
    let moved = observe(&tab).await?;
    assert_eq!((moved.pages_above, moved.pages_below), (1.0, 2.3));
    assert!(!shown(&moved, "open-1") && shown(&moved, "open-20"));

    // To the end, where the pane cannot go further: said so, and nothing moves.
    let end = act(
        &tab,
        json!({"kind": "scroll", "direction": "down", "pages": 10}),
    )
    .await?;
    assert_eq!(end["kind"], "done", "{end}");
    assert_eq!(at().await?, json!([2216, 664, 0]));
    let stuck = act(&tab, json!({"kind": "scroll", "direction": "down"})).await?;
    assert_eq!(
        stuck,
        json!({"kind": "not_scrolled", "why": "the page's pane under the middle of the window is already at its bottom"})
    );
    let bottom = observe(&tab).await?;
    assert_eq!((bottom.pages_above, bottom.pages_below), (3.3, 0.0));
    assert!(shown(&bottom, "open-60"));
    let back = act(
        &tab,
        json!({"kind": "scroll", "direction": "up", "pages": 0.5}),
    )
    .await?;
    assert_eq!(back["kind"], "done", "{back}");
    assert_eq!(at().await?, json!([1884, 664, 0]));

    // A box 200 px high in the middle of the window is not the page, and the page fits.
    tab.page
        .run_js::<Value>(
            "const b = document.getElementById('inbox'); \
             Object.assign(b.style, {flex: 'none', width: '1040px', height: '200px', alignSelf: 'center'}); \
             return b.getBoundingClientRect().top;",
        )
        .await?;
    let small = act(&tab, json!({"kind": "scroll", "direction": "down"})).await?;
    assert_eq!(
        small,
        json!({"kind": "not_scrolled", "why": "the page does not scroll down: it fits in the window that way"})
    );
    let fits = observe(&tab).await?;
    assert_eq!((fits.pages_above, fits.pages_below), (0.0, 0.0));
    assert_eq!(at().await?, json!([1884, 200, 0]));
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aria_widgets_and_contenteditable_take_what_a_person_gives_them() -> Result<()> {
    let h = Harness::start().await?;
    let tab = open(&h, "observe/controls.html").await?;
    let obs = observe(&tab).await?;

    // An ARIA combobox: opened, and the option with that name clicked.
    let chosen = act(
        &tab,
        json!({"kind": "select", "target": target(&obs, "city-combo")?, "value": "Faro"}),
    )
    .await?;
    assert_eq!(chosen["kind"], "done", "{chosen}");
    assert_eq!(tab.page.text_of("#status").await?, "Destination city: Faro");
    let missing = act(
        &tab,
        json!({"kind": "select", "target": target(&obs, "city-combo")?, "value": "Madrid"}),
    )
    .await?;
    assert_eq!(missing["kind"], "value_rejected", "{missing}");

    // The same list by keys, as its own keyboard handler expects: down to the first, Enter.
    for key in ["ArrowDown", "Enter"] {
        let pressed = act(
            &tab,
            json!({"kind": "press_key", "key": key, "target": target(&obs, "city-combo")?}),
        )
        .await?;
        assert_eq!(pressed["kind"], "done", "{pressed}");
    }
    assert_eq!(
        tab.page
            .run_js::<Value>("return [document.getElementById('city-combo').value, document.getElementById('opt-lisbon').getAttribute('aria-selected')];")
            .await?,
        json!(["Lisbon", "true"])
    );

    // An ARIA checkbox unticked by a click, as a person would.
    let unticked = act(
        &tab,
        json!({"kind": "check", "target": target(&obs, "aria-checkbox")?, "checked": false}),
    )
    .await?;
    assert_eq!(unticked["kind"], "done", "{unticked}");
    assert_eq!(
        tab.page
            .run_js::<String>(
                "return document.getElementById('aria-checkbox').getAttribute('aria-checked');"
            )
            .await?,
        "false"
    );

    // contenteditable: the old text replaced, with the input events an editor listens to.
    tab.page
        .run_js::<Value>(
            "window.__inputs = [];
             document.getElementById('ce-notes').addEventListener('input', e => window.__inputs.push(e.inputType));
             return null;",
        )
        .await?;
    let typed = act(
        &tab,
        json!({"kind": "type", "target": target(&obs, "ce-notes")?, "text": "Early check-in, please."}),
    )
    .await?;
    assert_eq!(typed["kind"], "done", "{typed}");
    assert_eq!(
        tab.page
            .run_js::<Value>(
                "return [document.getElementById('ce-notes').textContent, window.__inputs];"
            )
            .await?,
        json!(["Early check-in, please.", ["insertText"]])
    );
    let after = observe(&tab).await?;
    // The editor's text is shown inside it, as a person reads it.
    let editor = find(&after.root, "ce-notes").unwrap();
    let shown: Vec<_> = editor
        .children
        .iter()
        .filter_map(|c| c.text.as_deref())
        .collect();
    assert_eq!(shown, ["Early check-in, please."], "{editor:?}");
    Ok(())
}

/// The name an action checks its target by, and the option it picks, are the names the
/// observation gave: what a person reads, not the icon words and hidden text behind them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controls_named_by_what_a_person_reads_are_acted_on_by_that_name() -> Result<()> {
    let h = Harness::start().await?;
    let tab = open(&h, "observe/names.html").await?;
    let obs = observe(&tab).await?;

    let chosen = act(
        &tab,
        json!({"kind": "select", "target": target(&obs, "city")?, "value": "Lyon"}),
    )
    .await?;
    assert_eq!(chosen["kind"], "done", "{chosen}");
    assert_eq!(tab.page.text_of("#chosen").await?, "Chose option-lyon");

    // Before it clicks, the content script checks the target still has the name it was seen by.
    let clicked = act(
        &tab,
        json!({"kind": "click", "target": target(&obs, "card")?}),
    )
    .await?;
    assert_eq!(clicked["kind"], "navigated", "{clicked}");
    assert!(
        clicked["url"]
            .as_str()
            .is_some_and(|u| u.ends_with("/observe/plain-target.html")),
        "{clicked}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_that_never_settles_is_reported_not_waited_on() -> Result<()> {
    let h = Harness::start().await?;
    let tab = open(&h, "observe/gestures.html").await?;
    let obs = observe(&tab).await?;
    let outcome = act(
        &tab,
        json!({"kind": "click", "target": target(&obs, "live-start")?}),
    )
    .await?;
    assert_eq!(outcome["kind"], "never_settled", "{outcome}");
    let waited = outcome["waited_ms"].as_u64().unwrap();
    assert!((3_000..10_000).contains(&waited), "{outcome}");
    // The click itself happened: the ticker runs.
    tab.page
        .wait_for(
            "Number(document.getElementById('price').textContent) > 100",
            WAIT,
        )
        .await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn values_said_as_people_say_them_reach_fields_in_their_own_format() -> Result<()> {
    let h = Harness::start().await?;
    let tab = open(&h, "act/values.html").await?;
    let obs = observe(&tab).await?;
    // A text field that asks for a number's keyboard says so in the observation.
    let tip = find(&obs.root, "tip").context("#tip")?;
    assert!(
        tip.attributes
            .iter()
            .any(|(k, v)| k == "inputmode" && v == "decimal"),
        "{:?}",
        tip.attributes
    );
    for (id, kind, value) in [
        ("country", "select", "the UK"),
        ("month", "select", "March"),
        ("amount", "type", "$1,250.50"),
        ("tip", "type", "twenty euros"),
        ("phone", "type", "+44 20 7123 4567"),
        ("date", "type", "14 March 2027"),
    ] {
        let mut action = json!({"kind": kind, "target": target(&obs, id)?});
        if kind == "select" {
            action["value"] = json!(value);
        } else {
            action["text"] = json!(value);
            action["clear"] = json!(true);
        }
        let done = act(&tab, action).await?;
        assert_eq!(done["kind"], "done", "{id} {value}: {done}");
    }
    // A name that no option goes by is still refused.
    let unknown = act(
        &tab,
        json!({"kind": "select", "target": target(&obs, "country")?, "value": "Narnia"}),
    )
    .await?;
    assert_eq!(unknown["kind"], "value_rejected", "{unknown}");
    let values: Value = tab
        .page
        .run_js("return ['country','month','amount','tip','phone','date'].map(id => document.getElementById(id).value);")
        .await?;
    assert_eq!(
        values,
        json!([
            "GB",
            "03",
            "1250.50",
            "20",
            "+44 20 7123 4567",
            "2027-03-14"
        ])
    );
    Ok(())
}
