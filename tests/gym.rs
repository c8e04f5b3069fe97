//! The task gym's CI subset: the first seed of every family, run with no model at all, through
//! the real panel, host and Chromium. The grounding alone must get each of them done, as the
//! sites' own checks judge; a family that regresses names itself.

use std::time::Duration;

use anyhow::Result;
use itinero::gym::{runner, Gym, FAMILIES};
use itinero::harness::panel::{fill, open, open_settings, save};
use itinero::harness::{Harness, LaunchOptions};

const SEED: u64 = 0;
const LIMIT: Duration = Duration::from_secs(60);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_family_s_first_task_is_done_by_the_grounding_alone() -> Result<()> {
    let gym = Gym::new();
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
    for family in FAMILIES {
        let task = gym.add(family, SEED);
        let o = runner::run(&h, &panel, &gym, &task, LIMIT).await?;
        let decided_alone = o.model_calls == 0 && o.strategies.iter().all(|s| s == "grounded");
        if !(o.success && decided_alone && o.status.starts_with("Done")) {
            failed.push(format!(
                "{}: {:?} → {}: {} [{}]",
                family.name,
                task.goal,
                o.status,
                o.answer,
                o.strategies.join(",")
            ));
        }
    }
    assert!(FAMILIES.len() >= 40, "{} families", FAMILIES.len());
    assert!(
        failed.is_empty(),
        "{} of {} failed:\n{}",
        failed.len(),
        FAMILIES.len(),
        failed.join("\n")
    );
    Ok(())
}
