//! A 10-step task on the demo shop, run first by the model and then replayed as a skill, with
//! and without the picture after each step: the wall time of each, and their ratios.
//!
//! Everything is real (Chromium with the extension, the host, its SQLite store, the shop on
//! loopback) except the model, which is the scripted backend answering at once — so the
//! model-driven time is the host's and the browser's own work per step, and the ratio shows what
//! replay saves besides the model's thinking time (which a real model adds to every model step
//! and to no replayed one).
//!
//! The task: search, open the product, set the quantity, add it to the cart, open the contact
//! page, fill in name, email, topic and message, send (10 actions), then answer. Each model-driven
//! run starts with the action cache emptied, so it really asks the model at every step; the
//! last one is captured as a skill, which is then replayed with the same values. Runs go through
//! the host's control socket (`run`, `run_skill`), as `itinero-host run` and `skills run` do; the
//! time is from the request to the `finished` line, the risky "Send message" approved at once.
//!
//! Run: `cargo build --release -p itinero-host --features scripted && cargo bench --bench skill_replay`

use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context, Result};
use itinero::demo_shop::ShopOptions;
use itinero::harness::shop_session::{step, Session};
use itinero::harness::stats::{percentile, sorted};
use itinero_host::control::protocol::{Request, Response};
use itinero_host::skills::library;
use itinero_host::store::Store;
use itinero_shared::messages::{PlanMode, TaskEventKind, TaskStatus};
use serde_json::{json, Value};

#[path = "support/control.rs"]
mod control;

/// Timed runs of each kind, after one that is not counted.
const RUNS: usize = 7;
const GOAL: &str = "Add 2 wool socks to my cart, then ask the shop as Ada Lovelace \
                    (ada@example.org) when they ship";
const SKILL: &str = "Order socks and ask about shipping";

/// The model's part: 10 actions and the answer.
fn script() -> Vec<Value> {
    vec![
        step(
            &["Goal: Add 2 wool socks"],
            json!({"action": "type", "index": "{{input 'Search products'}}", "text": "wool socks", "submit": true}),
        ),
        step(
            &["Results for wool socks"],
            json!({"action": "click", "index": "{{a 'Wool socks'}}"}),
        ),
        step(
            &["12.99 EUR"],
            json!({"action": "type", "index": "{{input 'Quantity'}}", "text": "2"}),
        ),
        step(
            &["12.99 EUR"],
            json!({"action": "click", "index": "{{button 'Add to cart'}}"}),
        ),
        step(
            &["Cart ("],
            json!({"action": "click", "index": "{{a 'Contact'}}"}),
        ),
        step(
            &["Contact us"],
            json!({"action": "type", "index": "{{input 'Name'}}", "text": "Ada Lovelace"}),
        ),
        step(
            &["Contact us"],
            json!({"action": "type", "index": "{{input 'Email'}}", "text": "ada@example.org"}),
        ),
        step(
            &["Contact us"],
            json!({"action": "select", "index": "{{select 'Topic'}}", "value": "Other"}),
        ),
        step(
            &["Contact us"],
            json!({"action": "type", "index": "{{textarea 'Message'}}", "text": "When do you ship?"}),
        ),
        step(
            &["Contact us"],
            json!({"action": "click", "index": "{{button 'Send message'}}"}),
        ),
        step(
            &["Message sent"],
            json!({"action": "done", "answer": "Two wool socks are in the cart and the shop was asked when they ship."}),
        ),
    ]
}

/// One run's wall time and what decided its steps.
struct Ran {
    elapsed: Duration,
    sources: Vec<String>,
}

/// Where a run's time went, from its step records (summed over the steps, in ms): deciding
/// (the model, or the replay's checks), acting (the browser), and the rest of each step
/// (observing the page, the guards, recording).
#[derive(Default)]
struct Split {
    decide: Vec<f64>,
    act: Vec<f64>,
    rest: Vec<f64>,
}

impl Split {
    fn add(&mut self, store: &Store) -> Result<()> {
        let run = store.recent_runs(1)?.first().context("no run stored")?.id;
        let detail = store.run_detail(run)?.context("the run has no detail")?;
        let sum = |f: fn(&itinero_shared::records::StepRecord) -> Option<u64>| -> f64 {
            detail.steps.iter().filter_map(f).sum::<u64>() as f64
        };
        let (decide, act, total) = (sum(|s| s.decide_ms), sum(|s| s.act_ms), sum(|s| s.total_ms));
        self.decide.push(decide);
        self.act.push(act);
        self.rest.push(total - decide - act);
        Ok(())
    }

    fn line(&self) -> String {
        let m = |v: &[f64]| percentile(&sorted(v.to_vec()), 50.0);
        format!(
            "deciding {:.0} ms, acting {:.0} ms, observing and the rest {:.0} ms",
            m(&self.decide),
            m(&self.act),
            m(&self.rest)
        )
    }
}

/// Sends `request` on a fresh control connection and follows the task to its end, approving
/// what it asks.
async fn run(s: &Session, request: &Request) -> Result<Ran> {
    let mut client = control::connect(&s.h).await?;
    let started = Instant::now();
    client.send(request).await?;
    let mut sources = Vec::new();
    loop {
        match client.receive().await? {
            Response::Started { .. } => {}
            Response::Event { event } => {
                if let TaskEventKind::Decided { source, .. } = event.kind {
                    sources.push(source);
                }
            }
            Response::Question { question } => {
                ensure!(question.kind == "approval", "asked {:?}", question.question);
                let reply = Request::Reply {
                    question_id: question.question_id,
                    reply: "yes".into(),
                };
                client.send(&reply).await?;
            }
            Response::Finished { finished } => {
                let elapsed = started.elapsed();
                if finished.status != TaskStatus::Succeeded {
                    bail!(
                        "the run ended {:?}: {:?}\n--- host log ---\n{}",
                        finished.status,
                        finished.answer,
                        s.h.chromium.host_log()
                    );
                }
                return Ok(Ran { elapsed, sources });
            }
            Response::Error { message, .. } => bail!("{message}"),
            other => bail!("unexpected {other:?}"),
        }
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn median(times: &[Duration]) -> f64 {
    let v = sorted(times.iter().map(|d| ms(*d)).collect());
    percentile(&v, 50.0)
}

fn main() -> Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(bench())
}

async fn bench() -> Result<()> {
    let s = Session::start(ShopOptions::default(), "shop/").await?;
    let store = Store::open(&s.h.host_data_dir().join("itinero.sqlite3"))?;
    // One sub-goal: the planner's own model call is not what is measured here.
    let mut settings = store.settings()?;
    settings.plan = PlanMode::Off;
    store.set_settings(&settings)?;
    let mut client = control::connect(&s.h).await?;
    let tab = control::tab_id(&mut client, &s.url("shop/")).await?;
    drop(client);

    let mut model = Vec::new();
    let mut model_split = Split::default();
    for i in 0..=RUNS {
        s.open("shop/").await?;
        store.cache_clear()?;
        s.script(script())?;
        let ran = run(
            &s,
            &Request::Run {
                goal: GOAL.into(),
                tab_id: Some(tab),
                for_program: None,
            },
        )
        .await?;
        ensure!(
            ran.sources.len() == 11 && ran.sources.iter().all(|s| s == "llm"),
            "the model-driven run was decided by {:?}",
            ran.sources
        );
        if i > 0 {
            model.push(ran.elapsed);
            model_split.add(&store)?;
        }
    }

    let last = store.recent_runs(1)?.first().context("no run stored")?.id;
    let (_, skill) = library::capture_run(&store, last, SKILL, None)?;
    ensure!(
        skill.steps.len() == 11,
        "the skill has {} steps",
        skill.steps.len()
    );
    let params: Vec<(String, String)> = skill
        .params
        .iter()
        .map(|p| (p.name.clone(), p.example.clone()))
        .collect();
    s.script(vec![])?;
    let (replay, replay_split, pictured) = replays(&s, &store, &params, tab).await?;
    // The same replays without pictures: what the picture after each step costs.
    let mut settings = store.settings()?;
    settings.keep_pictures = false;
    store.set_settings(&settings)?;
    let (bare, bare_split, _) = replays(&s, &store, &params, tab).await?;
    ensure!(
        s.shop.contact_messages().len() == 3 * (RUNS + 1),
        "messages missing"
    );

    let (m, r) = (median(&model), median(&replay));
    println!("10-step task on the demo shop ({RUNS} runs each after one warm-up; scripted model answering at once)");
    println!(
        "  parameters captured: {}",
        params
            .iter()
            .map(|(n, v)| format!("{n}={v:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!(
        "  model-driven run (cache emptied): median {m:.0} ms, {:.0} ms per step",
        m / 11.0
    );
    println!(
        "  skill replay:                     median {r:.0} ms, {:.0} ms per step",
        r / 11.0
    );
    let b = median(&bare);
    println!(
        "  skill replay, no pictures:        median {b:.0} ms, {:.0} ms per step",
        b / 11.0
    );
    println!("    model-driven steps: {}", model_split.line());
    println!("    replayed steps:     {}", replay_split.line());
    println!("    without pictures:   {}", bare_split.line());
    println!("  pictures kept by the last replay: {pictured} of 11 steps");
    println!("  replay / model-driven: {:.2}", r / m);
    println!("  replay with pictures / without: {:.2}", r / b);
    Ok(())
}

/// The skill replayed `RUNS` times after one warm-up: the wall times, where they went, and how
/// many steps of the last replay kept a picture.
async fn replays(
    s: &Session,
    store: &Store,
    params: &[(String, String)],
    tab: i64,
) -> Result<(Vec<Duration>, Split, usize)> {
    let mut times = Vec::new();
    let mut split = Split::default();
    for i in 0..=RUNS {
        s.open("shop/").await?;
        let ran = run(
            s,
            &Request::RunSkill {
                skill: SKILL.into(),
                params: params.to_vec(),
                tab_id: Some(tab),
                for_program: None,
            },
        )
        .await?;
        ensure!(
            ran.sources.len() == 11 && ran.sources.iter().all(|s| s == "skill"),
            "the replay was decided by {:?}",
            ran.sources
        );
        if i > 0 {
            times.push(ran.elapsed);
            split.add(store)?;
        }
    }
    let last = store.recent_runs(1)?.first().context("no run stored")?.id;
    let pictured = store.pictures(last)?.iter().filter(|p| p.is_kept()).count();
    Ok((times, split, pictured))
}
