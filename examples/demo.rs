//! The README's main job: build, register the host for a fresh Chromium profile, open Chromium
//! with the extension (headless when there is no display), open the demo shop
//! (`itinero::demo_shop`, served on loopback), type a goal into the side panel, and print the
//! agent's steps and its answer. The model is the default backend (Ollama); without one the
//! panel says what to install, and so does the demo.

use std::time::Duration;

use anyhow::{Context, Result};
use itinero::demo_shop::{DemoShop, ShopOptions};
use itinero::harness::panel::{log, result, type_goal};
use itinero::harness::{Harness, LaunchOptions, PageExt, WAIT};

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<()> {
    let display =
        std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some();
    let headless = !display || std::env::var_os("ITINERO_HEADLESS").is_some();
    println!(
        "==> starting Chromium ({}) with the itinero extension and a fresh profile",
        if headless {
            "headless: no display"
        } else {
            "with a window"
        }
    );
    let shop = DemoShop::new(ShopOptions::default());
    let h = Harness::start_full(
        LaunchOptions {
            headless,
            keep_profile: true,
            ..Default::default()
        },
        shop.router(),
    )
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

    let shop_url = h.fixture_url("shop/");
    println!("==> opening the demo shop: {shop_url}");
    let tab = h.chromium.open(&shop_url).await?;
    tab.wait_for("document.readyState === 'complete'", WAIT)
        .await?;
    let goal = "What do wool socks cost?";
    println!("==> typing a goal into the panel: {goal:?}");
    println!(
        "    model: {}",
        std::env::var("ITINERO_BACKEND").unwrap_or_else(|_| {
            "Ollama (ITINERO_BACKEND unset), with ITINERO_MODEL or its first model".into()
        })
    );
    type_goal(&panel, goal).await?;
    // A small local model may take a while per step; the task's own limits end it.
    let (status, answer) = result(&panel, Duration::from_secs(600)).await?;
    for line in log(&panel).await? {
        println!("    {line}");
    }
    println!("==> {status}: {answer}");
    if answer.contains("ollama serve") || answer.contains("ollama pull") {
        println!(
            "    To run the agent with a local model: install Ollama (https://ollama.com), then"
        );
        println!("    `ollama serve` and `ollama pull qwen2.5:3b`, and run the demo again.");
    }

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

    if headless {
        println!("==> done (headless). Install into your own browser: see README.md, \"Install into Chrome, Chromium, Edge, Brave or Firefox\".");
    } else {
        println!("==> Chromium stays open; press Ctrl-C here to close it.");
        tokio::signal::ctrl_c().await?;
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Ok(())
}
