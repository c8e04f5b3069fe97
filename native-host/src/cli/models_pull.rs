//! `itinero-host models pull NAME`: known models fetched into the cache (`llm::pull` does the
//! work), with a bar on stderr while each downloads.

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use itinero_engine::models;

use crate::llm::pull::{self, PullError, Pulled};

/// Each model's outcome on stdout, progress and errors on stderr. With `all`, a model that
/// fails does not keep the others from being pulled.
pub fn run_pull(name: &str) -> Result<bool> {
    let chosen = pull::resolve(name)?;
    let dir = models::cache_dir()?;
    let index = pull::index();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the runtime for the download")?;
    let client = pull::client().context("cannot set up the HTTP client")?;
    let mut all_ok = true;
    for model in &chosen {
        let bar = progress_bar(u64::from(model.download_mb) * 1_000_000, model.id);
        let mut progress = |done: u64, total: u64| {
            bar.set_length(total);
            bar.set_position(done);
        };
        // Dropping the pull on Ctrl-C runs its clean-up; the default signal would kill the
        // process and leave the partial file behind.
        let outcome = runtime.block_on(async {
            tokio::select! {
                r = pull::pull_model(&client, &index, &dir, model, &mut progress) => r,
                _ = tokio::signal::ctrl_c() => Err(PullError::Interrupted { model: model.id }),
            }
        });
        bar.finish_and_clear();
        match outcome {
            Ok(Pulled::AlreadyThere(path)) => println!(
                "{}: already in the cache with the pinned sha256 ({})",
                model.id,
                path.display()
            ),
            Ok(Pulled::Fetched(path)) => println!(
                "{}: pulled from {} into {} (sha256 checked)",
                model.id,
                model.source,
                path.display()
            ),
            Err(e @ PullError::Interrupted { .. }) => {
                eprintln!("error: {e}");
                return Ok(false);
            }
            Err(e) => {
                eprintln!("error: {e}");
                all_ok = false;
            }
        }
    }
    Ok(all_ok)
}

/// A bar on stderr, drawn only where stderr is a terminal (indicatif's choice). Megabytes as
/// the messages count them (10^6), not MiB, so the bar agrees with "93 MB".
fn progress_bar(len: u64, label: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(
        "{prefix} [{bar:30}] {decimal_bytes}/{decimal_total_bytes} {decimal_bytes_per_sec} eta {eta}",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_prefix(label.to_owned());
    bar
}
