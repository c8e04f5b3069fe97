//! Runs gym tasks through the real side panel, host and browser, and reads back how each went:
//! the site's check, the run's steps and model calls from the host's store, and the wall time.

use std::time::{Duration, Instant};

use anyhow::Result;
use chromiumoxide::Page;

use super::{Gym, TaskRef};
use crate::harness::panel::{click, progress, type_goal, Shown};
use crate::harness::recorded::recorded_run;
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
    /// What the panel showed of the run, line by line (each step and why it was taken).
    pub lines: Vec<String>,
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
    let mut lines = Vec::new();
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
        lines.extend(p.lines);
        working = p.working;
        match p.shown {
            Some(Shown::Result(status, answer)) => break (status, answer),
            Some(Shown::Asks { question: true, .. }) => click(panel, "#stop").await?,
            Some(Shown::Asks { .. }) => click(panel, "#ask-allow").await?,
            None => {}
        }
    };
    let wall = started.elapsed();
    // The panel keeps earlier tasks' lines above this one's, which starts at its goal.
    if let Some(at) = lines.iter().rposition(|l| l.ends_with(task.goal.as_str())) {
        lines.drain(..at);
    }
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
        lines,
    })
}
