//! Runs gym tasks through the real side panel, host and browser, and reads back how each went:
//! the site's check, the run's steps and model calls from the host's store, and the wall time.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use chromiumoxide::Page;
use itinero_host::store::Store;

use super::{Gym, TaskRef};
use crate::harness::panel::{click, progress, type_goal, Shown};
use crate::harness::{Harness, PageExt, WAIT};

/// How one task went.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub task: TaskRef,
    /// The site's check passed.
    pub success: bool,
    /// How the run ended, as the panel said it (`done`, `failed`, `stopped`…), and its answer.
    pub status: String,
    pub answer: String,
    pub steps: u32,
    /// Model calls the run made, as the host recorded them (each reply asked again, each
    /// chooser question answered "none", the plan's call).
    pub model_calls: u32,
    /// The largest prompt of the run, in the backend's own tokens; `None` with no model call.
    pub prompt_tokens: Option<u64>,
    /// Steps by the strategy that decided them, e.g. `grounded`.
    pub strategies: Vec<String>,
    pub wall: Duration,
}

/// Runs `task` from its start page: the goal typed into `panel`, questions from the agent
/// answered by stopping the task, approvals granted (the gym's sites are the user's own).
pub async fn run(
    h: &Harness,
    panel: &Page,
    gym: &Gym,
    task: &TaskRef,
    limit: Duration,
) -> Result<Outcome> {
    let tab = h.chromium.open(&h.fixture_url(&task.start)).await?;
    tab.wait_for("document.readyState === 'complete'", WAIT)
        .await?;
    panel.bring_to_front().await?;
    let started = Instant::now();
    type_goal(panel, &task.goal).await?;
    let mut seen = 0;
    let mut working = None;
    let (status, answer) = loop {
        let left = limit.saturating_sub(started.elapsed());
        let wait = left.max(Duration::from_secs(1));
        let p = match progress(panel, seen, working.as_deref(), wait).await {
            Ok(p) => p,
            Err(_) if started.elapsed() >= limit => {
                click(panel, "#stop").await.ok();
                break ("timed out".to_owned(), String::new());
            }
            Err(e) => return Err(e),
        };
        seen += p.lines.len();
        working = p.working;
        match p.shown {
            Some(Shown::Result(status, answer)) => break (status, answer),
            Some(Shown::Asks { question: true, .. }) => click(panel, "#stop").await?,
            Some(Shown::Asks { .. }) => click(panel, "#ask-allow").await?,
            None => {}
        }
    };
    let wall = started.elapsed();
    tab.close().await.ok();
    let recorded = recorded_run(h, &task.goal).await?;
    Ok(Outcome {
        success: gym.check(task.id, &answer),
        task: task.clone(),
        status,
        answer,
        steps: recorded.steps,
        model_calls: recorded.model_calls,
        prompt_tokens: recorded.prompt_tokens,
        strategies: recorded.strategies,
        wall,
    })
}

/// What the host's record of a run says.
#[derive(Default)]
struct Recorded {
    steps: u32,
    model_calls: u32,
    prompt_tokens: Option<u64>,
    strategies: Vec<String>,
}

/// The host's record of its run of `goal`, once the host has finished writing it (the panel can
/// show the result first).
async fn recorded_run(h: &Harness, goal: &str) -> Result<Recorded> {
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
