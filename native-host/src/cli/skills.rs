//! `itinero-host skills …`: the skills library from a terminal: list, show, export, import,
//! delete, and capture a stored run as a skill. It opens the same store file the host uses
//! (`itinero.sqlite3` in the data directory, which `ITINERO_DATA_DIR` moves), so what the panel
//! saved is here and what is imported here is in the panel. `run` goes through the browser,
//! by way of the running host ([`super::task`]).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use itinero_shared::records::RunId;
use itinero_shared::skills::SkillSummary;

use super::task::parse_param;
use crate::skills::library::{self, Imported};
use crate::skills::{self, export};
use crate::store::{Store, StoredSkill};

#[derive(Debug, Args)]
pub struct SkillsArgs {
    #[command(subcommand)]
    pub command: SkillsCommand,
}

#[derive(Debug, Subcommand)]
pub enum SkillsCommand {
    /// List the skills with their statistics; SEARCH keeps those whose name, goal or site has it.
    List {
        search: Option<String>,
        /// Print the list as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show one skill: its site, goal, parameters, statistics and steps.
    Show {
        name: String,
        /// Print the skill's JSON (what `export --format json` writes).
        #[arg(long)]
        json: bool,
    },
    /// Write a skill as a Markdown playbook, as JSON, or as a Playwright script.
    Export(ExportArgs),
    /// Add a skill from its JSON, or keep a Markdown playbook as a hint for its site.
    Import {
        file: PathBuf,
        /// Store the skill under this name (when its own is taken).
        #[arg(long)]
        name: Option<String>,
    },
    /// Replay a skill in the browser (through the running host), with values for its parameters.
    Run(super::task::SkillArgs),
    /// Delete a skill (the runs that replayed it stay in the history).
    Delete { name: String },
    /// Save a successful run from the history as a skill.
    Capture {
        /// The run's id, as the panel's History shows it.
        run_id: i64,
        #[arg(long)]
        name: String,
        /// What the skill is for (default: the run's goal).
        #[arg(long)]
        description: Option<String>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Markdown,
    Json,
    Playwright,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    pub name: String,
    #[arg(long, value_enum, default_value_t = Format::Markdown)]
    pub format: Format,
    /// A parameter's value for the Playwright script, e.g. --param query="wool socks".
    #[arg(long = "param", value_name = "NAME=VALUE", value_parser = parse_param)]
    pub params: Vec<(String, String)>,
    /// Write here instead of to standard output.
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
}

pub fn run_skills(args: &SkillsArgs) -> Result<bool> {
    // The host reads the skill from the store; this process does not open it.
    if let SkillsCommand::Run(run) = &args.command {
        return super::task::run_skill(run);
    }
    let store = Store::open_default().context("cannot open itinero's store")?;
    match &args.command {
        SkillsCommand::List { search, json } => list(&store, search.as_deref(), *json),
        SkillsCommand::Show { name, json } => show(&store, name, *json),
        SkillsCommand::Export(a) => export_skill(&store, a),
        SkillsCommand::Import { file, name } => import(&store, file, name.as_deref()),
        SkillsCommand::Delete { name } => delete(&store, name),
        SkillsCommand::Capture {
            run_id,
            name,
            description,
        } => capture(&store, RunId(*run_id), name, description.as_deref()),
        SkillsCommand::Run(_) => unreachable!("run was handled above"),
    }
    .map(|()| true)
}

fn find(store: &Store, name: &str) -> Result<StoredSkill> {
    store.skill_by_name(name)?.with_context(|| {
        format!("there is no skill named {name:?}; `itinero-host skills list` shows the skills")
    })
}

fn list(store: &Store, search: Option<&str>, json: bool) -> Result<()> {
    let skills = store.list_skills(search)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&skills)?);
    } else if skills.is_empty() {
        match search {
            Some(s) => println!("no skill matches {s:?}"),
            None => println!("no skills yet: save a successful run as one (`itinero-host skills capture RUN_ID --name NAME`)"),
        }
    } else {
        print!("{}", table(&skills, crate::store::now_ms()));
    }
    Ok(())
}

/// One line per skill: name, runs (succeeded), last run, average time, site, goal.
fn table(skills: &[SkillSummary], now: i64) -> String {
    let name_width = skills
        .iter()
        .map(|s| s.name.chars().count())
        .max()
        .unwrap_or(0)
        .clamp(4, 40);
    let mut out = format!(
        "{:<name_width$}  {:>5}  {:>4}  {:>9}  {:>7}  {}\n",
        "NAME", "STEPS", "RUNS", "LAST RUN", "AVG", "SITE / GOAL"
    );
    for s in skills {
        let runs = if s.stats.runs == 0 {
            "0".to_owned()
        } else {
            format!("{}/{}", s.stats.succeeded, s.stats.runs)
        };
        let _ = writeln!(
            out,
            "{:<name_width$}  {:>5}  {:>4}  {:>9}  {:>7}  {} — {}",
            s.name,
            s.steps,
            runs,
            s.stats.last_run.map_or("never".to_owned(), |t| ago(now, t)),
            s.stats.average_ms.map_or("-".to_owned(), seconds),
            s.origin,
            s.goal
        );
    }
    out
}

/// How long ago `then` was, in the largest unit that fits: `5 s ago`, `3 h ago`.
pub(super) fn ago(now: i64, then: i64) -> String {
    let s = (now - then).max(0) / 1000;
    match s {
        0..=59 => format!("{s} s ago"),
        60..=3599 => format!("{} min ago", s / 60),
        3600..=86_399 => format!("{} h ago", s / 3600),
        _ => format!("{} d ago", s / 86_400),
    }
}

fn steps(n: usize) -> String {
    if n == 1 {
        "1 step".to_owned()
    } else {
        format!("{n} steps")
    }
}

fn seconds(ms: u64) -> String {
    format!("{:.1} s", ms as f64 / 1000.0)
}

fn show(store: &Store, name: &str, json: bool) -> Result<()> {
    let stored = find(store, name)?;
    if json {
        print!("{}", skills::to_json(&stored.skill));
        return Ok(());
    }
    let stats = store
        .list_skills(Some(&stored.skill.name))?
        .into_iter()
        .find(|s| s.id == stored.id)
        .map(|s| s.stats)
        .unwrap_or_default();
    let mut head = format!("Skill {} (id {})", stored.skill.name, stored.id);
    if let Some(run) = stored.source_run {
        let _ = write!(head, ", captured from run {run}");
    }
    let _ = write!(head, "\nRuns: {}", stats.runs);
    if stats.runs > 0 {
        let _ = write!(
            head,
            ", {} succeeded, last {}",
            stats.succeeded,
            stats
                .last_run
                .map_or("never".to_owned(), |t| ago(crate::store::now_ms(), t))
        );
        if let Some(ms) = stats.average_ms {
            let _ = write!(head, ", {} on average", seconds(ms));
        }
    }
    println!("{head}\n");
    print!("{}", skills::to_markdown(&stored.skill));
    Ok(())
}

fn export_skill(store: &Store, args: &ExportArgs) -> Result<()> {
    let stored = find(store, &args.name)?;
    if args.format != Format::Playwright && !args.params.is_empty() {
        bail!(
            "--param is for --format playwright: the other formats keep the parameters as they are"
        );
    }
    let text = match args.format {
        Format::Markdown => export::to_markdown(&stored.skill),
        Format::Json => export::to_json(&stored.skill),
        Format::Playwright => export::to_playwright(&stored.skill, &args.params)
            .with_context(|| format!("cannot export skill {:?}", stored.skill.name))?,
    };
    match &args.output {
        Some(path) => {
            write_file(path, &text, args.format == Format::Playwright)?;
            eprintln!("wrote {}", path.display());
        }
        None => print!("{text}"),
    }
    Ok(())
}

/// Writes `text` to `path`; a script is made executable (it starts with `#!/usr/bin/env node`).
fn write_file(path: &Path, text: &str, executable: bool) -> Result<()> {
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))?;
    #[cfg(unix)]
    if executable {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
            .with_context(|| format!("cannot make {} executable", path.display()))?;
    }
    #[cfg(not(unix))]
    let _ = executable;
    Ok(())
}

fn import(store: &Store, file: &Path, name: Option<&str>) -> Result<()> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    if name.is_some() && !text.trim_start().starts_with('{') {
        bail!(
            "--name is for a skill's JSON; {} is a Markdown playbook",
            file.display()
        );
    }
    match library::import_text(store, &text, name).with_context(|| {
        format!(
            "cannot import {} (`--name` stores a skill under another name)",
            file.display()
        )
    })? {
        Imported::Skill { id, skill } => println!(
            "imported skill {:?} (id {id}): {} on {}",
            skill.name,
            steps(skill.steps.len()),
            skill.origin
        ),
        Imported::Playbook {
            title,
            origin,
            lesson,
        } => println!(
            "kept playbook {title:?} as a hint for {origin} (lesson {lesson}); the agent reads it on that site"
        ),
    }
    Ok(())
}

fn delete(store: &Store, name: &str) -> Result<()> {
    let stored = find(store, name)?;
    store.delete_skill(stored.id)?;
    println!("deleted skill {:?}", stored.skill.name);
    Ok(())
}

fn capture(store: &Store, run: RunId, name: &str, description: Option<&str>) -> Result<()> {
    let (id, skill) = library::capture_run(store, run, name, description)?;
    let params: Vec<String> = skill
        .params
        .iter()
        .map(|p| format!("{{{}}} (e.g. {:?})", p.name, p.example))
        .collect();
    println!(
        "saved skill {:?} (id {id}): {} on {}; goal {:?}; parameters: {}",
        skill.name,
        steps(skill.steps.len()),
        skill.origin,
        skill.goal,
        if params.is_empty() {
            "none".to_owned()
        } else {
            params.join(", ")
        }
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use itinero_shared::skills::SkillStats;

    #[test]
    fn params_are_name_equals_value() {
        assert_eq!(
            parse_param("query=wool socks=warm").unwrap(),
            ("query".to_owned(), "wool socks=warm".to_owned())
        );
        assert_eq!(parse_param("q=").unwrap(), ("q".to_owned(), String::new()));
        assert!(parse_param("query").is_err());
        assert!(parse_param("=x").is_err());
    }

    #[test]
    fn the_table_shows_runs_success_and_time() {
        let now = 10_000_000;
        let skill = |name: &str, stats: SkillStats| SkillSummary {
            id: 1,
            name: name.into(),
            description: String::new(),
            origin: "https://shop.example".into(),
            goal: "Search for {query}".into(),
            params: vec![],
            steps: 3,
            stats,
            updated_at: 0,
        };
        let text = table(
            &[
                skill(
                    "Buy socks",
                    SkillStats {
                        runs: 4,
                        succeeded: 3,
                        last_run: Some(now - 7_200_000),
                        average_ms: Some(4_250),
                    },
                ),
                skill("Fresh", SkillStats::default()),
            ],
            now,
        );
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("NAME"), "{text}");
        assert!(lines[1].contains("3/4"), "{text}");
        assert!(lines[1].contains("2 h ago"), "{text}");
        assert!(
            lines[1].contains("4.2 s") || lines[1].contains("4.3 s"),
            "{text}"
        );
        assert!(
            lines[1].ends_with("https://shop.example — Search for {query}"),
            "{text}"
        );
        assert!(lines[2].contains("never"), "{text}");
    }

    #[test]
    fn ago_picks_the_largest_unit() {
        assert_eq!(ago(5_000, 0), "5 s ago");
        assert_eq!(ago(120_000, 0), "2 min ago");
        assert_eq!(ago(3 * 86_400_000, 0), "3 d ago");
        assert_eq!(ago(0, 5_000), "0 s ago");
    }
}
