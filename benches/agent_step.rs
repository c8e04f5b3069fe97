//! A whole agent step on the built-in engine on the CPU, as a user meets it: the real host,
//! extension and Chromium on the demo shop, no Ollama, the default model (SmolLM2-135M) on the
//! CPU. Each goal runs as a task from the panel (at most `MAX_STEPS` steps; a question from the
//! agent stops it), and each step's decision time is read from the run the host recorded in its
//! store: the prompt fed over the KV cache left by the step before (its shared start reused) and
//! the constrained reply decoded. Prints the median and the spread over all steps of all goals.
//!
//! Run: `cargo build --release -p itinero-host --features scripted && cargo bench --bench agent_step`
//! (`ITINERO_DEVICE` and `ITINERO_MODEL` choose another device or model).

use std::time::Duration;

use anyhow::{Context, Result};
use itinero::demo_shop::DemoShop;
use itinero::harness::panel::{click, fill, open, open_settings, progress, save, type_goal, Shown};
use itinero::harness::stats::{percentile, sorted};
use itinero::harness::{Harness, LaunchOptions, PageExt, WAIT};
use itinero_host::store::Store;

/// (the page the task starts on, goal): questions and errands a user of the shop would give,
/// enough of them that the median is over a few dozen steps (a small model often asks for help
/// after a few, which ends its goal).
const GOALS: [(&str, &str); 10] = [
    ("shop/", "What do wool socks cost?"),
    ("shop/search?q=hat", "Which hats does the shop sell?"),
    ("shop/", "How much is the cheapest scarf?"),
    ("shop/product/sun-hat", "Add the sun hat to the cart."),
    ("shop/", "Find leather gloves and tell me their price."),
    ("shop/?category=socks", "Which socks are the cheapest?"),
    ("shop/product/silk-scarf", "What is the silk scarf made of?"),
    ("shop/", "Search for mittens."),
    (
        "shop/contact",
        "Send the shop a message asking about delivery times.",
    ),
    ("shop/", "Open the cart and tell me what is in it."),
];
const MAX_STEPS: &str = "6";
const STEP_WAIT: Duration = Duration::from_secs(300);

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<()> {
    let device = std::env::var("ITINERO_DEVICE").unwrap_or_else(|_| "cpu".into());
    // Every step goes to the model: the grounding would answer these goals without it.
    let mut env = vec![
        ("OLLAMA_HOST".to_owned(), "127.0.0.1:9".to_owned()),
        ("ITINERO_DEVICE".to_owned(), device.clone()),
        ("ITINERO_GROUNDING".to_owned(), "off".to_owned()),
    ];
    if let Ok(model) = std::env::var("ITINERO_MODEL") {
        env.push(("ITINERO_MODEL".into(), model));
    }
    let options = LaunchOptions {
        host_env: env,
        ..Default::default()
    };
    let shop = DemoShop::default();
    let h = Harness::start_full(options, shop.router()).await?;
    let panel = h.connected_panel().await?;
    panel.bring_to_front().await?;
    open_settings(&panel).await?;
    fill(&panel, "#settings-max-steps", MAX_STEPS).await?;
    save(&panel).await?;
    open(&panel, "run").await?;
    let mut models = Vec::new();
    for (page, goal) in GOALS {
        let tab = h.chromium.open(&h.fixture_url(page)).await?;
        tab.wait_for("document.readyState === 'complete'", WAIT)
            .await?;
        panel.bring_to_front().await?;
        type_goal(&panel, goal).await?;
        let mut seen = 0;
        let mut working = None;
        let end = loop {
            let p = progress(&panel, seen, working.as_deref(), STEP_WAIT).await?;
            working = p.working.clone();
            seen += p.lines.len();
            models.extend(
                p.lines
                    .iter()
                    .filter_map(|l| l.strip_prefix("Model: ").map(str::to_owned)),
            );
            match p.shown {
                Some(Shown::Result(status, answer)) => break format!("{status}: {answer}"),
                Some(Shown::Asks { question: true, .. }) => click(&panel, "#stop").await?,
                Some(Shown::Asks { .. }) => click(&panel, "#ask-deny").await?,
                None => {}
            }
        };
        eprintln!("{goal:?}: {end}");
        tab.close().await?;
    }
    let store = Store::open(&h.host_data_dir().join("itinero.sqlite3"))
        .context("opening the host's store")?;
    let mut ms = Vec::new();
    for run in store.recent_runs(GOALS.len() as u32)? {
        for step in store.run_steps(run.id)? {
            if step.strategy == "llm" {
                ms.extend(step.decide_ms.map(|v| v as f64));
            }
        }
    }
    let ms = sorted(ms);
    anyhow::ensure!(!ms.is_empty(), "no step was decided by the model");
    println!(
        "agent step on the built-in engine ({}; device {device}): {} steps, median {:.2} s (p10 {:.2} s, p90 {:.2} s)",
        models.first().map_or("?", String::as_str),
        ms.len(),
        percentile(&ms, 50.0) / 1e3,
        percentile(&ms, 10.0) / 1e3,
        percentile(&ms, 90.0) / 1e3,
    );
    Ok(())
}
