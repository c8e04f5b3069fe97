//! What starting the content script costs each frame: fetching the extension's module,
//! compiling and instantiating it, and entering `start_content`.
//!
//! Every frame of every page pays this before the agent can see or act in it, so it is paid
//! many times at once on a page with ads and embeds. Each load of
//! `tests/fixtures/load/frames.html` (a top frame and eight same-origin iframes) starts the
//! content script nine times; `frames-csp.html` is the same page under a CSP without
//! `'wasm-unsafe-eval'`, where the content script runs the wasm2js build instead. `content.js`
//! keeps `performance.now()` at its start, once the module is instantiated and once
//! `start_content` has returned, in a global of its isolated world, which this bench reads
//! through CDP in every frame's isolated world after each load. The first loads are left out:
//! they pay the browser's own cold start besides.
//!
//! Run: `cargo build --release -p itinero-host && cargo bench --bench content_load`
//! (`ITINERO_BENCH_ROUNDS=N` loads each page N times).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Context, Result};
use chromiumoxide::cdp::js_protocol::runtime::{EventExecutionContextCreated, ExecutionContextId};
use chromiumoxide::Page;
use futures::StreamExt;
use itinero::harness::stats::{percentile, sorted};
use itinero::harness::{content_script_frame, dist_dir, Harness, PageExt, WAIT};
use serde::Deserialize;

/// The fixture's frames: the top one and its eight iframes.
const FRAMES: usize = 9;
const WARMUP: usize = 2;
const ROUNDS: usize = 20;

/// What `content.js` recorded in one frame (milliseconds since the frame's time origin).
#[derive(Debug, Deserialize)]
struct Load {
    started: f64,
    loaded: f64,
    ready: f64,
    engine: String,
}

struct Case {
    page: &'static str,
    engine: &'static str,
}

const CASES: &[Case] = &[
    Case {
        page: "load/frames.html",
        engine: "wasm",
    },
    Case {
        page: "load/frames-csp.html",
        engine: "wasm2js",
    },
];

/// Loads `url` in `page` and returns what the content script recorded in each of its frames.
async fn load_once(page: &Page, url: &str) -> Result<Vec<Load>> {
    let mut created = page
        .event_listener::<EventExecutionContextCreated>()
        .await?;
    page.goto(url)
        .await
        .with_context(|| format!("opening {url}"))?;
    // The content script's world in each frame; a frame's later world replaces an earlier one
    // (an iframe's initial empty document may get one before its own document loads).
    let mut worlds: BTreeMap<String, ExecutionContextId> = BTreeMap::new();
    tokio::time::timeout(WAIT, async {
        while worlds.len() < FRAMES {
            let Some(event) = created.next().await else {
                break;
            };
            if let Some(frame) = content_script_frame(&event.context) {
                worlds.insert(frame.to_owned(), event.context.id);
            }
        }
    })
    .await
    .with_context(|| {
        format!(
            "only {} of {FRAMES} frames of {url} got the content script",
            worlds.len()
        )
    })?;
    let mut loads = Vec::with_capacity(FRAMES);
    for (frame, world) in worlds {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let v = page
                .eval_in_world(world, "globalThis.__itineroContentLoad ?? null")
                .await
                .with_context(|| {
                    format!("reading the content script's timings in frame {frame}")
                })?;
            if !v.is_null() {
                loads.push(serde_json::from_value(v).context("content.js's timings")?);
                break;
            }
            if tokio::time::Instant::now() > deadline {
                bail!("the content script of frame {frame} of {url} never started");
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }
    Ok(loads)
}

/// Each file the content script may load, with its size: the module's glue, the module and
/// the wasm2js fallback, as shipped.
fn shipped_sizes(dist: &Path) -> Result<Vec<(String, u64)>> {
    let mut sizes = Vec::new();
    let mut dirs = vec![dist.join("pkg"), dist.join("pkg-js")];
    while let Some(dir) = dirs.pop() {
        for entry in
            std::fs::read_dir(&dir).with_context(|| format!("listing {}", dir.display()))?
        {
            let entry = entry?;
            let path = entry.path();
            if entry.file_type()?.is_dir() {
                dirs.push(path);
            } else {
                let name = path.strip_prefix(dist)?.display().to_string();
                sizes.push((name, entry.metadata()?.len()));
            }
        }
    }
    sizes.sort();
    Ok(sizes)
}

fn summary(label: &str, samples: Vec<f64>) {
    let s = sorted(samples);
    println!(
        "  {label:<42} p50 {:>7.1} ms   p90 {:>7.1} ms   (n = {})",
        percentile(&s, 50.0),
        percentile(&s, 90.0),
        s.len()
    );
}

#[tokio::main]
async fn main() -> Result<()> {
    let rounds = match std::env::var("ITINERO_BENCH_ROUNDS") {
        Ok(v) => v
            .parse()
            .with_context(|| format!("ITINERO_BENCH_ROUNDS={v} is not a number"))?,
        Err(_) => ROUNDS,
    };
    let dist = dist_dir()?;
    println!("Shipped files (dist/extension):");
    for (name, bytes) in shipped_sizes(&dist)? {
        println!("  {name:<50} {:>10} B", bytes);
    }
    let h = Harness::start().await?;
    let page = h.chromium.open("about:blank").await?;
    for case in CASES {
        let url = h.fixture_url(case.page);
        let (mut load_ms, mut start_ms, mut total_ms) = (Vec::new(), Vec::new(), Vec::new());
        for round in 0..WARMUP + rounds {
            let loads = load_once(&page, &url).await?;
            if let Some(other) = loads.iter().find(|l| l.engine != case.engine) {
                bail!(
                    "{} ran the {} build, not {}",
                    case.page,
                    other.engine,
                    case.engine
                );
            }
            if round < WARMUP {
                continue;
            }
            for l in loads {
                load_ms.push(l.loaded - l.started);
                start_ms.push(l.ready - l.loaded);
                total_ms.push(l.ready - l.started);
            }
        }
        println!(
            "\n{} ({}; {FRAMES} frames per load, {rounds} loads after {WARMUP} left out), per frame:",
            case.page, case.engine
        );
        summary("download + compile + instantiate", load_ms);
        summary("start_content", start_ms);
        summary("total, until the content script is ready", total_ms);
    }
    Ok(())
}
