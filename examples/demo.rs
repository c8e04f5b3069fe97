//! The README's main job, until the agent exists: build, register the host for
//! a fresh Chromium profile, open Chromium with the extension (headless when
//! there is no display), prove the side panel reaches the host, and say what happened.

use std::time::Duration;

use anyhow::{Context, Result};
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
    let h = Harness::start_with(LaunchOptions {
        headless,
        keep_profile: true,
        ..Default::default()
    })
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

    let goal = "find last month's invoice and download it";
    println!("==> typing a goal into the panel: {goal:?}");
    panel
        .find_element("#goal")
        .await?
        .click()
        .await?
        .type_str(goal)
        .await?
        .press_key("Enter")
        .await?;
    let reply = panel
        .wait_for(
            "document.querySelector('#log li.reply, #log li.error')?.textContent",
            WAIT,
        )
        .await?;
    println!("    {}", reply.as_str().unwrap_or_default());
    println!("    (the agent arrives in a later version; today Run proves the path panel → service worker → host → panel)");

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
