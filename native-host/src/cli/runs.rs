//! `itinero-host runs list|show|export|delete`: the run history from the store, and a run's
//! report (`crate::report`) with the pictures of its pages. No browser needed.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use itinero_shared::records::{RunDetail, RunId};
use itinero_shared::words;

use crate::report::{self as run_report, MarkdownPictures, Pictures};
use crate::store::Store;

#[derive(Debug, Args)]
pub struct RunsArgs {
    #[command(subcommand)]
    pub command: RunsCommand,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Md,
    Html,
    Json,
}

#[derive(Debug, Subcommand)]
pub enum RunsCommand {
    /// The latest runs, newest first.
    List {
        /// How many to list.
        #[arg(long, default_value_t = 20)]
        limit: u32,
        /// One site's runs only, as `scheme://host[:port]`.
        #[arg(long)]
        site: Option<String>,
        /// Print them as JSON.
        #[arg(long)]
        json: bool,
    },
    /// One run: its answer and its steps, what decided each, the timings and the pictures kept.
    Show {
        id: i64,
        /// Print it as JSON (the pictures' sizes, not the pictures).
        #[arg(long)]
        json: bool,
    },
    /// Write a run's report: HTML (one page, the pictures inline), Markdown (the pictures as
    /// files beside it) or JSON (the pictures in base64).
    Export {
        id: i64,
        #[arg(long, value_enum, default_value_t = Format::Html)]
        format: Format,
        /// The file to write; without it the report goes to standard output (Markdown then
        /// says where each picture is instead of showing it).
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
    /// Delete a run with its steps and pictures.
    Delete { id: i64 },
}

pub fn run_runs(args: &RunsArgs) -> Result<bool> {
    let store = Store::open_default().context("cannot open itinero's store")?;
    match &args.command {
        RunsCommand::List { limit, site, json } => list(&store, *limit, site.as_deref(), *json),
        RunsCommand::Show { id, json } => show(&store, RunId(*id), *json),
        RunsCommand::Export { id, format, output } => {
            export(&store, RunId(*id), *format, output.as_deref())
        }
        RunsCommand::Delete { id } => {
            if !store.delete_run(RunId(*id))? {
                bail!("there is no run {id}; `itinero-host runs list` lists them");
            }
            println!("deleted run {id}, its steps and its pictures");
            Ok(true)
        }
    }
}

fn detail(store: &Store, id: RunId) -> Result<RunDetail> {
    store
        .run_detail(id)?
        .with_context(|| format!("there is no run {id}; `itinero-host runs list` lists them"))
}

fn list(store: &Store, limit: u32, site: Option<&str>, json: bool) -> Result<bool> {
    let site = site.map(|s| s.trim_end_matches('/'));
    let runs = match site {
        Some(site) => store.recent_runs_on(site, limit)?,
        None => store.recent_runs(limit)?,
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&runs)?);
    } else if runs.is_empty() {
        match site {
            Some(site) => println!("no runs on {site}"),
            None => println!("no runs yet: the goals you run appear here"),
        }
    } else {
        println!(
            "{:>5}  {:<11}  {:<19}  {:>5}  GOAL",
            "ID", "STATUS", "STARTED", "STEPS"
        );
        for run in &runs {
            println!(
                "{:>5}  {:<11}  {:<19}  {:>5}  {}",
                run.id.0,
                words::status_label(run.status),
                run_report::local_time(run.started_at),
                run.steps,
                run.goal
            );
        }
    }
    Ok(true)
}

fn show(store: &Store, id: RunId, json: bool) -> Result<bool> {
    let detail = detail(store, id)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&detail)?);
    } else {
        print!(
            "{}",
            run_report::markdown(&detail, MarkdownPictures::Nowhere)
        );
    }
    Ok(true)
}

fn pictures(store: &Store, detail: &RunDetail) -> Result<Pictures> {
    let mut pictures = Pictures::new();
    for p in detail.pictures.iter().filter(|p| p.is_kept()) {
        if let Some(jpeg) = store.picture(detail.run.id, p.n)? {
            pictures.insert(p.n, jpeg);
        }
    }
    Ok(pictures)
}

/// `report.md` keeps its pictures in `report-pictures/step-N.jpg`.
fn pictures_dir(output: &Path) -> PathBuf {
    let stem = output
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "report".into());
    output.with_file_name(format!("{stem}-pictures"))
}

fn export(store: &Store, id: RunId, format: Format, output: Option<&Path>) -> Result<bool> {
    let detail = detail(store, id)?;
    let pictures = pictures(store, &detail)?;
    let text = match (format, output) {
        (Format::Html, _) => run_report::html_page(&detail, &pictures),
        (Format::Json, _) => run_report::json(&detail, &pictures)?,
        (Format::Md, None) => run_report::markdown(&detail, MarkdownPictures::Nowhere),
        (Format::Md, Some(output)) => {
            let dir = pictures_dir(output);
            if !pictures.is_empty() {
                fs::create_dir_all(&dir)
                    .with_context(|| format!("cannot create {}", dir.display()))?;
            }
            for (n, jpeg) in &pictures {
                let file = dir.join(format!("step-{n}.jpg"));
                fs::write(&file, jpeg)
                    .with_context(|| format!("cannot write {}", file.display()))?;
            }
            let folder = dir
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default();
            let name = move |n: u32| format!("{folder}/step-{n}.jpg");
            run_report::markdown(&detail, MarkdownPictures::Beside(&name))
        }
    };
    match output {
        Some(path) => {
            fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))?;
            eprintln!(
                "wrote the report of run {id} to {} ({} of {} steps pictured)",
                path.display(),
                pictures.len(),
                detail.steps.len()
            );
        }
        None => print!("{text}"),
    }
    Ok(true)
}
