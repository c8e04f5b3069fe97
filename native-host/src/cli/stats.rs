//! `itinero-host stats`: whether itinero gets better with use, from the run history: per week
//! (or day, or month), for all sites and each one, tasks and their success, model calls per
//! task, the share of steps the cache, skills, grounding and the model decided, and the median
//! task time. Read from the store; no browser needed.

use std::fmt::Write;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use itinero_shared::records::UsagePeriod;

use crate::store::{days_ago, summarise, Period, Store};

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum By {
    Day,
    Week,
    Month,
}

#[derive(Debug, Args)]
pub struct StatsArgs {
    /// The length of each period.
    #[arg(long, value_enum, default_value_t = By::Week)]
    pub by: By,
    /// How many days back to count.
    #[arg(long, value_name = "DAYS", default_value_t = 90)]
    pub days: u32,
    /// One site only, as `scheme://host[:port]` (e.g. https://shop.example).
    #[arg(long)]
    pub site: Option<String>,
    /// Every site on its own lines, not only all sites together.
    #[arg(long)]
    pub sites: bool,
    /// Print the periods as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run_stats(args: &StatsArgs) -> Result<bool> {
    let store = Store::open_default().context("cannot open itinero's store")?;
    let since = days_ago(args.days);
    let site = args.site.as_deref().map(|s| s.trim_end_matches('/'));
    let runs = store.run_facts(since, site)?;
    let period = match args.by {
        By::Day => Period::Day,
        By::Week => Period::Week,
        By::Month => Period::Month,
    };
    let mut periods = summarise(&runs, period);
    if site.is_some() {
        // All of them are the site's: its own lines say it.
        periods.retain(|p| p.site.is_some());
    } else if !args.sites {
        periods.retain(|p| p.site.is_none());
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&periods)?);
    } else if periods.is_empty() {
        println!(
            "no task ended in the last {} days{}",
            args.days,
            site.map(|s| format!(" on {s}")).unwrap_or_default()
        );
    } else {
        print!("{}", table(&periods, args.by));
    }
    Ok(true)
}

fn percent(part: u32, whole: u32) -> String {
    if whole == 0 {
        "-".into()
    } else {
        format!("{:.0}%", f64::from(part) * 100.0 / f64::from(whole))
    }
}

fn date(ms: i64, by: By) -> String {
    let days = ms.div_euclid(86_400_000);
    let (y, m, d) = crate::store::civil_date(days);
    match by {
        By::Month => format!("{y}-{m:02}"),
        By::Day | By::Week => format!("{y}-{m:02}-{d:02}"),
    }
}

/// One line per period (and site): tasks, success, model calls per task, who decided the
/// steps, median task time.
fn table(periods: &[UsagePeriod], by: By) -> String {
    let mut out = format!(
        "{:<10}  {:>5}  {:>4}  {:>10}  {:>5}  {:>5}  {:>6}  {:>5}  {:>7}  SITE\n",
        match by {
            By::Day => "DAY",
            By::Week => "WEEK OF",
            By::Month => "MONTH",
        },
        "TASKS",
        "OK",
        "CALLS/TASK",
        "CACHE",
        "SKILL",
        "GROUND",
        "MODEL",
        "MEDIAN"
    );
    for p in periods {
        let steps = p.steps.total();
        let calls = if p.tasks == 0 {
            "-".into()
        } else {
            format!("{:.1}", p.model_calls as f64 / f64::from(p.tasks))
        };
        let _ = writeln!(
            out,
            "{:<10}  {:>5}  {:>4}  {:>10}  {:>5}  {:>5}  {:>6}  {:>5}  {:>7}  {}",
            date(p.start, by),
            p.tasks,
            percent(p.succeeded, p.tasks),
            calls,
            percent(p.steps.cache, steps),
            percent(p.steps.skill, steps),
            percent(p.steps.grounding, steps),
            percent(p.steps.model, steps),
            p.median_task_ms
                .map_or("-".into(), |ms| format!("{:.1} s", ms as f64 / 1000.0)),
            p.site.as_deref().unwrap_or("all sites")
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use itinero_shared::records::StepsBy;

    #[test]
    fn the_table_shows_success_calls_deciders_and_time() {
        let periods = [UsagePeriod {
            start: 1_795_392_000_000,
            site: None,
            tasks: 4,
            succeeded: 3,
            model_calls: 6,
            steps: StepsBy {
                cache: 5,
                skill: 2,
                grounding: 1,
                model: 2,
                other: 0,
            },
            median_task_ms: Some(12_400),
        }];
        let t = table(&periods, By::Week);
        let line = t.lines().nth(1).unwrap();
        assert_eq!(
            line.split_whitespace().collect::<Vec<_>>(),
            [
                "2026-11-23",
                "4",
                "75%",
                "1.5",
                "50%",
                "20%",
                "10%",
                "20%",
                "12.4",
                "s",
                "all",
                "sites"
            ],
            "{t}"
        );
    }
}
