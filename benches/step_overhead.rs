//! The host's own time per agent step, without the model and without the page: prompt build,
//! reply parsing and validation, guards, recording the step in the store (a real SQLite file in
//! WAL mode, one transaction per step) and sending its events.
//!
//! The real loop (`agent::run::run`) runs over real observations of the demo shop, taken from
//! Chromium with the extension through the control socket first. In the timed part the browser
//! hands those observations back at once and acts instantly, and the model is the scripted
//! backend (which answers at once; it keeps a copy of each request, as a backend does). Each
//! step's time is the time between two `Observed` events, so it covers everything the host does
//! between "the page is read" and "the next page is read". The panel side serialises every
//! event as the session does before it writes a frame.
//!
//! Run: `cargo bench --bench step_overhead`

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{bail, Result};
use async_trait::async_trait;
use itinero::demo_shop::{DemoShop, ShopOptions};
use itinero::harness::stats::{percentile, sorted};
use itinero::harness::{Harness, LaunchOptions, WAIT};
use itinero_host::agent::memory::StoreMemory;
use itinero_host::agent::recovery::Recovery;
use itinero_host::agent::run::{self, Ask, Browser, Deciders, Panel, Task};
use itinero_host::agent::strategy::{Llm, Retry};
use itinero_host::llm::scripted::{Scripted, Step};
use itinero_host::store::{NewRun, Store};
use itinero_shared::messages::{Outcome, PlanMode, TaskEvent, TaskEventKind};
use itinero_shared::observation::{DomNode, Observation};
use itinero_shared::{Action, ToBrowser};

/// Tasks run; each is as long as a real task gets (the default step limit is 30).
const TASKS: usize = 40;
const STEPS_PER_TASK: usize = 25;
/// Tasks run first and not counted.
const WARMUP_TASKS: usize = 3;
/// Pages of the demo shop the steps cycle through.
#[path = "support/control.rs"]
mod control;

const PAGES: &[&str] = &[
    "shop/",
    "shop/search?q=socks",
    "shop/product/wool-socks",
    "shop/contact",
];

/// The browser, replaying real observations in turn and acting instantly.
struct Replay {
    pages: Vec<Observation>,
    next: Mutex<usize>,
}

#[async_trait]
impl Browser for Replay {
    async fn observe(&self, _tab: i64) -> Result<Observation, String> {
        let mut next = self.next.lock().unwrap();
        let obs = self.pages[*next % self.pages.len()].clone();
        *next += 1;
        Ok(obs)
    }

    async fn perform(&self, _: i64, _: i64, _: &Action) -> Result<(Outcome, u64), String> {
        Ok((Outcome::Done, 0))
    }
}

/// The panel: serialises each event as the session does, and notes when each page was read.
#[derive(Default)]
struct Timing {
    observed: Mutex<Vec<Instant>>,
    bytes: Mutex<usize>,
}

#[async_trait]
impl Panel for Timing {
    async fn event(&self, step: u32, kind: TaskEventKind) {
        let observed = matches!(kind, TaskEventKind::Observed { .. });
        let msg = ToBrowser::TaskEvent(TaskEvent {
            task_id: 1,
            step,
            kind,
        });
        let frame = itinero_shared::Envelope::new(7, msg).to_json();
        *self.bytes.lock().unwrap() += frame.len();
        if observed {
            self.observed.lock().unwrap().push(Instant::now());
        }
    }

    async fn ask(&self, _: &str, _: Ask) -> Option<String> {
        Some("yes".into())
    }
}

fn links(node: &DomNode, out: &mut Vec<u32>) {
    if node.tag == "a" {
        if let Some(i) = node.index {
            out.push(i);
        }
    }
    for c in &node.children {
        links(c, out);
    }
}

/// A reply for step `n` on `page`: a click on one of its links, a different one each visit, so
/// the loop guard never fires; the last step says done.
fn reply(n: usize, page: &Observation, steps: usize) -> String {
    if n + 1 == steps {
        return r#"{"thought": "That is all.", "action": "done", "answer": "finished"}"#.into();
    }
    let mut ids = Vec::new();
    links(&page.root, &mut ids);
    let index = ids[(n / PAGES.len()) % ids.len()];
    format!(
        r#"Here is my next step: {{"thought": "Open link {index} to look further.", "action": "click", "index": {index}}}"#
    )
}

/// Real observations of the demo shop's pages.
async fn observe_shop() -> Result<Vec<Observation>> {
    let shop = DemoShop::new(ShopOptions::default());
    let h = Harness::start_full(LaunchOptions::default(), shop.router()).await?;
    let mut client = control::connect(&h).await?;
    let mut pages = Vec::new();
    for path in PAGES {
        let url = h.fixture_url(path);
        let page = h.chromium.open(&url).await?;
        itinero::harness::PageExt::wait_for(&page, "document.readyState === 'complete'", WAIT)
            .await?;
        let tab_id = control::tab_id(&mut client, &url).await?;
        pages.push(control::observe(&mut client, tab_id).await?);
    }
    Ok(pages)
}

fn report(name: &str, samples: &[f64]) {
    let s = sorted(samples.to_vec());
    println!(
        "{name:<44} n={:<5} p50={:>8.3} ms  p99={:>8.3} ms  max={:>8.3} ms",
        s.len(),
        percentile(&s, 50.0),
        percentile(&s, 99.0),
        s[s.len() - 1]
    );
}

/// Runs one task of `steps` steps over `pages`; returns each step's time (ms) and the prompt
/// bytes sent.
async fn one_task(pages: &[Observation], steps: usize, store: &Store) -> Result<(Vec<f64>, usize)> {
    let script: Vec<Step> = (0..steps)
        .map(|n| Step::reply(reply(n, &pages[n % pages.len()], steps)))
        .collect();
    let script = Arc::new(Scripted::new(script));
    let deciders = Deciders {
        strategy: Box::new(Recovery {
            inner: Retry {
                inner: Llm::new(script.clone(), "qwen2.5:3b"),
                attempts: 3,
            },
            attempts: 2,
        }),
        planner: None,
        sign_in: None,
    };
    let browser = Replay {
        pages: pages.to_vec(),
        next: Mutex::new(0),
    };
    let panel = Timing::default();
    let task = Task {
        goal: "Look through the shop's pages and tell me when you are done".into(),
        tab: 1,
        max_steps: steps as u32,
        plan: PlanMode::Off,
        approval: itinero_shared::records::ApprovalPolicy::AskRisky,
        model: None,
        // The stand-in browser takes no pictures: what a step costs without them.
        pictures: false,
    };
    let memory = StoreMemory::new(
        Some(store.clone()),
        NewRun {
            goal: task.goal.clone(),
            backend: "scripted".into(),
            model: "qwen2.5:3b".into(),
            ..Default::default()
        },
    );
    let stop = AtomicBool::new(false);
    let end = run::run(&task, &deciders, &browser, &panel, &memory, &stop).await;
    memory.finish(end.status, end.answer.clone()).await;
    if end.answer.as_deref() != Some("finished") || script.remaining() != 0 {
        bail!("the run did not go as scripted: {end:?}");
    }
    let observed = panel.observed.lock().unwrap();
    let times = observed
        .windows(2)
        .map(|w| (w[1] - w[0]).as_secs_f64() * 1000.0)
        .collect();
    let prompt_bytes = script
        .requests()
        .iter()
        .flat_map(|r| r.messages.iter().map(|m| m.content.len()))
        .sum();
    Ok((times, prompt_bytes))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<()> {
    let pages = observe_shop().await?;
    let dir = tempfile::tempdir()?;
    let store = Store::open(&dir.path().join("itinero.sqlite3"))?;
    let mut per_step = Vec::new();
    let mut prompt_bytes = 0;
    for t in 0..WARMUP_TASKS + TASKS {
        let (times, bytes) = one_task(&pages, STEPS_PER_TASK, &store).await?;
        if t >= WARMUP_TASKS {
            per_step.extend(times);
            prompt_bytes += bytes;
        }
    }
    let recorded: usize = store
        .recent_runs(500)?
        .iter()
        .map(|r| r.steps as usize)
        .sum();
    if recorded != (WARMUP_TASKS + TASKS) * STEPS_PER_TASK {
        bail!("the store holds {recorded} steps, not every step run");
    }
    println!("host overhead per agent step, no model and no page time: prompt + parse + validate + guards + record (SQLite) + events");
    for (path, obs) in PAGES.iter().zip(&pages) {
        println!(
            "  page {path:<28} {:>4} elements indexed",
            obs.indexed().len()
        );
    }
    println!(
        "  {TASKS} tasks of {STEPS_PER_TASK} steps; mean prompt {} bytes",
        prompt_bytes / (TASKS * STEPS_PER_TASK)
    );
    report("step", &per_step);
    Ok(())
}
