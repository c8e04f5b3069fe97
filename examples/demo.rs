//! The README's main job: build, register the host for a fresh Chromium profile, open Chromium
//! with the extension (headless when there is no display), open the demo shop
//! (`itinero::demo_shop`, served on loopback), type a goal into the side panel, and print the
//! agent's steps as they happen and its answer. The model is what the host picks when nothing is
//! set: Ollama when it runs and has a model, else the built-in engine's small default model, on
//! a real GPU where there is one and on the CPU otherwise.
//!
//! `demo [GOAL] [--start PATH]` types a goal of your own instead, on the shop's page at `PATH`
//! (`shop/` by default: `shop/search?q=hat`, `shop/product/wool-socks`, `shop/cart`, …).
//!
//! If the agent asks for help or for approval, the demo says so and stops the task (a person
//! would answer in the panel). It exits non-zero when the run stopped for a system reason (no
//! model, the engine failed, the page could not be read, the host or browser was lost) — whether
//! the small model reaches the goal is the agent's competence, not a failure of the demo.

use std::time::Duration;

use anyhow::{Context, Result};
use itinero::demo_shop::{DemoShop, ShopOptions};
use itinero::harness::panel::{click, progress, type_goal, Shown};
use itinero::harness::{Harness, LaunchOptions, PageExt, WAIT};

/// The goal typed when none is given.
const GOAL: &str = "What do wool socks cost?";

/// The goal and the shop's page it starts on, from the command line.
fn args() -> Result<(String, String)> {
    let mut goal = None;
    let mut start = "shop/".to_owned();
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--start" => {
                start = it
                    .next()
                    .context("--start needs a page of the shop, e.g. shop/search?q=hat")?
                    .trim_start_matches('/')
                    .to_owned()
            }
            "-h" | "--help" => {
                println!("usage: demo [GOAL] [--start PATH]   (default: {GOAL:?} on shop/)");
                std::process::exit(0);
            }
            other if other.starts_with("--") => anyhow::bail!(
                "unknown option {other:?}; usage: demo [GOAL] [--start PATH]"
            ),
            other if goal.is_none() => goal = Some(other.to_owned()),
            other => anyhow::bail!(
                "one goal at a time, in quotes: {other:?} is a second; usage: demo [GOAL] [--start PATH]"
            ),
        }
    }
    Ok((goal.unwrap_or_else(|| GOAL.to_owned()), start))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<()> {
    let (goal, start) = args()?;
    let display =
        std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some();
    let headless = !display || std::env::var_os("ITINERO_HEADLESS").is_some();
    // ITINERO_CHROMIUM, which scripts/demo sets to the browser scripts/setup.sh chose.
    let options = LaunchOptions {
        headless,
        keep_profile: true,
        ..Default::default()
    };
    println!(
        "==> starting {} ({}) with the itinero extension and a fresh profile",
        options.chromium.display(),
        if headless {
            "headless: no display"
        } else {
            "with a window"
        }
    );
    let shop = DemoShop::new(ShopOptions::default());
    let h = Harness::start_full(options, shop.router())
        .await
        .context("starting Chromium with the extension")?;
    let profile = h.chromium.profile_dir().to_path_buf();
    println!("    profile:        {}", profile.display());
    println!(
        "    host manifest:  {}",
        profile
            .join("NativeMessagingHosts")
            .join(format!("{}.json", itinero_shared::HOST_NAME))
            .display()
    );
    println!("    host data dir:  {}", h.host_data_dir().display());

    println!(
        "==> opening the side panel (chrome-extension://{}/sidepanel.html)",
        itinero::harness::EXTENSION_ID
    );
    let panel = h.connected_panel().await?;
    println!(
        "    status: {} — {} ({})",
        panel.text_of("#status").await?,
        panel.text_of("#host-version").await?,
        panel.text_of("#host-pid").await?
    );

    let shop_url = h.fixture_url(&start);
    println!("==> opening the demo shop: {shop_url}");
    let tab = h.chromium.open(&shop_url).await?;
    tab.wait_for("document.readyState === 'complete'", WAIT)
        .await?;
    println!("==> typing a goal into the panel: {goal:?}");
    type_goal(&panel, &goal).await?;
    let (status, answer) = follow(&panel).await?;
    println!("==> {status}: {answer}");
    let system = system_failure(&status, &answer);

    let shot = itinero::harness::workspace_root().join("target/demo-sidepanel.png");
    std::fs::create_dir_all(shot.parent().unwrap())?;
    panel
        .save_screenshot(
            chromiumoxide::page::ScreenshotParams::builder()
                .full_page(true)
                .build(),
            &shot,
        )
        .await
        .context("taking a screenshot of the side panel")?;
    println!("==> screenshot of the side panel: {}", shot.display());

    if let Some(why) = system {
        anyhow::bail!("the run stopped for a system reason: {why}");
    }
    if headless {
        println!("==> done (headless). Install into your own browser: see README.md, \"Install into Chrome, Chromium, Edge, Brave or Firefox\".");
    } else {
        println!("==> Chromium stays open; press Ctrl-C here to close it.");
        tokio::signal::ctrl_c().await?;
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Ok(())
}

/// The longest the demo waits for the next thing in the panel: a step of a small model on two
/// CPU cores takes seconds, a model's first load on a slow disk longer.
const STEP_WAIT: Duration = Duration::from_secs(300);

/// Prints the panel's activity as it grows until the task ends; stops the task when the agent
/// asks the user something (no one is there to answer). Returns the result's heading and text.
async fn follow(panel: &chromiumoxide::Page) -> Result<(String, String)> {
    let mut seen = 0;
    let mut asked = false;
    let mut working: Option<String> = None;
    loop {
        let p = progress(panel, seen, working.as_deref(), STEP_WAIT)
            .await
            .context("waiting for the agent's next step")?;
        seen += p.lines.len();
        for line in &p.lines {
            println!("    {line}");
        }
        // What a step waits on (a model's download or load, a long prompt read), once each
        // time it starts: the first step is not silent for the seconds it takes.
        if p.working.is_some() && p.working != working {
            println!("    … {}", p.working.as_deref().unwrap_or_default());
        }
        working = p.working;
        match p.shown {
            Some(Shown::Result(status, answer)) => return Ok((status, answer)),
            Some(Shown::Asks { text, question }) if !asked => {
                asked = true;
                println!("    the agent asks: {text}");
                if question {
                    println!("    (a person would answer in the panel; the demo stops the task)");
                    click(panel, "#stop").await?;
                } else {
                    println!("    (the demo denies it)");
                    click(panel, "#ask-deny").await?;
                }
            }
            _ => {}
        }
    }
}

/// Why the run ended for a system reason rather than the agent's own, from the words the host
/// ends such a run with (`LlmError`, task set-up, reading the page).
fn system_failure(status: &str, answer: &str) -> Option<String> {
    const SYSTEM: [&str; 9] = [
        "no model to run the task",
        "could not read the page",
        "is not reachable at",
        "is not available:",
        "does not fit the model's context",
        "no reply within",
        "answered HTTP",
        "sent a reply that could not be read",
        "browser did not answer",
    ];
    (status == "Failed" && SYSTEM.iter().any(|s| answer.contains(s))).then(|| answer.to_owned())
}
