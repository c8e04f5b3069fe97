//! The task gym's CI subset: the first seed of every family, run with no model at all, through
//! the real panel, host and Chromium. Each task's outcome is asserted: done by the grounding
//! alone, as the site's own check judges — except the families listed as not yet done without
//! a model, which must still fail (so that fixing one shows here too).

use std::time::Duration;

use anyhow::Result;
use itinero::gym::{runner, Gym, FAMILIES};
use itinero::harness::panel::{fill, open, open_settings, save};
use itinero::harness::{Harness, LaunchOptions};

const SEED: u64 = 0;
/// Families whose first task the grounding does not do alone yet (none now; a family that
/// regresses fails the test, and one listed here that starts passing does too).
const NOT_YET: &[&str] = &[];
const LIMIT: Duration = Duration::from_secs(60);
/// Browsers that run the families side by side, each with its own host: a task mostly waits on
/// its page and the panel (a two-core machine stood three-quarters idle running them one by one).
const SHARDS: usize = 2;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_family_s_first_task_ends_as_expected_with_the_grounding_alone() -> Result<()> {
    let gym = Gym::new();
    let shards =
        futures::future::try_join_all((0..SHARDS).map(|shard| run_shard(&gym, shard))).await?;
    let failed = shards.concat();
    assert!(FAMILIES.len() >= 54, "{} families", FAMILIES.len());
    assert!(
        failed.is_empty(),
        "{} of {} failed:\n{}",
        failed.len(),
        FAMILIES.len(),
        failed.join("\n")
    );
    Ok(())
}

/// Runs every `SHARDS`th family from `shard` in a browser and host of its own, and says how
/// each that did not end as expected went.
async fn run_shard(gym: &Gym, shard: usize) -> Result<Vec<String>> {
    let options = LaunchOptions {
        host_env: vec![
            ("ITINERO_BACKEND".into(), "none".into()),
            ("OLLAMA_HOST".into(), "127.0.0.1:9".into()),
        ],
        ..Default::default()
    };
    let h = Harness::start_full(options, gym.router()).await?;
    let panel = h.connected_panel().await?;
    open_settings(&panel).await?;
    fill(&panel, "#settings-max-steps", "15").await?;
    save(&panel).await?;
    open(&panel, "run").await?;
    let mut failed = Vec::new();
    for family in FAMILIES.iter().skip(shard).step_by(SHARDS) {
        let task = gym.add(family, SEED);
        let o = runner::run(&h, &panel, gym, &task, LIMIT).await?;
        let decided_alone = o.model_calls == 0 && o.strategies.iter().all(|s| s == "grounded");
        let done = o.success && decided_alone && o.status.starts_with("Done");
        if done == NOT_YET.contains(&family.name) {
            failed.push(format!(
                "{}{}: {:?} → {}: {} [{}]",
                family.name,
                if done {
                    " (listed as not done yet, but done)"
                } else {
                    ""
                },
                task.goal,
                o.status,
                o.answer,
                o.strategies.join(",")
            ));
        }
    }
    Ok(failed)
}
