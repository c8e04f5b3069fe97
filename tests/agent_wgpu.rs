//! The agent on the built-in engine, end to end: the user picks "Built-in engine" in the real
//! panel's settings, types a goal, and the real host runs SmolLM2-135M on the device it picks (the
//! CPU in CI, where the only GPU adapter is lavapipe) to drive the demo shop in real Chromium.
//! What is asserted is what the engine guarantees — every step asked the model (the host's store
//! says so), every reply is JSON of the schema (constrained decoding), so none is refused as
//! unusable, and the task ends — not whether a 135M model reaches the goal, nor whether its
//! reply is taken; the test prints whether it did. BENCHMARKS.md reports how often it does.
//!
//! The panel shows the wait: the model's load, then the prompt read, as a moving bar.
//!
//! `AGENT_WGPU_GOALS=all` runs every goal of `GOALS` (for the figures), the default only the first.

use std::time::{Duration, Instant};

use anyhow::{ensure, Result};
use itinero::demo_shop::DemoShop;
use itinero::harness::panel::{choose, fill, log, open, open_settings, result, save, type_goal};
use itinero::harness::recorded::recorded_run;
use itinero::harness::{Harness, LaunchOptions, PageExt, WAIT};

/// (the page the task starts on, goal, what an answer that reached it contains). The first, run
/// in CI, starts on a product page: a short page keeps the first prompt's prefill on lavapipe to
/// about a minute.
const GOALS: [(&str, &str, &str); 4] = [
    (
        "shop/product/wool-socks",
        "What do these socks cost?",
        "12.99",
    ),
    ("shop/", "What do wool socks cost?", "12.99"),
    ("shop/search?q=hat", "Which hats does the shop sell?", "hat"),
    ("shop/", "How much is the cheapest scarf?", "eur"),
];
const MAX_STEPS: &str = "4";
/// A generous bound: a step of a 135M model takes seconds on 2 CPU cores, minutes through a
/// software GPU adapter.
const TASK_TIMEOUT: Duration = Duration::from_secs(30 * 60);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_runs_on_the_built_in_engine_and_every_reply_is_usable() -> Result<()> {
    let shop = DemoShop::default();
    // Every step goes to the model: this is the engine's path through the panel, not the
    // grounding's (the gym measures that).
    let options = LaunchOptions {
        host_env: vec![("ITINERO_GROUNDING".into(), "off".into())],
        ..Default::default()
    };
    let h = Harness::start_full(options, shop.router()).await?;
    let panel = h.connected_panel().await?;
    panel.bring_to_front().await?;
    open_settings(&panel).await?;
    choose(&panel, "#settings-backend", "wgpu").await?;
    fill(&panel, "#settings-max-steps", MAX_STEPS).await?;
    // The model field offers what the engine can run, once it is chosen.
    let offered = panel
        .wait_for(
            "[...document.querySelectorAll('#settings-models option')].map(o => o.value).join(' ')",
            WAIT,
        )
        .await?;
    let offered = offered.as_str().unwrap_or_default().to_owned();
    ensure!(
        offered.contains("smollm2-135m-instruct-q4_1"),
        "the built-in engine's models are offered: {offered:?}"
    );
    let (status, class) = save(&panel).await?;
    ensure!(class.contains("ok"), "saving the settings: {status}");
    open(&panel, "run").await?;

    let all = std::env::var("AGENT_WGPU_GOALS").as_deref() == Ok("all");
    let goals = if all { &GOALS[..] } else { &GOALS[..1] };
    // Every label the panel's progress bar shows, recorded as it is shown.
    panel
        .run_js::<serde_json::Value>(
            "const label = document.getElementById('progress-label');
             window.progressShown = [];
             new MutationObserver(() => {
               if (!document.getElementById('progress').hidden) {
                 window.progressShown.push(label.textContent);
               }
             }).observe(label, {childList: true, characterData: true, subtree: true});
             return null;",
        )
        .await?;
    let mut reached = 0;
    for (i, (start, goal, reached_when)) in goals.iter().enumerate() {
        let tab = h.chromium.open(&h.fixture_url(start)).await?;
        tab.wait_for("document.readyState === 'complete'", WAIT)
            .await?;
        let started = Instant::now();
        type_goal(&panel, goal).await?;
        let (heading, answer) = result(&panel, TASK_TIMEOUT).await?;
        let lines = log(&panel).await?;
        let joined = lines.join("\n");
        eprintln!(
            "{goal:?}: {heading} after {:.0} s: {answer}\n{joined}",
            started.elapsed().as_secs_f64()
        );
        ensure!(
            ["Done", "Failed", "Step limit"]
                .iter()
                .any(|end| heading.starts_with(end)),
            "{goal:?}: the task ended as {heading:?}: {answer}"
        );
        ensure!(
            !(heading == "Failed" && answer.contains("wgpu")),
            "{goal:?}: the engine failed: {answer}"
        );
        ensure!(
            !joined.contains("could not be used"),
            "{goal:?}: a reply was refused as unusable:\n{joined}"
        );
        // Whether the 135M model's reply is taken turns on small changes of its prompt, down to
        // the shop's port in the page's address: a `done` with no answer to a question is
        // refused by a guard and asked again (the step's strategy is then `guard`). What must
        // hold is that every step asked the model and none was decided without it.
        let recorded = recorded_run(&h, goal).await?;
        ensure!(
            recorded.steps > 0
                && recorded.model_calls >= recorded.steps
                && recorded
                    .strategies
                    .iter()
                    .all(|s| s == "llm" || s == "guard"),
            "{goal:?}: not every step asked the model: {recorded:?}\n{joined}"
        );
        let ok = heading == "Done" && answer.to_lowercase().contains(reached_when);
        reached += usize::from(ok);
        eprintln!(
            "{goal:?}: goal {}",
            if ok { "reached" } else { "not reached" }
        );
        if i == 0 {
            let shown: Vec<String> = panel.run_js("return window.progressShown;").await?;
            ensure!(
                shown
                    .first()
                    .is_some_and(|l| l.starts_with("Loading smollm2-135m-instruct-q4_1")),
                "the first model call showed the model loading: {shown:?}"
            );
            ensure!(
                shown
                    .iter()
                    .any(|l| l.starts_with("The model is reading the page: ")),
                "the first prompt's reading was shown: {shown:?}"
            );
            ensure!(
                panel
                    .run_js::<bool>("return document.getElementById('progress').hidden;")
                    .await?,
                "the bar is gone once the task ended"
            );
        }
        tab.close().await?;
    }
    eprintln!("goals reached: {reached} of {}", goals.len());
    Ok(())
}
