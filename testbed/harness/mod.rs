//! One call gets a browser, the extension, the host and a fixture server, all
//! torn down on drop; on a failing test, Chromium's and the host's logs are printed.
//!
//! Everything is real where the product meets the outside: a headless Chromium with the built
//! extension loaded (the launch waits for its service worker), the host binary registered in a
//! fresh profile with its data directory inside it, and fixtures on two loopback ports, so a
//! test has two origins for cross-origin frames. `panel` drives the side panel as a person does,
//! `shop_session` sets up the demo shop with the scripted model, and `secrets` proves that no
//! secret was left anywhere in the profile.

mod chromium;
mod fixtures;
mod locate;
mod page;
pub mod panel;
pub mod recorded;
pub mod secrets;
pub mod shop_session;
pub mod stats;
pub mod tree;

pub use chromium::{Chromium, LaunchOptions};
pub use fixtures::FixtureServer;
pub use locate::{dist_dir, host_binary, workspace_root};
pub use page::{content_script_frame, PageExt};

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use chromiumoxide::Page;

/// The extension id fixed by the `key` in manifest.json.
pub const EXTENSION_ID: &str = itinero_shared::DEV_EXTENSION_ID;

/// Generous bound for conditions that normally hold within milliseconds; it only matters when something is broken.
pub const WAIT: Duration = Duration::from_secs(30);

pub struct Harness {
    pub chromium: Chromium,
    pub fixtures: FixtureServer,
}

impl Harness {
    /// Starts everything with default options (headless, fresh profile, fixtures from `tests/fixtures`).
    pub async fn start() -> Result<Self> {
        Self::start_with(LaunchOptions::default()).await
    }

    pub async fn start_with(options: LaunchOptions) -> Result<Self> {
        Self::start_full(options, axum::Router::new()).await
    }

    /// Starts with extra fixture routes (e.g. form endpoints that record what they receive).
    pub async fn start_with_routes(routes: axum::Router) -> Result<Self> {
        Self::start_full(LaunchOptions::default(), routes).await
    }

    /// Starts with launch options and extra fixture routes.
    pub async fn start_full(options: LaunchOptions, routes: axum::Router) -> Result<Self> {
        let fixtures = FixtureServer::start(workspace_root().join("tests/fixtures"), routes)
            .await
            .context("starting the fixture server")?;
        let chromium = Chromium::launch(options).await?;
        Ok(Self { chromium, fixtures })
    }

    /// The side panel's page, opened as an ordinary tab (`sidePanel.open()` needs a user gesture).
    pub async fn open_panel(&self) -> Result<Page> {
        self.chromium
            .open(&format!("chrome-extension://{EXTENSION_ID}/sidepanel.html"))
            .await
    }

    /// Opens the side panel and waits until it reports a connected host.
    pub async fn connected_panel(&self) -> Result<Page> {
        let panel = self.open_panel().await?;
        if let Err(e) = panel
            .wait_for(
                "document.querySelector('#status')?.dataset.state === 'connected'",
                WAIT,
            )
            .await
        {
            // A returned error prints no logs (only a panic does): say what the panel showed
            // and what Chromium and the host last wrote.
            let status = panel
                .text_of("#status")
                .await
                .unwrap_or_else(|e| format!("unreadable: {e:#}"));
            let url = panel.url().await.ok().flatten().unwrap_or_default();
            return Err(e.context(format!(
                "the side panel ({url}) never showed a connected host; its status reads {status:?}\n--- chromium log ---\n{}\n--- itinero-host log ---\n{}",
                chromium::tail(&self.chromium.log(), 40),
                chromium::tail(&self.chromium.host_log(), 40),
            )));
        }
        Ok(panel)
    }

    pub fn fixture_url(&self, path: &str) -> String {
        self.fixtures.url(path)
    }

    /// A fixture served from a second loopback port, i.e. another origin than `fixture_url`'s.
    pub fn other_origin_url(&self, path: &str) -> String {
        self.fixtures.other_origin_url(path)
    }

    /// Directory the host uses for its data and logs in this browser profile.
    pub fn host_data_dir(&self) -> PathBuf {
        self.chromium.host_data_dir()
    }
}
