//! A session on the demo shop for end-to-end agent tests: Chromium with the extension and the
//! host (the scripted backend as the model), the shop, an open side panel and the shop's tab.
//!
//! Scripts name elements as a model picks them, `{{button 'Add to cart'}}` (the scripted
//! backend fills in the index the prompt's page gives that element), and a step's `before` URL
//! lets a test act while the "model thinks": `/test/gate` holds the reply until the test opens
//! the gate, `/test/barrier` until two tasks are waiting at once.

use std::sync::Arc;

use anyhow::{bail, Context, Result};
use axum::routing::get;
use chromiumoxide::Page;
use serde_json::{json, Value};
use tokio::sync::watch;

use super::panel::{log, result, type_goal};
use super::{Harness, LaunchOptions, PageExt, WAIT};
use crate::demo_shop::{DemoShop, ShopOptions};

/// A point where scripted replies wait for the test.
#[derive(Clone)]
pub struct Gate {
    /// Replies that reached the gate (or the barrier) so far.
    arrived: Arc<watch::Sender<usize>>,
    open: Arc<watch::Sender<bool>>,
}

impl Default for Gate {
    fn default() -> Self {
        Self::new()
    }
}

impl Gate {
    pub fn new() -> Self {
        Self {
            arrived: Arc::new(watch::Sender::new(0)),
            open: Arc::new(watch::Sender::new(false)),
        }
    }

    pub fn routes(&self) -> axum::Router {
        let gate = self.clone();
        let barrier = self.clone();
        axum::Router::new()
            .route(
                "/test/gate",
                get(move || {
                    let gate = gate.clone();
                    async move {
                        gate.arrived.send_modify(|n| *n += 1);
                        let _ = gate.open.subscribe().wait_for(|open| *open).await;
                        "open"
                    }
                }),
            )
            .route(
                "/test/barrier",
                get(move || {
                    let gate = barrier.clone();
                    async move {
                        gate.arrived.send_modify(|n| *n += 1);
                        let _ = gate.arrived.subscribe().wait_for(|n| *n >= 2).await;
                        "both here"
                    }
                }),
            )
    }

    pub async fn wait_arrived(&self, n: usize) -> Result<()> {
        tokio::time::timeout(WAIT, self.arrived.subscribe().wait_for(|a| *a >= n))
            .await
            .with_context(|| format!("{n} scripted replies never reached the gate"))??;
        Ok(())
    }

    pub fn open(&self) {
        self.open.send_replace(true);
    }
}

/// One model call of a script: what the prompt must contain, and the reply.
pub fn step(expect: &[&str], reply: Value) -> Value {
    json!({"expect": expect, "reply": reply.to_string()})
}

/// The goal of [`add_wool_socks`].
pub const ADD_WOOL_SOCKS: &str = "Add wool socks to my cart";

/// The model's part of [`ADD_WOOL_SOCKS`] from the shop's front page: search, open the product,
/// add it to the cart, answer.
pub fn add_wool_socks() -> Vec<Value> {
    vec![
        step(
            &[&format!("Goal: {ADD_WOOL_SOCKS}")],
            json!({"action": "type", "index": "{{input 'Search products'}}", "text": "wool socks", "submit": true}),
        ),
        step(
            &["Results for wool socks"],
            json!({"action": "click", "index": "{{a 'Wool socks'}}"}),
        ),
        step(
            &["12.99 EUR"],
            json!({"action": "click", "index": "{{button 'Add to cart'}}"}),
        ),
        step(
            &["Cart (1)"],
            json!({"action": "done", "answer": "Wool socks are in your cart."}),
        ),
    ]
}

/// A model call whose reply waits on `url` (a gate or barrier of the test) first.
pub fn step_after(url: &str, expect: &[&str], reply: Value) -> Value {
    let mut s = step(expect, reply);
    s["before"] = json!(url);
    s
}

/// Chromium with the extension and the host, the demo shop, an open panel and the shop's tab.
pub struct Session {
    pub h: Harness,
    script: tempfile::TempDir,
    pub panel: Page,
    pub tab: Page,
    pub shop: DemoShop,
    pub gate: Gate,
}

impl Session {
    pub async fn start(options: ShopOptions, path: &str) -> Result<Self> {
        Self::start_with(options, path, axum::Router::new()).await
    }

    /// Like [`Session::start`], with more routes beside the shop's (another site of the test).
    pub async fn start_with(
        options: ShopOptions,
        path: &str,
        routes: axum::Router,
    ) -> Result<Self> {
        Self::start_env(options, path, routes, Vec::new()).await
    }

    /// Like [`Session::start_with`], with more environment for the host (another backend's
    /// address, for tasks that choose it in the settings).
    pub async fn start_env(
        options: ShopOptions,
        path: &str,
        routes: axum::Router,
        host_env: Vec<(String, String)>,
    ) -> Result<Self> {
        let script = tempfile::tempdir()?;
        let mut launch = LaunchOptions::scripted(&script.path().join("script.json"));
        launch.host_env.extend(host_env);
        let shop = DemoShop::new(options);
        let gate = Gate::new();
        let routes = shop.router().merge(gate.routes()).merge(routes);
        let h = Harness::start_full(launch, routes).await?;
        let panel = h.connected_panel().await?;
        let tab = h.chromium.open(&h.fixture_url(path)).await?;
        tab.wait_for("document.readyState === 'complete'", WAIT)
            .await?;
        Ok(Self {
            h,
            script,
            panel,
            tab,
            shop,
            gate,
        })
    }

    pub fn url(&self, path: &str) -> String {
        self.h.fixture_url(path)
    }

    /// Loads the shop's `path` in the tab and waits until it has loaded.
    pub async fn open(&self, path: &str) -> Result<()> {
        self.tab.goto(self.url(path)).await?;
        self.tab
            .wait_for("document.readyState === 'complete'", WAIT)
            .await?;
        Ok(())
    }

    /// How many of the product `slug` the shop's carts hold.
    pub fn in_cart(&self, slug: &str) -> u32 {
        self.shop
            .cart_items()
            .into_iter()
            .filter(|l| l.slug == slug)
            .map(|l| l.quantity)
            .sum()
    }

    /// The model's script; the host reads it when a task starts.
    pub fn script(&self, steps: Vec<Value>) -> Result<()> {
        std::fs::write(
            self.script.path().join("script.json"),
            Value::Array(steps).to_string(),
        )?;
        Ok(())
    }

    pub async fn run(&self, goal: &str) -> Result<()> {
        type_goal(&self.panel, goal).await
    }

    /// Waits for the task's end; returns the result's heading and text.
    pub async fn result(&self) -> Result<(String, String)> {
        result(&self.panel, WAIT).await
    }

    pub async fn log(&self) -> Result<String> {
        Ok(log(&self.panel).await?.join("\n"))
    }

    /// Waits for the panel's question; returns its text.
    pub async fn question(&self) -> Result<String> {
        let q = self
            .panel
            .wait_for(
                "!document.querySelector('#ask').hidden && document.querySelector('#ask-text').textContent",
                WAIT,
            )
            .await?;
        Ok(q.as_str().unwrap_or_default().to_owned())
    }

    pub async fn tab_query(&self, key: &str) -> Result<String> {
        self.tab
            .run_js(&format!(
                "return new URLSearchParams(location.search).get({key:?}) ?? '';"
            ))
            .await
    }
}

/// Fails with the panel's and the host's logs when the task did not succeed with an answer
/// containing `want`.
pub async fn expect_done(h: &Harness, panel: &Page, want: &str) -> Result<String> {
    let (heading, text) = match result(panel, WAIT).await {
        Ok(r) => r,
        Err(e) => bail!(
            "{e:#}\n--- panel log ---\n{}\n--- host log ---\n{}",
            log(panel).await?.join("\n"),
            h.chromium.host_log()
        ),
    };
    if heading != "Done" || !text.contains(want) {
        bail!(
            "the task ended {heading:?}: {text:?}\n--- panel log ---\n{}\n--- host log ---\n{}",
            log(panel).await?.join("\n"),
            h.chromium.host_log()
        );
    }
    Ok(text)
}
