//! The README's main job as a user runs it: `examples/demo.rs` (which `scripts/demo` starts),
//! with no Ollama and the CPU as the device, so the task runs on the built-in engine's default
//! model on the CPU. What is asserted is what this machinery guarantees — the demo exits cleanly
//! (no system error: a model, the engine, the page and the browser all there), the panel named
//! the model, every step the model decided was an action of the schema (none refused as
//! unusable), and the run reached an end — not whether a 135M model reaches the goal, which the
//! test prints.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{ensure, Context, Result};

/// The demo example of the same cargo profile as this test (`target/<profile>/examples/demo`).
fn demo_binary() -> Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let profile = exe
        .parent()
        .and_then(|deps| deps.parent())
        .context("the test's own directory")?;
    let demo = profile
        .join("examples")
        .join(format!("demo{}", std::env::consts::EXE_SUFFIX));
    ensure!(
        demo.is_file(),
        "{} is missing: `cargo build --workspace --all-targets` builds it",
        demo.display()
    );
    Ok(demo)
}

#[test]
fn the_demo_runs_its_task_on_the_built_in_engine_on_the_cpu() -> Result<()> {
    let out = Command::new(demo_binary()?)
        .env("ITINERO_HEADLESS", "1")
        // Nothing listens on the discard port: Ollama is "not running".
        .env("OLLAMA_HOST", "127.0.0.1:9")
        .env_remove("ITINERO_BACKEND")
        .env_remove("ITINERO_MODEL")
        .env("ITINERO_DEVICE", "cpu")
        .output()
        .context("running the demo")?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("{stdout}\n{stderr}");
    ensure!(out.status.success(), "the demo failed: {}", out.status);
    ensure!(
        stdout.contains("Model: smollm2-135m-instruct-q4_1, built-in engine"),
        "the panel did not name the built-in engine's default model"
    );
    let decided = stdout
        .lines()
        .filter(|l| l.ends_with("(llm)") || l.ends_with("(grounded)"))
        .count();
    ensure!(decided > 0, "no step was decided");
    ensure!(
        !stdout.contains("could not be used"),
        "a reply of the model was not an action of the schema"
    );
    let end = stdout
        .lines()
        .find_map(|l| {
            l.strip_prefix("==> ").filter(|l| {
                ["Done", "Failed", "Stopped", "Step limit"]
                    .iter()
                    .any(|s| l.starts_with(s))
            })
        })
        .context("the demo printed no result")?;
    ensure!(
        end.starts_with("Done") && end.contains("12.99"),
        "the demo did not answer with the price of wool socks: {end}"
    );
    eprintln!("the demo's run on the CPU: {decided} steps decided; {end}");
    Ok(())
}

#[test]
fn a_mistyped_option_is_refused_with_the_usage_before_anything_starts() -> Result<()> {
    let out = Command::new(demo_binary()?)
        .args(["What do wool socks cost?", "--strat", "shop/"])
        .output()
        .context("running the demo")?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    ensure!(!out.status.success(), "the demo took --strat");
    ensure!(
        stderr.contains("unknown option \"--strat\"") && stderr.contains("usage: demo"),
        "{stderr}"
    );
    ensure!(
        !String::from_utf8_lossy(&out.stdout).contains("starting"),
        "the demo started Chromium first"
    );
    Ok(())
}
