//! What the host's store says of a run the panel started: its steps, the model calls each made
//! and which strategy decided it. A test that must know whether the model was asked reads it
//! here rather than from the panel, which shows only the steps that were taken.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use itinero_host::store::Store;

use super::{Harness, WAIT};

/// What the host's record of a run says.
#[derive(Debug, Default)]
pub struct Recorded {
    pub steps: u32,
    /// Each reply asked again, each chooser question answered "none", the plan's call.
    pub model_calls: u32,
    /// The largest prompt, in the backend's own tokens; `None` with no model call.
    pub prompt_tokens: Option<u64>,
    /// Each step's strategy, e.g. `grounded` or `llm`.
    pub strategies: Vec<String>,
}

/// The host's record of its latest run, once that run is of `goal` and the host has finished
/// writing it (the panel can show the result first); empty if it never is.
pub async fn recorded_run(h: &Harness, goal: &str) -> Result<Recorded> {
    let store = Store::open(&h.host_data_dir().join("itinero.sqlite3"))
        .context("opening the host's store")?;
    let deadline = Instant::now() + WAIT;
    let run = loop {
        let latest = store.recent_runs(1)?.into_iter().next();
        match latest {
            Some(run) if run.goal == goal && run.finished_at.is_some() => break run,
            _ if Instant::now() >= deadline => return Ok(Recorded::default()),
            _ => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    };
    let steps = store.run_steps(run.id)?;
    Ok(Recorded {
        steps: steps.len() as u32,
        model_calls: steps.iter().map(|s| s.model_calls).sum(),
        prompt_tokens: steps.iter().filter_map(|s| s.prompt_tokens).max(),
        strategies: steps.into_iter().map(|s| s.strategy).collect(),
    })
}
