//! Observation extraction: the content script's Rust/WASM walk against a plain-JS
//! port of the same algorithm (`benches/reference/observe.js`), on the same page.
//!
//! For each size of `tests/fixtures/observe/generated.html?n=N` it opens the page,
//! injects the reference into the page's main world (CDP `Runtime.evaluate` of the
//! file) and into the content script's own isolated world, checks that both walks produce
//! the same observation, then interleaves timed runs (the order turning from run to run):
//! the Rust/WASM walk is asked for from the side-panel page (`chrome.tabs.sendMessage`)
//! and timed by the observation's own `snapshot_ms` (`performance.now()` around the
//! walk, inside the page); the reference is timed
//! inside the page with `performance.now()` around `__itineroReferenceObserve()`.
//! The same wasm module is also loaded into the page's main world and its walk timed there
//! (RustM), so that the two languages are compared in each world: Rust/JSi in the content
//! script's, RustM/JS in the page's. All exclude messaging and serialisation. It also
//! times one hit test on each page, counts the reference's hit tests and how many of them a census of the whole
//! page's possible covers would have found unneeded, counts the DOM calls the
//! reference makes per element (a separate, instrumented run), times the main DOM
//! calls in the main world and in an isolated one (what any content script pays more)
//! and prints the size of each fixture page's observation as the model sees it.
//!
//! Run: `cargo build --release -p itinero-host && cargo bench --bench observe_extraction`
//! (`ITINERO_BENCH_PROFILE=1` adds a sampled CPU profile of the walks at n = 5000: the
//! Rust/WASM time charged to the boundary crossings it is spent in, and the reference in
//! either world; with `ITINERO_WASM_NAMES=1` too, the Rust functions' own time;
//! `ITINERO_BENCH_N=5000` times that size only).

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{bail, Context, Result};
use chromiumoxide::cdp::js_protocol::runtime::{
    self, EvaluateParams, EventExecutionContextCreated, ExecutionContextId,
};
use chromiumoxide::Page;
use futures::StreamExt;
use itinero::harness::stats::{paired_ratio, percentile, sorted};
use itinero::harness::tree::flatten;
use itinero::harness::{
    content_script_frame, workspace_root, Harness, PageExt, EXTENSION_ID, WAIT,
};
use itinero_shared::observation::{DomNode, Observation};
use serde::Deserialize;
use serde_json::Value;

/// The plain-JS reference, injected into each page's main world.
const REFERENCE_JS: &str = include_str!("reference/observe.js");

const WARMUP: usize = 3;
/// (elements, timed runs of each implementation). A run at 5 000 takes well under a second,
/// and the paired ratios' intervals narrow with the square root of the runs: at 40 they
/// spanned 5–10 %, wider than the difference they were meant to show.
const SIZES: &[(usize, usize)] = &[(1000, 160), (5000, 160), (20000, 48)];
/// Walks of each kind sampled by the profile (`ITINERO_BENCH_PROFILE`): some thousands of samples.
const PROFILED_WALKS: usize = 40;
/// Page size of the instrumented (call-counting) run.
const INSTRUMENTED_N: usize = 5000;

#[derive(Debug, Deserialize)]
struct RustRun {
    snapshot_ms: f64,
    /// Request → reply in the panel, including messaging and serialisation (for context only).
    roundtrip_ms: f64,
    indexed: usize,
}

#[derive(Debug, Deserialize)]
struct JsRun {
    ms: f64,
    indexed: usize,
}

/// Counts the indexed nodes of the observation `obs` (a JS expression) in the page; a JS snippet.
const COUNT_INDEXED: &str = r#"
  const countIndexed = (node) => {
    let n = node.index !== undefined && node.index !== null ? 1 : 0;
    for (const c of node.children || []) n += countIndexed(c);
    return n;
  };"#;

/// The tab showing `url`, as the extension sees it.
async fn tab_id(panel: &Page, url: &str) -> Result<i64> {
    let url_js = serde_json::to_string(url)?;
    let id = panel
        .wait_for(
            &format!(
                "(async () => (await chrome.tabs.query({{}})).find(t => t.url === {url_js})?.id)()"
            ),
            WAIT,
        )
        .await
        .with_context(|| format!("no tab shows {url}"))?;
    id.as_i64().context("tab id is not a number")
}

/// Asks the content script of `tab` for an observation and returns it whole.
async fn rust_observation(panel: &Page, tab: i64) -> Result<Observation> {
    let v = panel
        .wait_for(
            &format!(
                "(async () => await chrome.tabs.sendMessage({tab}, {{ kind: 'observe' }}, {{ frameId: 0 }}))()"
            ),
            WAIT,
        )
        .await
        .context("the content script did not answer `observe`")?;
    Ok(serde_json::from_value(v)?)
}

async fn rust_run(panel: &Page, tab: i64) -> Result<RustRun> {
    panel
        .run_js(&format!(
            r#"{COUNT_INDEXED}
            const t0 = performance.now();
            const obs = await chrome.tabs.sendMessage({tab}, {{ kind: 'observe' }}, {{ frameId: 0 }});
            const roundtrip_ms = performance.now() - t0;
            return {{ snapshot_ms: obs.snapshot_ms, roundtrip_ms, indexed: countIndexed(obs.root) }};"#
        ))
        .await
}

const JS_RUN: &str = r#"
        const t0 = performance.now();
        const obs = window.__itineroReferenceObserve();
        const ms = performance.now() - t0;
        return { ms, indexed: countIndexed(obs.root) };"#;

async fn js_run(page: &Page) -> Result<JsRun> {
    page.run_js(&format!("{COUNT_INDEXED}{JS_RUN}")).await
}

/// Loads the content script's own module (`pkg/content/`, web-accessible) into the page's main world, where
/// the walk is then asked for with no messaging (`observe_page`): the same Rust/WASM walk with
/// the main world's DOM bindings, beside the reference there. Only the bench does this; the
/// content script cannot leave its isolated world (see ARCHITECTURE.md).
async fn load_wasm_in_main_world(page: &Page) -> Result<()> {
    let base = format!("chrome-extension://{EXTENSION_ID}/pkg/content/");
    let loaded: bool = page
        .run_js(&format!(
            r#"const m = await import('{base}itinero_content.js');
            await m.default({{ module_or_path: '{base}itinero_content_bg.wasm' }});
            window.__itineroWasmObserve = () => JSON.parse(m.observe_page());
            return typeof m.observe_page === 'function';"#
        ))
        .await
        .context("loading the extension's wasm module into the page's main world")?;
    if !loaded {
        bail!("the extension's module has no observe_page");
    }
    Ok(())
}

/// The Rust/WASM walk in the page's main world (see [`load_wasm_in_main_world`]), timed as
/// the content script's is: by its own `snapshot_ms`.
async fn rust_run_main_world(page: &Page) -> Result<JsRun> {
    page.run_js(&format!(
        r#"{COUNT_INDEXED}
        const obs = window.__itineroWasmObserve();
        return {{ ms: obs.snapshot_ms, indexed: countIndexed(obs.root) }};"#
    ))
    .await
}

/// The reference timed in `world`, the content script's isolated world (see [`content_script_world`]).
async fn js_run_isolated(page: &Page, world: ExecutionContextId) -> Result<JsRun> {
    let v = page
        .eval_in_world(world, &format!("(() => {{ {COUNT_INDEXED}{JS_RUN} }})()"))
        .await?;
    Ok(serde_json::from_value(v)?)
}

/// The content script's own isolated world in the page's top frame, with the reference put
/// there too: the plain-JS walk then runs where the Rust/WASM walk runs, with the same DOM
/// bindings and the same heap. (A world made apart with `Page.createIsolatedWorld` measured
/// some 3–5 % slower for the same script.)
async fn content_script_world(page: &Page) -> Result<ExecutionContextId> {
    let frame = page
        .mainframe()
        .await?
        .context("the page has no main frame")?;
    let mut created = page
        .event_listener::<EventExecutionContextCreated>()
        .await?;
    // Enabled anew, the domain reports every context that exists already.
    page.execute(runtime::DisableParams::default()).await?;
    page.execute(runtime::EnableParams::default()).await?;
    let world = tokio::time::timeout(WAIT, async {
        while let Some(event) = created.next().await {
            if content_script_frame(&event.context) == Some(frame.inner().as_str()) {
                return Some(event.context.id);
            }
        }
        None
    })
    .await
    .ok()
    .flatten()
    .context("the content script's world was not reported for the page's top frame")?;
    page.eval_in_world(world, REFERENCE_JS)
        .await
        .context("injecting benches/reference/observe.js into the content script's world")?;
    if page
        .eval_in_world(
            world,
            "typeof window.__itineroReferenceObserve === 'function'",
        )
        .await?
        != Value::Bool(true)
    {
        bail!(
            "the reference did not define window.__itineroReferenceObserve in the content script's world"
        );
    }
    Ok(world)
}

/// Injects the reference into the page's main world, as the file's text.
async fn inject_reference(page: &Page) -> Result<()> {
    let params = EvaluateParams::builder()
        .expression(REFERENCE_JS)
        .build()
        .map_err(anyhow::Error::msg)?;
    page.evaluate_expression(params)
        .await
        .context("injecting benches/reference/observe.js")?;
    let ok: bool = page
        .run_js("return typeof window.__itineroReferenceObserve === 'function';")
        .await?;
    if !ok {
        bail!("the reference did not define window.__itineroReferenceObserve");
    }
    Ok(())
}

/// The reference's observation as JSON, and parsed.
async fn js_observation(page: &Page) -> Result<(Value, Observation)> {
    let v: Value = page
        .run_js("return window.__itineroReferenceObserve();")
        .await?;
    let obs = serde_json::from_value(v.clone())
        .context("the reference's output is not an Observation")?;
    Ok((v, obs))
}

fn clear_volatile(node: &mut DomNode) {
    node.is_new = false;
    for c in &mut node.children {
        clear_volatile(c);
    }
}

/// Where a node is, for a difference report.
fn label(n: &DomNode) -> String {
    match (&n.fingerprint, &n.text) {
        (Some(fp), _) => fp.path.clone(),
        (None, Some(t)) => format!("#text {:?}", t.chars().take(40).collect::<String>()),
        (None, None) => format!("<{}> at {:?}", n.tag, n.rect),
    }
}

/// First path where `a` and `b` (JSON) disagree.
fn first_json_difference(a: &Value, b: &Value, at: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter().find_map(|k| match (x.get(k), y.get(k)) {
                (Some(p), Some(q)) => first_json_difference(p, q, &format!("{at}.{k}")),
                (p, q) => Some(format!("{at}.{k}: {p:?} vs {q:?}")),
            })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| first_json_difference(p, q, &format!("{at}[{i}]"))),
        (Value::Number(x), Value::Number(y)) if x.as_f64() == y.as_f64() => None,
        _ if a == b => None,
        _ => Some(format!("{at}: {a} vs {b}")),
    }
}

/// The reference's JSON has exactly the keys serde writes for the parsed observation.
fn shape_difference(js: &Value, serde_form: &Value, at: &str) -> Option<String> {
    match (js, serde_form) {
        (Value::Object(x), Value::Object(y)) => {
            let kx: BTreeSet<&String> = x.keys().collect();
            let ky: BTreeSet<&String> = y.keys().collect();
            if kx != ky {
                return Some(format!(
                    "{at}: keys {:?} vs serde's {:?}",
                    kx.symmetric_difference(&ky).collect::<Vec<_>>(),
                    ky
                ));
            }
            x.iter()
                .find_map(|(k, v)| shape_difference(v, &y[k], &format!("{at}.{k}")))
        }
        (Value::Array(x), Value::Array(y)) => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| shape_difference(p, q, &format!("{at}[{i}]"))),
        _ => None,
    }
}

/// Compares the two observations; returns (indexed by Rust, indexed by JS, report lines).
fn compare(rust: &Observation, js: &Observation, js_json: &Value) -> (usize, usize, Vec<String>) {
    let mut rust = rust.clone();
    let mut js = js.clone();
    rust.snapshot_ms = 0.0;
    js.snapshot_ms = 0.0;
    clear_volatile(&mut rust.root);
    clear_volatile(&mut js.root);
    let mut report = Vec::new();
    if let Some(d) = shape_difference(
        js_json,
        &serde_json::to_value(js.clone()).expect("serialises"),
        "",
    ) {
        report.push(format!("JSON shape differs from serde's: {d}"));
    }
    let (mut rn, mut jn) = (Vec::new(), Vec::new());
    flatten(&rust.root, &mut rn);
    flatten(&js.root, &mut jn);
    let indexed = |nodes: &[&DomNode]| -> BTreeMap<String, u32> {
        nodes
            .iter()
            .filter_map(|n| Some((n.fingerprint.as_ref()?.path.clone(), n.index?)))
            .collect()
    };
    let (ri, ji) = (indexed(&rn), indexed(&jn));
    let (r_count, j_count) = (
        rn.iter().filter(|n| n.index.is_some()).count(),
        jn.iter().filter(|n| n.index.is_some()).count(),
    );
    let mut diffs = Vec::new();
    for (path, i) in &ri {
        match ji.get(path) {
            None => diffs.push(format!("indexed only by Rust: {path} [{i}]")),
            Some(j) if j != i => diffs.push(format!("{path}: index {i} (Rust) vs {j} (JS)")),
            _ => {}
        }
    }
    for (path, j) in &ji {
        if !ri.contains_key(path) {
            diffs.push(format!("indexed only by JS: {path} [{j}]"));
        }
    }
    if !diffs.is_empty() {
        report.push(format!("{} indexed elements differ, first:", diffs.len()));
        report.extend(diffs.into_iter().take(8).map(|d| format!("  {d}")));
    }
    if rust != js {
        let strip = |n: &DomNode| {
            let mut n = n.clone();
            n.children.clear();
            serde_json::to_value(n).expect("serialises")
        };
        let differing: Vec<String> = rn
            .iter()
            .zip(&jn)
            .filter_map(|(a, b)| {
                first_json_difference(&strip(a), &strip(b), "")
                    .map(|d| format!("{}: {d}", label(a)))
            })
            .collect();
        report.push(format!(
            "whole observation differs: {} vs {} nodes, {} node pairs differ in document order{}",
            rn.len(),
            jn.len(),
            differing.len(),
            if differing.is_empty() { "" } else { ", first:" }
        ));
        report.extend(differing.into_iter().take(5).map(|d| format!("  {d}")));
        let top = |o: &Observation| {
            let mut o = o.clone();
            o.root = DomNode::default();
            serde_json::to_value(o).expect("serialises")
        };
        if let Some(d) = first_json_difference(&top(&rust), &top(&js), "observation") {
            report.push(format!("  page-level field: {d}"));
        }
    }
    (r_count, j_count, report)
}

/// Wraps the DOM calls the reference makes with counters, runs it once, restores them.
const INSTRUMENTED_RUN: &str = r#"
  const counts = {};
  const restore = [];
  const wrap = (obj, name, label) => {
    const orig = obj[name];
    counts[label] = 0;
    obj[name] = function (...args) { counts[label]++; return orig.apply(this, args); };
    restore.push(() => { obj[name] = orig; });
  };
  const wrapGetter = (obj, name, label) => {
    let owner = obj;
    while (owner && !Object.getOwnPropertyDescriptor(owner, name)) owner = Object.getPrototypeOf(owner);
    const d = Object.getOwnPropertyDescriptor(owner, name);
    counts[label] = 0;
    Object.defineProperty(owner, name, { ...d, get() { counts[label]++; return d.get.call(this); } });
    restore.push(() => Object.defineProperty(owner, name, d));
  };
  wrap(Element.prototype, 'checkVisibility', 'checkVisibility');
  wrap(window, 'getComputedStyle', 'getComputedStyle');
  wrap(CSSStyleDeclaration.prototype, 'getPropertyValue', 'getPropertyValue');
  wrap(Element.prototype, 'getBoundingClientRect', 'Element.getBoundingClientRect');
  wrap(Range.prototype, 'getBoundingClientRect', 'Range.getBoundingClientRect');
  wrap(Document.prototype, 'createRange', 'createRange');
  wrap(Document.prototype, 'elementFromPoint', 'elementFromPoint');
  wrap(Element.prototype, 'getAttribute', 'getAttribute');
  wrap(Element.prototype, 'hasAttribute', 'hasAttribute');
  wrapGetter(Node.prototype, 'textContent', 'textContent');
  wrapGetter(Node.prototype, 'firstChild', 'firstChild');
  wrapGetter(Node.prototype, 'nextSibling', 'nextSibling');
  wrapGetter(Node.prototype, 'parentNode', 'parentNode');
  wrapGetter(window, 'scrollY', 'scrollY');
  let obs;
  try { obs = window.__itineroReferenceObserve(); } finally { restore.reverse().forEach((r) => r()); }
  let kept = 0, texts = 0;
  const walk = (n) => { kept++; if (n.tag === '#text') texts++; (n.children || []).forEach(walk); };
  walk(obs.root);
  return { counts, elements: document.body.getElementsByTagName('*').length,
           textNodes: document.evaluate('count(//body//text()[normalize-space()])', document, null,
                                        XPathResult.NUMBER_TYPE, null).numberValue,
           kept, texts };
"#;

/// Per-call cost of the main DOM calls in this page, in µs, each over every element (the
/// median of five passes): run in the main world and in an isolated one.
const CALL_COSTS: &str = r#"
  const els = [...document.body.getElementsByTagName('*')];
  const time = (f) => {
    const passes = [];
    for (let k = 0; k < 5; k++) { const t0 = performance.now(); for (const e of els) f(e); passes.push((performance.now() - t0) * 1000 / els.length); }
    return passes.sort((a, b) => a - b)[2];
  };
  const opts = { checkOpacity: true, checkVisibilityCSS: true };
  let sink = 0;
  const out = {
    checkVisibility: time((e) => { sink += e.checkVisibility(opts) ? 1 : 0; }),
    'getComputedStyle + cursor + overflow-y': time((e) => { const s = getComputedStyle(e); sink += s.getPropertyValue('cursor').length + s.getPropertyValue('overflow-y').length; }),
    getBoundingClientRect: time((e) => { sink += e.getBoundingClientRect().width; }),
    'elementFromPoint (rect centre)': time((e) => { const r = e.getBoundingClientRect(); const t = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2); sink += t ? 1 : 0; }),
    'getAttribute x4': time((e) => { sink += (e.getAttribute('role') || e.getAttribute('id') || e.getAttribute('name') || e.getAttribute('aria-label') || '').length; }),
    'localName + firstChild/nextSibling': time((e) => { sink += e.localName.length; for (let c = e.firstChild; c; c = c.nextSibling) sink++; }),
  };
  out.sink = sink > -1;
  return out;
"#;

/// What one hit test costs on this page: `elementFromPoint` at the centre of each link, button
/// and field in view, all in a row (so nothing else is timed), in µs; the median of five passes.
/// Its cost grows with the page, not with what is in view.
const HIT_COST: &str = r#"
  const pts = [];
  for (const e of document.querySelectorAll('a, button, input, select, textarea')) {
    const r = e.getBoundingClientRect();
    const x = r.x + r.width / 2, y = r.y + r.height / 2;
    if (r.width > 0 && r.height > 0 && x >= 0 && y >= 0 && x < innerWidth && y < innerHeight) pts.push([x, y]);
  }
  const passes = [];
  let sink = 0;
  for (let k = 0; k < 5; k++) {
    const t0 = performance.now();
    for (const [x, y] of pts) sink += document.elementFromPoint(x, y) ? 1 : 0;
    passes.push((performance.now() - t0) * 1000 / Math.max(1, pts.length));
  }
  passes.sort((a, b) => a - b);
  return { points: pts.length, us: passes[2], sink: sink > -1 };
"#;

/// How many of the reference walk's hit tests something could decide without one: the points
/// it tests (recorded), against every rendered element that could paint over another
/// (positioned, transformed, floated, translucent, filtered) and every clipping one
/// (overflow, clip-path). A point needs its hit test when such a cover's box holds it and
/// the cover does not hold what was hit, or when what was hit has a clipping ancestor.
const HIT_CENSUS: &str = r#"
  const points = [];
  const original = Document.prototype.elementFromPoint;
  Document.prototype.elementFromPoint = function (x, y) {
    const top = original.call(this, x, y);
    points.push([x, y, top]);
    return top;
  };
  try { window.__itineroReferenceObserve(); } finally { Document.prototype.elementFromPoint = original; }
  const covers = [];
  const clips = [];
  for (const e of document.body.getElementsByTagName('*')) {
    const s = getComputedStyle(e);
    if (s.display === 'none') continue;
    if (s.position !== 'static' || s.transform !== 'none' || s.float !== 'none' || Number(s.opacity) < 1 || s.filter !== 'none') {
      covers.push([e, e.getBoundingClientRect()]);
    }
    if (s.overflowX !== 'visible' || s.overflowY !== 'visible' || s.clipPath !== 'none') clips.push(e);
  }
  let covered = 0, clipped = 0;
  for (const [x, y, top] of points) {
    if (top === null) continue;
    if (covers.some(([c, r]) => x >= r.x && x < r.x + r.width && y >= r.y && y < r.y + r.height && !c.contains(top))) covered += 1;
    else if (clips.some((c) => c !== top && c.contains(top))) clipped += 1;
  }
  const { elements, notEntered } = window.__itineroReferenceObserve.census;
  return { points: points.length, covers: covers.length, covered, clipped, elements, notEntered };
"#;

/// Samples the renderer's V8 isolate (main world, isolated worlds and wasm alike) during
/// `walks`; prints where the time went: self time by function, and, for the Rust/WASM walk,
/// time by boundary crossing (the JS function that wasm called, nearest to the sample),
/// split into the DOM call itself, string conversion and other JS (glue, read.js).
async fn cpu_profile(
    page: &Page,
    what: &str,
    walks: impl std::future::Future<Output = Result<()>>,
) -> Result<()> {
    use chromiumoxide::cdp::js_protocol::profiler::{
        EnableParams, SetSamplingIntervalParams, StartParams, StopParams,
    };
    use std::collections::HashMap;
    page.execute(EnableParams::default()).await?;
    page.execute(SetSamplingIntervalParams::new(100)).await?;
    page.execute(StartParams::default()).await?;
    walks.await?;
    let profile = page.execute(StopParams::default()).await?.result.profile;
    // id → (function name, file name of its script)
    let mut parent = HashMap::new();
    let mut frame: HashMap<i64, (String, String)> = HashMap::new();
    for n in &profile.nodes {
        for c in n.children.iter().flatten() {
            parent.insert(*c, n.id);
        }
        let file = n.call_frame.url.rsplit('/').next().unwrap_or("").to_owned();
        let name = match n.call_frame.function_name.as_str() {
            // Where in its script: glue wrappers (e.g. wasm-bindgen's `handleError`) have no name.
            "" if !file.is_empty() => format!("(anonymous:{})", n.call_frame.line_number + 1),
            "" => "(anonymous)".to_owned(),
            f => f.to_owned(),
        };
        frame.insert(n.id, (name, file));
    }
    let key = |id: &i64| {
        let (name, file) = &frame[id];
        if file.is_empty() {
            name.clone()
        } else {
            format!("{name} @{file}")
        }
    };
    let samples = profile.samples.unwrap_or_default();
    let all = samples.len();
    let busy: Vec<i64> = samples
        .into_iter()
        .filter(|s| !matches!(frame[s].0.as_str(), "(idle)" | "(program)" | "(root)"))
        .collect();
    let mut self_count: BTreeMap<String, usize> = BTreeMap::new();
    // crossing → [total, DOM call, string conversion]
    let mut crossing: BTreeMap<String, [usize; 3]> = BTreeMap::new();
    for s in &busy {
        *self_count.entry(key(s)).or_default() += 1;
        let (leaf, leaf_file) = &frame[s];
        // The crossing is the JS function a wasm frame called: a wasm-bindgen shim
        // (`__wbg_getAttribute_c7b80d4010284561` → `getAttribute`), or a read.js function
        // imported as it is.
        let mut id = Some(*s);
        let mut called = None;
        let mut found = None;
        while let Some(i) = id {
            let (_, file) = &frame[&i];
            if file.ends_with(".wasm") {
                found = called.map(|c| {
                    let name = frame[&c].0.as_str();
                    let short = name
                        .trim_start_matches("__wbg_")
                        .trim_start_matches("__wbindgen_");
                    match short.rsplit_once('_') {
                        Some((head, hash)) if hash.len() == 16 => head.to_owned(),
                        _ => short.to_owned(),
                    }
                });
                break;
            }
            called = Some(i);
            id = parent.get(&i).copied();
        }
        let bucket = match found {
            Some(c) => c,
            None if leaf_file.ends_with(".wasm") => "(Rust code in wasm)".to_owned(),
            None => format!("(no crossing) {leaf}"),
        };
        let e = crossing.entry(bucket).or_default();
        e[0] += 1;
        let strings = matches!(
            leaf.as_str(),
            "decode"
                | "encodeInto"
                | "encode"
                | "decodeText"
                | "getStringFromWasm0"
                | "passStringToWasm0"
        );
        if strings {
            e[2] += 1;
        } else if leaf_file.is_empty() && !leaf.starts_with('(') {
            e[1] += 1;
        }
    }
    let total = busy.len().max(1) as f64;
    let pct = |c: usize| c as f64 * 100.0 / total;
    let mut v: Vec<(&String, &usize)> = self_count.iter().collect();
    v.sort_by(|a, b| b.1.cmp(a.1));
    println!(
        "\nCPU profile, {what}: {} busy samples of {all} (100 µs); self time:",
        busy.len()
    );
    for (k, c) in v.into_iter().take(40) {
        println!("    {:5.1}%  {k}", pct(*c));
    }
    // With function names in the module (`ITINERO_WASM_NAMES=1`), where the Rust code's own
    // time goes, crate hashes cut out of the names.
    let mut rust: Vec<(String, usize)> = self_count
        .iter()
        .filter(|(k, _)| k.ends_with(".wasm") && !k.starts_with("wasm-function["))
        .map(|(k, c)| (strip_hashes(k.rsplit_once(" @").map_or(k, |p| p.0)), *c))
        .collect();
    if !rust.is_empty() {
        rust.sort_by_key(|r| std::cmp::Reverse(r.1));
        println!("  Rust functions in wasm, self time:");
        for (k, c) in rust.into_iter().take(30) {
            println!(
                "    {:5.1}%  {}",
                pct(c),
                k.chars().take(150).collect::<String>()
            );
        }
    }
    if crossing.keys().any(|k| !k.starts_with('(')) {
        let mut v: Vec<(&String, &[usize; 3])> = crossing.iter().collect();
        v.sort_by(|a, b| b.1[0].cmp(&a.1[0]));
        println!("  by boundary crossing (total = DOM call + strings + other JS):");
        for (k, c) in v.into_iter().take(25) {
            println!(
                "    {:5.1}% = {:5.1}% + {:5.1}% + {:5.1}%  {k}",
                pct(c[0]),
                pct(c[1]),
                pct(c[2]),
                pct(c[0] - c[1] - c[2])
            );
        }
    }
    Ok(())
}

/// `foo[1a2b3c4d5e6f7a8b]::bar` → `foo::bar`: rustc's crate hashes in symbol names.
fn strip_hashes(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(i) = rest.find('[') {
        out.push_str(&rest[..i]);
        match rest[i..].find(']') {
            Some(j) if rest[i + 1..i + j].bytes().all(|b| b.is_ascii_hexdigit()) => {
                rest = &rest[i + j + 1..];
            }
            _ => {
                out.push('[');
                rest = &rest[i + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

async fn token_table(h: &Harness, panel: &Page) -> Result<()> {
    let dir = workspace_root().join("tests/fixtures/observe");
    let mut names: Vec<String> = std::fs::read_dir(&dir)?
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.ends_with(".html") && n != "generated.html")
        .collect();
    names.sort();
    println!();
    println!("observation size as the model sees it: render(&obs, &Default::default()) (budget 2000 tokens)");
    println!(
        "{:<22} {:>7} {:>7} {:>9} {:>5}  same as JS reference",
        "fixture", "tokens", "chars", "elements", "cut"
    );
    for name in names {
        let url = h.fixture_url(&format!("observe/{name}"));
        let page = h.chromium.open(&url).await?;
        page.wait_for("document.readyState === 'complete'", WAIT)
            .await?;
        let tab = tab_id(panel, &url).await?;
        let obs = rust_observation(panel, tab).await?;
        let rendered = itinero_host::agent::render::render(&obs, &Default::default());
        inject_reference(&page).await?;
        let (js_json, js_obs) = js_observation(&page).await?;
        let (_, _, report) = compare(&obs, &js_obs, &js_json);
        println!(
            "{:<22} {:>7} {:>7} {:>4}/{:<4} {:>5}  {}",
            name,
            rendered.tokens,
            rendered.text.chars().count(),
            rendered.shown_elements,
            rendered.total_elements,
            if rendered.cut.is_some() { "yes" } else { "no" },
            if report.is_empty() {
                "yes".to_owned()
            } else {
                // The whole report would not fit a line: its summary lines and first example.
                let lines: Vec<&str> = report.iter().map(|l| l.trim()).take(3).collect();
                format!("no: {}", lines.join(" "))
            }
        );
        page.close().await?;
    }
    Ok(())
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<()> {
    let h = Harness::start().await?;
    let panel = h.open_panel().await?;
    let version: String = panel.run_js("return navigator.userAgent;").await?;
    println!("observation extraction: the Rust/WASM walk against a plain-JS port of it, each in the content script's isolated world and in the page's main world, same page");
    println!("browser: {version}");
    println!("warm-up {WARMUP} runs each; runs interleaved, the order of Rust, JS, JSi and RustM turning from run to run; times measured inside the page");
    println!();
    println!(
        "{:>6} {:>8} {:>9} {:>9} {:>5} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>12}",
        "n",
        "elements",
        "idx Rust",
        "idx JS",
        "runs",
        "Rust p50",
        "Rust p95",
        "JSi p50",
        "RustM p50",
        "JS p50",
        "JS p95",
        "Rust/JSi",
        "RustM/JS",
        "Rust rt p50"
    );
    let mut notes = Vec::new();
    // `ITINERO_BENCH_N=5000`: that size only, as when trying a change.
    let only: Option<usize> = std::env::var("ITINERO_BENCH_N")
        .ok()
        .map(|v| v.parse().context("ITINERO_BENCH_N is a number of elements"))
        .transpose()?;
    for &(n, runs) in SIZES.iter().filter(|(n, _)| only.is_none_or(|o| o == *n)) {
        let url = h.fixture_url(&format!("observe/generated.html?n={n}"));
        let page = h.chromium.open(&url).await?;
        let elements = page
            .wait_for(
                "document.readyState === 'complete' && window.__generated?.elements",
                WAIT,
            )
            .await?
            .as_u64()
            .unwrap_or(0);
        inject_reference(&page).await?;
        let world = content_script_world(&page).await?;
        load_wasm_in_main_world(&page).await?;
        let tab = tab_id(&panel, &url).await?;

        // Same result first: the whole observation, not only the timings.
        let rust_obs = rust_observation(&panel, tab).await?;
        let (js_json, js_obs) = js_observation(&page).await?;
        let (r_idx, j_idx, report) = compare(&rust_obs, &js_obs, &js_json);
        if !report.is_empty() {
            notes.push(format!("n={n}:"));
            notes.extend(report.into_iter().map(|l| format!("  {l}")));
        }
        let main_obs: Observation = page
            .run_js("return window.__itineroWasmObserve();")
            .await
            .context("the main world's Rust/WASM observation is not an Observation")?;
        let (_, _, report) = compare(&main_obs, &js_obs, &js_json);
        if !report.is_empty() {
            notes.push(format!(
                "n={n}, Rust/WASM in the main world against the reference:"
            ));
            notes.extend(report.into_iter().map(|l| format!("  {l}")));
        }

        let mut times: [Vec<f64>; 4] = Default::default();
        let mut rust_rt = Vec::new();
        for i in 0..WARMUP + runs {
            // The order turns from run to run: the walks share the page's heap, so the
            // garbage one leaves may be collected during whichever comes after it. (Collecting
            // it before each walk is no fairer: a forced full collection also throws away the
            // reference's compiled code and type feedback, which made it half as slow again.)
            let (mut r, mut j, mut ji, mut rm) = (None, None, None, None);
            for k in 0..4 {
                match (i + k) % 4 {
                    0 => r = Some(rust_run(&panel, tab).await?),
                    1 => j = Some(js_run(&page).await?),
                    2 => ji = Some(js_run_isolated(&page, world).await?),
                    _ => rm = Some(rust_run_main_world(&page).await?),
                }
            }
            let (r, j, ji, rm) = (
                r.context("no Rust run")?,
                j.context("no JS run")?,
                ji.context("no JSi run")?,
                rm.context("no RustM run")?,
            );
            if r.indexed != r_idx
                || j.indexed != j_idx
                || ji.indexed != j_idx
                || rm.indexed != r_idx
            {
                bail!(
                    "n={n}: indexed count changed between runs ({} / {} / {} isolated / {} Rust in the main world)",
                    r.indexed,
                    j.indexed,
                    ji.indexed,
                    rm.indexed
                );
            }
            if i >= WARMUP {
                for (t, ms) in times.iter_mut().zip([r.snapshot_ms, j.ms, ji.ms, rm.ms]) {
                    t.push(ms);
                }
                rust_rt.push(r.roundtrip_ms);
            }
        }
        let [rust_ms, js_ms, jsi_ms, rustm_ms] = times;
        let paired = [
            ("Rust/JSi", paired_ratio(&rust_ms, &jsi_ms)),
            ("RustM/JS", paired_ratio(&rustm_ms, &js_ms)),
            ("Rust/JS", paired_ratio(&rust_ms, &js_ms)),
            ("JSi/JS", paired_ratio(&jsi_ms, &js_ms)),
            ("Rust/RustM", paired_ratio(&rust_ms, &rustm_ms)),
        ];
        let (rs, rr, js, jsi, rm) = (
            sorted(rust_ms),
            sorted(rust_rt),
            sorted(js_ms),
            sorted(jsi_ms),
            sorted(rustm_ms),
        );
        println!(
            "{:>6} {:>8} {:>9} {:>9} {:>5} {:>6.1} ms {:>6.1} ms {:>6.1} ms {:>6.1} ms {:>6.1} ms {:>6.1} ms {:>9.2} {:>9.2} {:>9.1} ms",
            n,
            elements,
            r_idx,
            j_idx,
            runs,
            percentile(&rs, 50.0),
            percentile(&rs, 95.0),
            percentile(&jsi, 50.0),
            percentile(&rm, 50.0),
            percentile(&js, 50.0),
            percentile(&js, 95.0),
            percentile(&rs, 50.0) / percentile(&jsi, 50.0),
            percentile(&rm, 50.0) / percentile(&js, 50.0),
            percentile(&rr, 50.0),
        );
        let shown: Vec<String> = paired
            .iter()
            .map(|(what, r)| format!("{what} {:.3} ({:.3}–{:.3})", r.median, r.low, r.high))
            .collect();
        println!("{:>6}   paired: {}", "", shown.join(", "));

        let hit: Value = page.run_js(HIT_COST).await?;
        notes.push(format!(
            "n={n}: one hit test (elementFromPoint at the centre of each of the {} links, buttons and fields in view): {:.0} µs",
            hit["points"],
            hit["us"].as_f64().unwrap_or(f64::NAN)
        ));
        let census: Value = page.run_js(HIT_CENSUS).await?;
        let (points, covered, clipped) = (
            census["points"].as_u64().unwrap_or(0),
            census["covered"].as_u64().unwrap_or(0),
            census["clipped"].as_u64().unwrap_or(0),
        );
        let needless = points.saturating_sub(covered + clipped);
        notes.push(format!(
            "  the reference walk made {points} hit tests (only where a cover or clip it read could hide something); by the whole page's {} possible covers (positioned, transformed, floated, translucent, filtered) and clipping ancestors, {covered} are under a cover, {clipped} more under a clip, {needless} ({:.0} %) need none",
            census["covers"],
            100.0 * needless as f64 / points.max(1) as f64
        ));
        notes.push(format!(
            "  it entered {} of the page's {elements} elements; {} boxes wholly out of reach, with nothing in them that could be drawn within, were not entered",
            census["elements"], census["notEntered"]
        ));

        if n == INSTRUMENTED_N {
            notes.push(format!(
                "n={n}: JS reference, instrumented run (calls per element of the page):"
            ));
            let v: Value = page.run_js(INSTRUMENTED_RUN).await?;
            let per = v["elements"].as_f64().unwrap_or(1.0).max(1.0);
            notes.push(format!(
                "  page: {} elements, {} non-blank text nodes; observation keeps {} nodes ({} text)",
                v["elements"], v["textNodes"], v["kept"], v["texts"]
            ));
            if let Some(counts) = v["counts"].as_object() {
                let mut line = String::from(" ");
                for (k, c) in counts {
                    let c = c.as_f64().unwrap_or(0.0);
                    line.push_str(&format!(" {k} {c:.0} ({:.2}/el);", c / per));
                }
                notes.push(line);
            }
            // The same calls from an isolated world, where every content script runs: its
            // bindings are its own, and what they cost more is a tax on any content script.
            let main: Value = page.run_js(CALL_COSTS).await?;
            let isolated = page
                .eval_in_world(world, &format!("(() => {{ {CALL_COSTS} }})()"))
                .await?;
            let mut line = String::from(
                "  cost per call, µs, main world / isolated world (median of 5 passes over every element):",
            );
            if let Some(costs) = main.as_object() {
                for (k, c) in costs.iter().filter(|(k, _)| *k != "sink") {
                    let i = isolated[k].as_f64().unwrap_or(f64::NAN);
                    line.push_str(&format!(
                        " {k} {:.2} / {i:.2};",
                        c.as_f64().unwrap_or(f64::NAN)
                    ));
                }
            }
            notes.push(line);
        }
        if n == INSTRUMENTED_N && std::env::var_os("ITINERO_BENCH_PROFILE").is_some() {
            cpu_profile(&page, &format!("Rust/WASM walk x{PROFILED_WALKS}"), async {
                for _ in 0..PROFILED_WALKS {
                    rust_run(&panel, tab).await?;
                }
                Ok(())
            })
            .await?;
            cpu_profile(
                &page,
                &format!("Rust/WASM walk in the main world x{PROFILED_WALKS}"),
                async {
                    for _ in 0..PROFILED_WALKS {
                        rust_run_main_world(&page).await?;
                    }
                    Ok(())
                },
            )
            .await?;
            cpu_profile(&page, &format!("JS reference x{PROFILED_WALKS}"), async {
                for _ in 0..PROFILED_WALKS {
                    js_run(&page).await?;
                }
                Ok(())
            })
            .await?;
            cpu_profile(
                &page,
                &format!("JS reference in the content script's world x{PROFILED_WALKS}"),
                async {
                    for _ in 0..PROFILED_WALKS {
                        js_run_isolated(&page, world).await?;
                    }
                    Ok(())
                },
            )
            .await?;
        }
        page.close().await?;
    }
    println!("Rust = snapshot_ms of the content script's observation (walk only), in its isolated world; JSi = performance.now() around");
    println!("__itineroReferenceObserve() in that same world; RustM = the same wasm module's walk in the page's main world (snapshot_ms);");
    println!("JS = the reference in the main world. Same world, same DOM bindings: Rust/JSi and RustM/JS compare the languages;");
    println!("JSi/JS and Rust/RustM are what the isolated world costs. Ratios of p50s: below 1.0, the first is faster.");
    println!("Rust rt = panel → content script → panel round trip, for context.");
    println!("paired = median of each run's own ratio (the walks of one run are timed back to back), with its 95 % interval (sign test).");
    for n in notes {
        println!("{n}");
    }

    token_table(&h, &panel).await?;
    Ok(())
}
