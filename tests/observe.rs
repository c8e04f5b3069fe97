//! The observation, checked against what each fixture page declares about itself.
//!
//! Fixture elements carry `data-expect`: `indexed` (usable: must get an index,
//! with `data-name` / `data-states` when given), `occluded` (covered: no
//! index), `hidden` (invisible: absent), `text` / `text-hidden` (their text
//! must / must not appear in the page text). The test reads those marks from
//! the page, asks the content script for an observation, and lists every
//! mismatch, so a failure shows the whole picture at once.

use anyhow::{Context, Result};
use itinero::harness::tree::{find_by_id, flatten};
use itinero::harness::{Harness, PageExt, WAIT};
use itinero_shared::observation::{DomNode, Observation};
use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Deserialize)]
struct Mark {
    id: String,
    expect: String,
    name: Option<String>,
    states: Option<String>,
    text: String,
}

fn clean(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Opens `path`, observes it through the extension, and returns (observation, mismatches).
async fn check(h: &Harness, path: &str) -> Result<(Observation, Vec<String>)> {
    let (obs, problems, _, _) = check_open(h, path).await?;
    Ok((obs, problems))
}

/// Like [`check`], also returning the fixture's page and the panel page that observed it.
async fn check_open(
    h: &Harness,
    path: &str,
) -> Result<(
    Observation,
    Vec<String>,
    chromiumoxide::Page,
    chromiumoxide::Page,
)> {
    let url = h.fixture_url(path);
    let page = h.chromium.open(&url).await?;
    page.wait_for("document.readyState === 'complete'", WAIT)
        .await?;
    let marks: Vec<Mark> = page
        .run_js(
            r#"return [...document.querySelectorAll('[data-expect]')].map(e => ({
                 id: e.id, expect: e.dataset.expect, name: e.dataset.name ?? null,
                 states: e.dataset.states ?? null, text: e.textContent }));"#,
        )
        .await?;
    let panel = h.open_panel().await?;
    // The agent works on the tab the user sees; background tabs skip rendering work (IntersectionObserver).
    page.bring_to_front().await?;
    let obs = panel
        .tab_message_when_ready(&url, &serde_json::json!({"kind": "observe"}))
        .await?;
    let obs: Observation = serde_json::from_value(obs)?;
    let mut nodes = Vec::new();
    flatten(&obs.root, &mut nodes);
    let find = |m: &Mark| -> Vec<&DomNode> {
        nodes
            .iter()
            .copied()
            .filter(|n| {
                let fp = n.fingerprint.as_ref();
                if !m.id.is_empty() {
                    fp.and_then(|f| f.id.as_deref()) == Some(m.id.as_str())
                } else {
                    m.name.is_some() && n.name == m.name
                }
            })
            .collect()
    };
    let page_text = clean(&obs.text);
    let mut problems = Vec::new();
    for m in &marks {
        let label = if m.id.is_empty() {
            format!("{:?}", m.name)
        } else {
            format!("#{}", m.id)
        };
        let found = find(m);
        match m.expect.as_str() {
            "indexed" | "partial" => match found.iter().find(|n| n.index.is_some()) {
                None => problems.push(format!(
                    "{label}: expected an indexed element, found {found:?}"
                )),
                Some(n) => {
                    if let Some(name) = &m.name {
                        if n.name.as_deref() != Some(name.as_str()) {
                            problems.push(format!("{label}: name {:?}, expected {name:?}", n.name));
                        }
                    }
                    for s in m.states.as_deref().unwrap_or("").split_whitespace() {
                        if !n.states.iter().any(|x| x == s) {
                            problems
                                .push(format!("{label}: missing state {s} (has {:?})", n.states));
                        }
                    }
                }
            },
            "occluded" => {
                if found.iter().any(|n| n.index.is_some()) {
                    problems.push(format!("{label}: covered, but got an index"));
                }
            }
            "hidden" => {
                if !found.is_empty() {
                    problems.push(format!("{label}: hidden, but observed as {found:?}"));
                }
            }
            "text" => {
                let t = clean(&m.text);
                if !t.is_empty() && !page_text.contains(&t) {
                    problems.push(format!("{label}: text {t:?} missing from the page text"));
                }
            }
            "text-hidden" => {
                let t = clean(&m.text);
                if !t.is_empty() && page_text.contains(&t) {
                    problems.push(format!(
                        "{label}: hidden text {t:?} leaked into the page text"
                    ));
                }
            }
            other => problems.push(format!("{label}: unknown data-expect {other:?}")),
        }
    }
    Ok((obs, problems, page, panel))
}

async fn assert_fixture(path: &str) -> Result<Observation> {
    let h = Harness::start().await?;
    let (obs, problems) = check(&h, path).await?;
    assert!(
        problems.is_empty(),
        "{path}: {} mismatches (viewport {}x{}):\n  {}\n--- observation as the model sees it ---\n{}",
        problems.len(),
        obs.viewport.width,
        obs.viewport.height,
        problems.join("\n  "),
        itinero_host::agent::render::render(&obs, &Default::default()).text
    );
    Ok(obs)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_modal_covers_the_form_behind_it() -> Result<()> {
    let obs = assert_fixture("observe/modal.html").await?;
    let covered: Vec<_> = {
        let mut all = Vec::new();
        flatten(&obs.root, &mut all);
        all.into_iter()
            .filter(|n| n.occluded && n.fingerprint.is_some())
            .map(|n| n.occluded_by.clone())
            .collect()
    };
    assert!(!covered.is_empty());
    assert!(
        covered.iter().all(|b| b.is_some()),
        "every covered element says what covers it: {covered:?}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cookie_banner_covers_only_what_is_under_it() -> Result<()> {
    assert_fixture("observe/cookie-banner.html").await.map(drop)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sticky_header_covers_the_link_under_it() -> Result<()> {
    assert_fixture("observe/sticky-header.html").await.map(drop)
}

/// The observer hit-tests only where a cover or a clip could hide something: this page holds
/// the cases that rule must still catch (a cover escaping an off-screen box, a cover whose
/// content overflows it, a clip) and those it may skip (covers around or inside the target).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hit_tests_are_skipped_only_where_nothing_could_cover() -> Result<()> {
    let obs = assert_fixture("observe/overlap.html").await?;
    let mut all = Vec::new();
    flatten(&obs.root, &mut all);
    let by = |id: &str| {
        all.iter()
            .find(|n| n.attributes.iter().any(|(k, v)| k == "id" && v == id))
            .and_then(|n| n.occluded_by.clone())
    };
    assert!(
        by("under-promo").is_some_and(|b| b.contains("promo")),
        "the promo bar covers #under-promo: {:?}",
        by("under-promo")
    );
    assert!(
        by("under-tall").is_some_and(|b| b.contains("tall-content")),
        "the tall box's content covers #under-tall: {:?}",
        by("under-tall")
    );
    Ok(())
}

/// A box wholly outside a clip known to be exact is cut away without a hit test (which,
/// beyond the clip's edge, would blame whatever lies there): the scrolled-out link must be
/// left out, not called covered. The page's other links only seem to lie outside a clip
/// (positioned out of it, an inline box, a clip margin, a scaled ancestor) and must show.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clips_cut_away_only_what_they_surely_hide() -> Result<()> {
    assert_fixture("observe/clip.html").await.map(drop)
}

/// The walk does not enter a box far out of reach unless the page's style sheets say
/// something in it may be drawn elsewhere (read.js `farAndAlone`): each way content leaves
/// such a box is on the page, and each must still be found.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn content_drawn_in_view_from_a_faraway_box_is_found() -> Result<()> {
    let obs = assert_fixture("observe/far.html").await?;
    // The fixture's marks are read from the light DOM only; this one is in a shadow tree.
    assert!(
        indexed(&obs)
            .iter()
            .any(|n| n.name.as_deref() == Some("Fixed in a shadow tree")),
        "the custom element's fixed button is indexed"
    );
    Ok(())
}

/// A style sheet from another origin cannot be read, so nothing can be ruled out: every
/// faraway box is entered, and what its rules move into view is found.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_style_sheet_from_another_origin_rules_nothing_out() -> Result<()> {
    let h = Harness::start().await?;
    let css = h
        .other_origin_url("observe/far-cross.css")
        .replace(':', "%3A")
        .replace('/', "%2F");
    let path = format!("observe/far.html?xcss={css}");
    let (obs, problems) = check(&h, &path).await?;
    assert!(
        problems.is_empty(),
        "{path}: {}\n{}",
        problems.join("\n  "),
        itinero_host::agent::render::render(&obs, &Default::default()).text
    );
    Ok(())
}

/// Past 32 selectors that may move content (read.js `MAX_ESCAPERS`), testing far boxes
/// against them all would cost more than walking them: every far box is entered, so what the
/// last of 40 such rules moves into view is found.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_rule_limit_every_far_box_is_entered() -> Result<()> {
    let obs = assert_fixture("observe/far.html?many=40").await?;
    assert!(
        indexed(&obs)
            .iter()
            .any(|n| n.name.as_deref() == Some("Alone")),
        "the button the 40th rule fixes in view is indexed"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hidden_elements_and_their_text_stay_out() -> Result<()> {
    assert_fixture("observe/visibility.html").await.map(drop)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controls_have_their_names_and_states() -> Result<()> {
    assert_fixture("observe/controls.html").await.map(drop)
}

/// Icon words and glyphs marked `aria-hidden`, CSS-hidden spinners and tooltips, and blocks
/// written with no space between them name a control as a person reads it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_are_what_a_person_reads_not_the_markup_behind_them() -> Result<()> {
    let obs = assert_fixture("observe/names.html").await?;
    // Its options are named on their own: the list box does not say them again.
    let list = find_by_id(&obs.root, "cities").context("#cities is not in the observation")?;
    assert_eq!(list.name, None, "{list:?}");
    Ok(())
}

/// Text on a control's row reads on that control's line: in document order alone, a result's
/// price would have landed on the next result's line, and the model read it as that one's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_beside_a_control_reads_on_its_line() -> Result<()> {
    let obs = assert_fixture("observe/rows.html").await?;
    let text = itinero_host::agent::render::render(&obs, &Default::default()).text;
    let lines: Vec<&str> = text.lines().skip(1).collect();
    assert_eq!(
        lines,
        [
            "[0]<a id=r1 href=\"/observe/rows.html#wool\">Wool socks</a> 12.99 EUR in stock",
            "[1]<a id=r2 href=\"/observe/rows.html#cotton\">Cotton socks</a> 8.50 EUR 2 left",
            "[2]<a id=r3 href=\"/observe/rows.html#silk\">Silk socks</a> 30.00 EUR sold out",
            "By ordering you agree to our [3]<a id=terms href=\"/observe/rows.html#terms\">terms of \
             sale</a> , which say how returns work, what a refund covers and how long a delivery \
             may take.",
            "[4]<a id=card href=\"/observe/rows.html#alpaca\">Alpaca socks</a>",
            "45.00 EUR",
            "[5]<button id=next>Next page</button>",
        ],
        "{text}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_and_closed_shadow_roots_are_walked() -> Result<()> {
    assert_fixture("observe/shadow.html").await.map(drop)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn same_origin_iframes_are_walked_in_place() -> Result<()> {
    assert_fixture("observe/iframes.html").await.map(drop)
}

/// The indexed nodes of an observation, in order.
fn indexed(obs: &Observation) -> Vec<DomNode> {
    let mut nodes = Vec::new();
    flatten(&obs.root, &mut nodes);
    nodes
        .into_iter()
        .filter(|n| n.index.is_some())
        .cloned()
        .collect()
}

/// A long page is described near the viewport only: one viewport above it, two below,
/// one to either side (observe.rs `REACH_*`); what lies further shows once scrolled to,
/// and an action still finds an element by fingerprint wherever it went.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wasm2js_build_observes_a_large_page_under_a_strict_csp() -> Result<()> {
    let h = Harness::start().await?;
    let (obs, problems, page, panel) = check_open(&h, "observe/strict-long.html").await?;
    assert!(problems.is_empty(), "{problems:?}");
    let vh = obs.viewport.height;
    let first = indexed(&obs);
    // Search box + button, then a link and a button per row: 1,202 controls in all.
    assert!(
        first.len() > 20 && first.len() < 1202,
        "{} indexed: the top of the page, not all of it",
        first.len()
    );
    for n in &first {
        assert!(
            n.rect.y < 3.0 * vh && n.rect.y + n.rect.height > -vh,
            "{:?} at y = {} is out of reach of a {vh}-pixel viewport",
            n.name,
            n.rect.y
        );
    }
    let reached = first.last().unwrap().rect.y;
    assert!(
        reached > 2.5 * vh,
        "the walk stopped short, at y = {reached}"
    );
    assert!(obs.text.contains("Rated"), "page text is collected");
    assert!(obs.pages_below > 5.0, "pages below: {}", obs.pages_below);

    // Scrolled to the end, the last rows are there.
    let url = h.fixture_url("observe/strict-long.html");
    let observe = serde_json::json!({"kind": "observe"});
    page.run_js::<Value>("window.scrollTo(0, document.documentElement.scrollHeight); return null;")
        .await?;
    let end: Observation = serde_json::from_value(panel.tab_message(&url, &observe).await?)?;
    let last = indexed(&end);
    let add_600 = last.last().unwrap();
    assert_eq!(add_600.name.as_deref(), Some("Add 600 to cart"));
    assert!(last
        .iter()
        .all(|n| n.name.as_deref() != Some("Add 1 to cart")));

    // Back at the top, an action naming that button by a stale index finds it by fingerprint.
    page.run_js::<Value>("window.scrollTo(0, 0); return null;")
        .await?;
    let top: Observation = serde_json::from_value(panel.tab_message(&url, &observe).await?)?;
    assert!(indexed(&top)
        .iter()
        .all(|n| n.name.as_deref() != Some("Add 600 to cart")));
    let click = serde_json::json!({"kind": "act", "action": {"kind": "click", "target": {
        "index": add_600.index, "fingerprint": add_600.fingerprint}}});
    let outcome = panel.tab_message(&url, &click).await?;
    assert_eq!(outcome["kind"], "done", "{outcome}");
    let scrolled: f64 = page.run_js("return window.scrollY;").await?;
    assert!(
        scrolled > 10.0 * vh,
        "the click scrolled the button into view (scrollY {scrolled})"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn elements_that_appear_after_scrolling_are_marked_new() -> Result<()> {
    let h = Harness::start().await?;
    let (first, problems, _page, panel) = check_open(&h, "observe/infinite-scroll.html").await?;
    assert!(problems.is_empty(), "{problems:?}");
    let mut nodes = Vec::new();
    flatten(&first.root, &mut nodes);
    assert!(
        nodes.iter().all(|n| !n.is_new),
        "nothing is new in a first observation"
    );
    assert!(first.pages_below > 0.5);

    // Scroll as the agent would, through the content script; the page loads more items.
    let url = h.fixture_url("observe/infinite-scroll.html");
    let scroll = serde_json::json!({"kind": "act", "action": {"kind": "scroll", "direction": "down", "pages": 3}});
    let outcome = panel.tab_message(&url, &scroll).await?;
    assert_eq!(outcome["kind"], "done", "{outcome}");
    let observe = serde_json::json!({"kind": "observe"});
    let second: Observation = serde_json::from_value(panel.tab_message(&url, &observe).await?)?;
    let mut nodes = Vec::new();
    flatten(&second.root, &mut nodes);
    let named = |name: &str| {
        nodes
            .iter()
            .find(|n| n.name.as_deref() == Some(name))
            .copied()
    };
    assert!(!named("Item 1").expect("Item 1 is still there").is_new);
    assert!(named("Item 31").expect("a second batch loaded").is_new);
    assert!(
        second.pages_above > 0.5,
        "the page scrolled: {}",
        second.pages_above
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paint_order_follows_stacking_contexts() -> Result<()> {
    let obs = assert_fixture("observe/paint.html").await?;
    let mut indexed = indexed(&obs);
    indexed.sort_by_key(|n| n.paint_order);
    let order: Vec<&str> = indexed
        .iter()
        .filter_map(|n| n.fingerprint.as_ref()?.id.as_deref())
        .collect();
    assert_eq!(order, ["a", "b", "pos", "in-ctx", "z1", "z5", "modal-btn"]);
    Ok(())
}
