//! Usage statistics from the run history: per period, for each site and for all of them, how
//! many tasks ended and succeeded, the model calls they took, what decided their steps and how
//! long they took. Read from `runs` and `steps`; nothing is kept besides.

use std::collections::{BTreeMap, HashMap};

use itinero_shared::records::{sites_by_tasks, RunStatus, StepsBy, UsagePeriod};
use rusqlite::params;

use super::error::{Doing, Result};
use super::Store;

/// How long a period of the statistics is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Period {
    Day,
    Week,
    Month,
}

const DAY_MS: i64 = 86_400_000;

/// The moment `days` days ago (Unix ms): where the statistics the panel and the CLI ask for
/// start counting.
pub fn days_ago(days: u32) -> i64 {
    super::now_ms() - i64::from(days) * DAY_MS
}

/// The panel asks by the wire's name for it.
impl From<itinero_shared::messages::StatsBy> for Period {
    fn from(by: itinero_shared::messages::StatsBy) -> Self {
        use itinero_shared::messages::StatsBy;
        match by {
            StatsBy::Day => Period::Day,
            StatsBy::Week => Period::Week,
            StatsBy::Month => Period::Month,
        }
    }
}

impl Period {
    /// The start of the period holding `ms` (UTC; weeks start on Monday).
    pub fn start_of(self, ms: i64) -> i64 {
        let day = ms.div_euclid(DAY_MS);
        match self {
            Period::Day => day * DAY_MS,
            // 1970-01-01 was a Thursday: day 4 of its week, counted from Monday as 0... 3.
            Period::Week => (day - (day + 3).rem_euclid(7)) * DAY_MS,
            Period::Month => {
                let (y, m, _) = civil_from_days(day);
                days_from_civil(y, m, 1) * DAY_MS
            }
        }
    }
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (Howard Hinnant's method).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// One ended run, as the statistics count it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunFacts {
    pub site: Option<String>,
    pub started_at: i64,
    pub finished_at: Option<i64>,
    pub status: RunStatus,
    pub model_calls: u64,
    pub steps: StepsBy,
}

/// The statistics of `runs`: for each period, all sites together first, then each site by
/// name; periods oldest first.
pub fn summarise(runs: &[RunFacts], period: Period) -> Vec<UsagePeriod> {
    #[derive(Default)]
    struct Acc {
        out: UsagePeriod,
        times: Vec<u64>,
    }
    let mut acc: BTreeMap<(i64, Option<String>), Acc> = BTreeMap::new();
    for run in runs {
        let start = period.start_of(run.started_at);
        for site in [None, run.site.clone()] {
            let a = acc.entry((start, site.clone())).or_default();
            a.out.start = start;
            a.out.site = site;
            a.out.tasks += 1;
            a.out.succeeded += u32::from(run.status == RunStatus::Succeeded);
            a.out.model_calls += run.model_calls;
            a.out.steps.add(&run.steps);
            if let Some(end) = run.finished_at {
                a.times
                    .push(u64::try_from(end - run.started_at).unwrap_or(0));
            }
            if run.site.is_none() {
                // A run with no site counts in "all sites" only.
                break;
            }
        }
    }
    acc.into_values()
        .map(|mut a| {
            a.times.sort_unstable();
            a.out.median_task_ms = median(&a.times);
            a.out
        })
        .collect()
}

/// `periods` with only the `max_sites` sites that had the most tasks (every period for all
/// sites together is kept).
pub fn busiest_sites(mut periods: Vec<UsagePeriod>, max_sites: usize) -> Vec<UsagePeriod> {
    let kept: Vec<String> = sites_by_tasks(&periods)
        .into_iter()
        .take(max_sites)
        .collect();
    periods.retain(|p| p.site.as_ref().is_none_or(|s| kept.contains(s)));
    periods
}

fn median(sorted: &[u64]) -> Option<u64> {
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2),
    }
}

impl Store {
    /// Every run that ended since `since` (Unix ms), oldest first, with its steps counted by
    /// what decided them; only runs of `site` when one is named.
    pub fn run_facts(&self, since: i64, site: Option<&str>) -> Result<Vec<RunFacts>> {
        let doing = || "reading the runs for the statistics".to_owned();
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(
                "SELECT r.id, r.origin, r.started_at, r.finished_at, r.status, \
                        COALESCE(SUM(s.model_calls), 0) \
                 FROM runs r LEFT JOIN steps s ON s.run_id = r.id \
                 WHERE r.status != 'running' AND r.started_at >= ?1 \
                   AND (?2 IS NULL OR r.origin = ?2) \
                 GROUP BY r.id ORDER BY r.started_at, r.id",
            )
            .doing(doing)?;
        let mut runs: Vec<(i64, RunFacts)> = stmt
            .query_map(params![since, site], |row| {
                let status: String = row.get(4)?;
                Ok((
                    row.get::<_, i64>(0)?,
                    RunFacts {
                        site: row.get(1)?,
                        started_at: row.get(2)?,
                        finished_at: row.get(3)?,
                        status: RunStatus::parse(&status).unwrap_or(RunStatus::Interrupted),
                        model_calls: row.get::<_, i64>(5)?.max(0) as u64,
                        steps: StepsBy::default(),
                    },
                ))
            })
            .and_then(|rows| rows.collect())
            .doing(doing)?;
        // Every counted run's steps by decider, in one pass over the same runs.
        let mut by_decider = conn
            .prepare_cached(
                "SELECT s.run_id, s.strategy, COUNT(*) FROM steps s JOIN runs r ON r.id = s.run_id \
                 WHERE r.status != 'running' AND r.started_at >= ?1 \
                   AND (?2 IS NULL OR r.origin = ?2) \
                 GROUP BY s.run_id, s.strategy",
            )
            .doing(doing)?;
        let counts: Vec<(i64, String, i64)> = by_decider
            .query_map(params![since, site], |row| {
                Ok((row.get(0)?, row.get(1)?, row.get(2)?))
            })
            .and_then(|rows| rows.collect())
            .doing(doing)?;
        let at: HashMap<i64, usize> = runs
            .iter()
            .enumerate()
            .map(|(i, (id, _))| (*id, i))
            .collect();
        for (id, strategy, n) in counts {
            if let Some(&i) = at.get(&id) {
                runs[i]
                    .1
                    .steps
                    .count(&strategy, u32::try_from(n).unwrap_or(u32::MAX));
            }
        }
        Ok(runs.into_iter().map(|(_, f)| f).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_busiest_sites_are_kept_beside_all_sites() {
        let period = |site: Option<&str>, tasks: u32| UsagePeriod {
            site: site.map(str::to_owned),
            tasks,
            ..Default::default()
        };
        let kept = busiest_sites(
            vec![
                period(None, 9),
                period(Some("https://a.example"), 1),
                period(Some("https://b.example"), 5),
                period(Some("https://c.example"), 2),
                period(Some("https://a.example"), 2),
            ],
            2,
        );
        let sites: Vec<Option<&str>> = kept.iter().map(|p| p.site.as_deref()).collect();
        assert_eq!(
            sites,
            [
                None,
                Some("https://a.example"),
                Some("https://b.example"),
                Some("https://a.example")
            ]
        );
    }

    const NOV_27_2026: i64 = 1_795_737_600_000; // a Friday, 00:00 UTC

    #[test]
    fn periods_start_at_midnight_on_mondays_and_on_the_first() {
        let friday_noon = NOV_27_2026 + 12 * 3_600_000;
        assert_eq!(Period::Day.start_of(friday_noon), NOV_27_2026);
        assert_eq!(Period::Week.start_of(friday_noon), NOV_27_2026 - 4 * DAY_MS);
        assert_eq!(
            Period::Month.start_of(friday_noon),
            NOV_27_2026 - 26 * DAY_MS
        );
        assert_eq!(
            Period::Week.start_of(0),
            -3 * DAY_MS,
            "1970-01-01 was a Thursday"
        );
        assert_eq!(
            Period::Month.start_of(DAY_MS * 59),
            DAY_MS * 59,
            "1970-03-01"
        );
    }

    fn run(site: &str, day: i64, ok: bool, secs: i64, calls: u64, by: &[&str]) -> RunFacts {
        let mut steps = StepsBy::default();
        for s in by {
            steps.count(s, 1);
        }
        let started_at = NOV_27_2026 + day * DAY_MS;
        RunFacts {
            site: Some(site.into()),
            started_at,
            finished_at: Some(started_at + secs * 1000),
            status: if ok {
                RunStatus::Succeeded
            } else {
                RunStatus::Failed
            },
            model_calls: calls,
            steps,
        }
    }

    #[test]
    fn each_week_counts_all_sites_and_each_site_with_the_median_time() {
        let shop = "https://shop.example";
        let mail = "https://mail.example";
        let runs = [
            run(shop, -4, true, 10, 3, &["llm", "llm", "grounded"]),
            run(shop, -3, false, 30, 2, &["llm", "sign-in"]),
            run(mail, -2, true, 20, 0, &["cache", "skill"]),
            run(shop, 3, true, 4, 0, &["cache", "cache", "cache"]),
        ];
        let weeks = summarise(&runs, Period::Week);
        let this = Period::Week.start_of(NOV_27_2026);
        assert_eq!(weeks.len(), 5, "{weeks:#?}");
        let all = &weeks[0];
        assert_eq!((all.start, all.site.as_deref()), (this, None));
        assert_eq!((all.tasks, all.succeeded, all.model_calls), (3, 2, 5));
        assert_eq!(
            all.steps,
            StepsBy {
                cache: 1,
                skill: 1,
                grounding: 1,
                model: 3,
                other: 1
            }
        );
        assert_eq!(all.median_task_ms, Some(20_000));
        let shop_week = weeks
            .iter()
            .find(|w| w.start == this && w.site.as_deref() == Some(shop))
            .unwrap();
        assert_eq!(
            (shop_week.tasks, shop_week.median_task_ms),
            (2, Some(20_000))
        );
        let next = weeks
            .iter()
            .filter(|w| w.start == this + 7 * DAY_MS)
            .count();
        assert_eq!(next, 2, "next week: all sites and the shop");
        assert_eq!(weeks[3].steps.cache, 3);
    }

    #[test]
    fn the_store_gives_each_ended_run_its_steps_by_decider() {
        use crate::store::NewRun;
        use itinero_shared::records::StepRecord;
        let store = Store::open_in_memory().unwrap();
        let new = |url: &str| NewRun {
            goal: "g".into(),
            start_url: url.into(),
            ..Default::default()
        };
        let a = store.begin_run(&new("https://shop.example/a")).unwrap();
        for (n, strategy) in ["cache", "llm", "sign-in"].iter().enumerate() {
            let step = StepRecord {
                n: n as u32 + 1,
                url: "https://shop.example/a".into(),
                strategy: (*strategy).into(),
                model_calls: u32::from(*strategy == "llm") * 2,
                ..Default::default()
            };
            store.record_step(a, &step).unwrap();
        }
        store
            .finish_run(a, RunStatus::Succeeded, Some("ok"))
            .unwrap();
        let _running = store.begin_run(&new("https://shop.example/b")).unwrap();
        let b = store.begin_run(&new("https://mail.example/")).unwrap();
        store.finish_run(b, RunStatus::Failed, None).unwrap();

        let all = store.run_facts(0, None).unwrap();
        assert_eq!(all.len(), 2, "the running one is not counted yet");
        assert_eq!(all[0].site.as_deref(), Some("https://shop.example"));
        assert_eq!(all[0].model_calls, 2);
        assert_eq!(
            (all[0].steps.cache, all[0].steps.model, all[0].steps.other),
            (1, 1, 1)
        );
        let mail = store.run_facts(0, Some("https://mail.example")).unwrap();
        assert_eq!(mail.len(), 1);
        assert_eq!(mail[0].status, RunStatus::Failed);
    }
}
