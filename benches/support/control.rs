//! The benchmarks' way into the host that Chromium started: its control socket, as the CLI uses
//! it. Shared by the benchmarks through `#[path]` (a directory under `benches/` is not a target).

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use itinero::harness::{Harness, WAIT};
use itinero_host::control::connect_in;
use itinero_host::control::protocol::{Request, Response};
use itinero_host::control::ControlClient;
use itinero_shared::observation::Observation;

/// Waits until the harness's host listens on its control socket.
pub async fn connect(h: &Harness) -> Result<ControlClient> {
    let run_dir = h.host_data_dir().join("run");
    let deadline = Instant::now() + WAIT;
    loop {
        match connect_in(&run_dir, None).await {
            Ok(client) => return Ok(client),
            Err(e) if Instant::now() > deadline => bail!("the host never listened: {e}"),
            Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
}

/// The id of the tab showing `url`.
pub async fn tab_id(client: &mut ControlClient, url: &str) -> Result<i64> {
    match client.call(&Request::Tabs).await? {
        Response::Tabs { tabs, .. } => Ok(tabs
            .into_iter()
            .find(|t| t.url == url)
            .with_context(|| format!("{url} is not listed"))?
            .tab_id),
        other => bail!("{other:?}"),
    }
}

/// A fresh observation of `tab_id`.
#[allow(dead_code)] // not every benchmark observes
pub async fn observe(client: &mut ControlClient, tab_id: i64) -> Result<Observation> {
    match client.call(&Request::Observe { tab_id }).await? {
        Response::Observation { observation, .. } => Ok(observation),
        other => bail!("{other:?}"),
    }
}
