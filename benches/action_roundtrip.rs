//! Action round trip: host → background (Rust/WASM) → content script → page settled → back
//! to the host, for a click on a button that changes text (no navigation).
//!
//! Measured three ways, over the control socket the CLI uses: inside the host (from sending
//! `Perform` to receiving the report: `round_trip_ms`), by a client of the control socket
//! (in this process: the CLI's client library), and as the `itinero-host act` command (a
//! process per action, so it includes process start). The background's own figure
//! (`elapsed_ms`, whole milliseconds) is printed too. For scale, the same link without the
//! page's settle wait: observing the fixture (`Observe`, timed in the host).
//!
//! Run: `cargo build --release -p itinero-host && cargo bench --bench action_roundtrip`

use std::time::Instant;

use anyhow::{bail, Context, Result};
use itinero::harness::stats::{percentile, sorted};
use itinero::harness::{host_binary, Harness, PageExt, WAIT};
use itinero_host::control::protocol::{Request, Response};
use itinero_shared::messages::Outcome;
use itinero_shared::observation::DomNode;
use itinero_shared::{Action, Target};

#[path = "support/control.rs"]
mod control;

const WARMUP: usize = 10;
const SAMPLES: usize = 200;
const CLI_SAMPLES: usize = 30;
const OBSERVE_SAMPLES: usize = 50;

fn report(name: &str, samples: Vec<f64>) {
    let sorted = sorted(samples);
    println!(
        "{:<58} n={:<4} p50={:>8.2} ms  p95={:>8.2} ms  max={:>8.2} ms",
        name,
        sorted.len(),
        percentile(&sorted, 50.0),
        percentile(&sorted, 95.0),
        sorted[sorted.len() - 1]
    );
}

fn find<'a>(node: &'a DomNode, id: &str) -> Option<&'a DomNode> {
    if node.fingerprint.as_ref().and_then(|f| f.id.as_deref()) == Some(id) {
        return Some(node);
    }
    node.children.iter().find_map(|c| find(c, id))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<()> {
    let h = Harness::start().await?;
    let mut client = control::connect(&h).await?;
    let url = h.fixture_url("link/buttons.html");
    let page = h.chromium.open(&url).await?;
    page.wait_for("document.readyState === 'complete'", WAIT)
        .await?;
    page.bring_to_front().await?;
    let tab_id = control::tab_id(&mut client, &url).await?;
    let observation = control::observe(&mut client, tab_id).await?;
    let node = find(&observation.root, "change").context("#change is not observed")?;
    let action = Action::Click {
        target: Target {
            index: node.index.context("#change has no index")?,
            fingerprint: node.fingerprint.clone().context("no fingerprint")?,
        },
    };
    let request = Request::Act {
        tab_id,
        frame_id: 0,
        action: action.clone(),
    };
    let browser_version: String = page.run_js("return navigator.userAgent;").await?;
    println!("action round trip: host → background → content script → settled → host (click, text change, no navigation)");
    println!("browser: {browser_version}");

    let (mut browser, mut host, mut client_side) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..WARMUP + SAMPLES {
        let t0 = Instant::now();
        let response = client.call(&request).await?;
        let seen = t0.elapsed().as_secs_f64() * 1000.0;
        let Response::Outcome {
            outcome: Outcome::Done,
            elapsed_ms,
            round_trip_ms,
        } = response
        else {
            bail!("click {i} did not report done: {response:?}");
        };
        if i >= WARMUP {
            browser.push(elapsed_ms as f64);
            host.push(round_trip_ms);
            client_side.push(seen);
        }
    }
    let shown = page.text_of("#message").await?;
    let expected = format!("Changed {} time(s)", WARMUP + SAMPLES);
    if shown != expected {
        bail!("the page shows {shown:?}, expected {expected:?}: some clicks were lost");
    }

    let bin = host_binary()?;
    let json = serde_json::to_string(&action)?;
    let mut cli = Vec::new();
    for _ in 0..CLI_SAMPLES {
        let t0 = Instant::now();
        let out = tokio::process::Command::new(&bin)
            .args(["act", "--tab", &tab_id.to_string(), &json])
            .env("ITINERO_DATA_DIR", h.host_data_dir())
            .output()
            .await?;
        cli.push(t0.elapsed().as_secs_f64() * 1000.0);
        if !out.status.success() {
            bail!(
                "itinero-host act failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    let mut observe = Vec::new();
    for _ in 0..OBSERVE_SAMPLES {
        match client.call(&Request::Observe { tab_id }).await? {
            Response::Observation { round_trip_ms, .. } => observe.push(round_trip_ms),
            other => bail!("{other:?}"),
        }
    }
    report("in the background (elapsed_ms, whole ms)", browser);
    report("in the host (Perform sent → report received)", host);
    report("control-socket client (request → response)", client_side);
    report("`itinero-host act` command (process start → exit)", cli);
    report("for scale: observe, no settle wait (in the host)", observe);
    Ok(())
}
