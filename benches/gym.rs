//! The task gym through the real extension, host and Chromium: each task's goal typed into the
//! side panel, run with the chosen backend, and judged by the task's own site. Prints one line
//! per task, then success per family and overall, with median steps, model-decided steps per
//! successful task and wall time.
//!
//! Run: `cargo build --release -p itinero-host --features scripted && cargo bench --bench gym --
//! [--backend none|smollm2|gemma|ollama:MODEL|openai:MODEL] [--seeds 0..3 | --held-out]
//! [--families a,b] [--limit SECS] [--clutter] [--observe] [--trace]`; `--clutter` serves every
//! page with what real sites add around a task (a header's search and account links, a cookie
//! banner, a newsletter sign-up), `--observe` prints each task's start page as the agent
//! observes it instead of running it, `--trace` what the panel showed of each failed run, step
//! by step. `--held-out` runs the seeds kept apart from development
//! (`gym::HELD_OUT` on, three a family unless `--seeds` gives a count from there).

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use itinero::gym::{self, runner, Gym, FAMILIES};
use itinero::harness::panel::{fill, open, open_settings, save};
use itinero::harness::stats::{percentile, sorted};
use itinero::harness::{Harness, LaunchOptions, PageExt};

struct Args {
    backend: String,
    seeds: std::ops::Range<u64>,
    families: Vec<&'static gym::Family>,
    limit: Duration,
    /// Print each task's start page as the agent observes it, instead of running it.
    observe: bool,
    /// Print the panel's lines of each failed run.
    trace: bool,
    /// Serve every page with a real site's clutter around the task.
    clutter: bool,
}

fn args() -> Result<Args> {
    let mut backend = "none".to_owned();
    let mut seeds = 0..3;
    let mut held_out = false;
    let mut families: Vec<&'static gym::Family> = FAMILIES.iter().collect();
    let mut limit = Duration::from_secs(300);
    let mut observe = false;
    let mut trace = false;
    let mut clutter = false;
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--backend" => backend = it.next().context("--backend needs a value")?,
            "--seeds" => {
                let v = it.next().context("--seeds needs A..B")?;
                let (a, b) = v.split_once("..").context("--seeds takes A..B")?;
                seeds = a.parse()?..b.parse()?;
            }
            "--held-out" => held_out = true,
            "--families" => {
                families = it
                    .next()
                    .context("--families needs names")?
                    .split(',')
                    .map(|n| gym::family(n).with_context(|| format!("no family {n:?}")))
                    .collect::<Result<_>>()?;
            }
            "--limit" => {
                limit = Duration::from_secs(it.next().context("--limit needs seconds")?.parse()?)
            }
            "--observe" => observe = true,
            "--trace" => trace = true,
            "--clutter" => clutter = true,
            "--bench" => {}
            other => bail!("unknown argument {other:?}"),
        }
    }
    if held_out {
        seeds = gym::HELD_OUT + seeds.start..gym::HELD_OUT + seeds.end;
    }
    Ok(Args {
        backend,
        seeds,
        families,
        limit,
        observe,
        trace,
        clutter,
    })
}

/// The host's environment for a backend: no Ollama unless it is the one asked for.
fn host_env(backend: &str) -> Result<Vec<(String, String)>> {
    let mut env = vec![(
        "ITINERO_DEVICE".to_owned(),
        std::env::var("ITINERO_DEVICE").unwrap_or_else(|_| "cpu".into()),
    )];
    let mut set = |k: &str, v: &str| env.push((k.to_owned(), v.to_owned()));
    match backend.split_once(':').unwrap_or((backend, "")) {
        ("none", _) => {
            set("ITINERO_BACKEND", "none");
            set("OLLAMA_HOST", "127.0.0.1:9");
        }
        ("smollm2", _) => {
            set("ITINERO_BACKEND", "wgpu");
            set("ITINERO_MODEL", "smollm2-135m-instruct-q4_1");
        }
        ("gemma", _) => {
            set("ITINERO_BACKEND", "wgpu");
            set("ITINERO_MODEL", "gemma3-270m-q4_k_m");
        }
        ("ollama", model) => {
            set("ITINERO_BACKEND", "ollama");
            set("ITINERO_MODEL", model);
            if let Ok(h) = std::env::var("OLLAMA_HOST") {
                set("OLLAMA_HOST", &h);
            }
        }
        ("openai", model) => {
            set("ITINERO_BACKEND", "openai");
            set("ITINERO_MODEL", model);
            for k in ["ITINERO_OPENAI_URL", "ITINERO_OPENAI_KEY"] {
                if let Ok(v) = std::env::var(k) {
                    set(k, &v);
                }
            }
        }
        _ => {
            bail!("unknown backend {backend:?}: none, smollm2, gemma, ollama:MODEL or openai:MODEL")
        }
    }
    Ok(env)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<()> {
    let args = args()?;
    let gym = Gym::new().cluttered(args.clutter);
    let options = LaunchOptions {
        host_env: host_env(&args.backend)?,
        ..Default::default()
    };
    let h = Harness::start_full(options, gym.router()).await?;
    let panel = h.connected_panel().await?;
    open_settings(&panel).await?;
    fill(&panel, "#settings-max-steps", "15").await?;
    save(&panel).await?;
    open(&panel, "run").await?;
    let mut outcomes = Vec::new();
    for family in &args.families {
        for seed in args.seeds.clone() {
            let task = gym.add(family, seed);
            if args.observe {
                let tab = h.chromium.open(&h.fixture_url(&task.start)).await?;
                let obs = panel
                    .tab_message_when_ready(
                        &h.fixture_url(&format!("gym/{}/*", task.id)),
                        &serde_json::json!({"kind": "observe"}),
                    )
                    .await?;
                println!(
                    "{} seed {}: {}\n{}",
                    task.family,
                    seed,
                    task.goal,
                    serde_json::to_string_pretty(&obs)?
                );
                tab.close().await?;
                continue;
            }
            let o = runner::run(&h, &panel, &gym, &task, args.limit).await?;
            println!(
                "{:<18} seed {:>4}  {}  {:>2} steps  {:>2} model calls  {:>5} prompt tokens  {:>6.1} s  {}: {}  [{}]  goal: {}",
                o.task.family,
                o.task.seed,
                if o.success { "PASS" } else { "fail" },
                o.steps,
                o.model_calls,
                o.prompt_tokens.map_or("-".to_owned(), |t| t.to_string()),
                o.wall.as_secs_f64(),
                o.status,
                o.answer.chars().take(80).collect::<String>(),
                o.strategies.join(","),
                o.task.goal,
            );
            if args.trace && !o.success {
                for line in &o.lines {
                    println!("    | {line}");
                }
            }
            outcomes.push(o);
        }
    }
    println!(
        "\nbackend {}, seeds {:?}{}",
        args.backend,
        args.seeds,
        if args.clutter { ", with clutter" } else { "" }
    );
    let mut by_family: BTreeMap<&str, (u32, u32)> = BTreeMap::new();
    for o in &outcomes {
        let e = by_family.entry(o.task.family).or_default();
        e.0 += u32::from(o.success);
        e.1 += 1;
    }
    for (f, (ok, n)) in &by_family {
        println!("{f:<18} {ok}/{n}");
    }
    let ok: Vec<_> = outcomes.iter().filter(|o| o.success).collect();
    let med = |v: Vec<f64>| {
        if v.is_empty() {
            f64::NAN
        } else {
            percentile(&sorted(v), 50.0)
        }
    };
    println!(
        "overall: {}/{} tasks ({:.0} %); median steps {:.0}, model calls per successful task {:.0}, wall {:.1} s",
        ok.len(),
        outcomes.len(),
        100.0 * ok.len() as f64 / outcomes.len().max(1) as f64,
        med(outcomes.iter().map(|o| f64::from(o.steps)).collect()),
        med(ok.iter().map(|o| f64::from(o.model_calls)).collect()),
        med(outcomes.iter().map(|o| o.wall.as_secs_f64()).collect()),
    );
    let prompts: Vec<f64> = outcomes
        .iter()
        .filter_map(|o| o.prompt_tokens.map(|t| t as f64))
        .collect();
    if !prompts.is_empty() {
        let sorted = sorted(prompts);
        println!(
            "prompt tokens (the largest of each task that asked the model, by the backend's tokenizer): median {:.0}, max {:.0}",
            percentile(&sorted, 50.0),
            sorted.last().copied().unwrap_or_default(),
        );
    }
    Ok(())
}
