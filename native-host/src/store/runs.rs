//! The run history: a run per task, with its steps.
//!
//! The agent calls [`Store::begin_run`] when a task starts, [`Store::record_step`] after each
//! step and [`Store::finish_run`] at the end. A step and its run's step count are written in
//! one transaction, so a host killed at any moment leaves a run whose count matches its steps.
//! Runs a dead host left `running` are marked `interrupted` when the store is next opened.

use itinero_shared::records::{RunDetail, RunId, RunStatus, RunSummary, StepRecord};
use rusqlite::{params, Connection, OptionalExtension, Row, TransactionBehavior};
use serde_json::Value;

use super::error::{Doing, Result, StoreError};
use super::{host_process, now_ms, site, Store};

/// What a run starts with.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewRun {
    pub goal: String,
    /// The tab's URL when the task starts; the run's origin is taken from it.
    pub start_url: String,
    pub tab_id: Option<i64>,
    /// The backend and model the task resolved, e.g. `ollama` and `qwen2.5:3b`.
    pub backend: String,
    pub model: String,
}

const RUN_COLUMNS: &str = "id, goal, start_url, origin, tab_id, backend, model, started_at, \
                           finished_at, status, answer, steps";

fn run_from_row(row: &Row<'_>) -> rusqlite::Result<RunSummary> {
    let status: String = row.get(9)?;
    Ok(RunSummary {
        id: RunId(row.get(0)?),
        goal: row.get(1)?,
        start_url: row.get(2)?,
        origin: row.get(3)?,
        tab_id: row.get(4)?,
        backend: row.get(5)?,
        model: row.get(6)?,
        started_at: row.get(7)?,
        finished_at: row.get(8)?,
        // The table's CHECK admits only these words.
        status: RunStatus::parse(&status).unwrap_or(RunStatus::Interrupted),
        answer: row.get(10)?,
        steps: row.get(11)?,
    })
}

const STEP_COLUMNS: &str = "n, url, dom_hash, action, action_summary, outcome, outcome_text, \
                            strategy, thought, decide_ms, act_ms, total_ms, recorded_at, \
                            model_calls, prompt_tokens";

/// A step as stored: JSON columns still text, so a bad one is reported, not a panic.
struct RawStep {
    step: StepRecord,
    action: Option<String>,
    outcome: Option<String>,
}

fn step_from_row(row: &Row<'_>) -> rusqlite::Result<RawStep> {
    let ms = |i: usize| -> rusqlite::Result<Option<u64>> {
        Ok(row
            .get::<_, Option<i64>>(i)?
            .map(|v| u64::try_from(v).unwrap_or(0)))
    };
    Ok(RawStep {
        step: StepRecord {
            n: row.get(0)?,
            url: row.get(1)?,
            dom_hash: row.get(2)?,
            action: None,
            action_summary: row.get(4)?,
            outcome: None,
            outcome_text: row.get(6)?,
            strategy: row.get(7)?,
            thought: row.get(8)?,
            decide_ms: ms(9)?,
            act_ms: ms(10)?,
            total_ms: ms(11)?,
            recorded_at: row.get(12)?,
            model_calls: row.get(13)?,
            prompt_tokens: ms(14)?,
        },
        action: row.get(3)?,
        outcome: row.get(5)?,
    })
}

/// JSON for a column; `null` is kept as no value at all.
fn json_text(value: &Option<Value>) -> Option<String> {
    value
        .as_ref()
        .filter(|v| !v.is_null())
        .map(Value::to_string)
}

fn json_value(text: Option<String>, what: impl FnOnce() -> String) -> Result<Option<Value>> {
    text.map(|t| serde_json::from_str(&t))
        .transpose()
        .map_err(|source| StoreError::Corrupt {
            what: what(),
            source,
        })
}

fn ms_column(ms: Option<u64>) -> Option<i64> {
    ms.map(|v| i64::try_from(v).unwrap_or(i64::MAX))
}

impl Store {
    /// Records the start of a run; it is `running` until [`Store::finish_run`].
    pub fn begin_run(&self, run: &NewRun) -> Result<RunId> {
        let doing = || format!("recording the start of the run {:?}", run.goal);
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .doing(doing)?;
        let origin = site::origin_of(&run.start_url);
        let now = now_ms();
        tx.execute(
            "INSERT INTO runs (goal, start_url, origin, tab_id, backend, model, started_at, host_pid)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                run.goal,
                run.start_url,
                origin,
                run.tab_id,
                run.backend,
                run.model,
                now,
                std::process::id(),
            ],
        )
        .doing(doing)?;
        let id = RunId(tx.last_insert_rowid());
        if let Some(origin) = origin {
            tx.execute(
                "INSERT INTO sites (origin, first_seen, last_seen, runs) VALUES (?1, ?2, ?2, 1)
                 ON CONFLICT (origin) DO UPDATE SET last_seen = ?2, runs = runs + 1",
                params![origin, now],
            )
            .doing(doing)?;
        }
        tx.commit().doing(doing)?;
        Ok(id)
    }

    /// Records a step of `run` and counts it, in one transaction. `step.recorded_at` is set
    /// here. A step number already recorded for the run is refused.
    pub fn record_step(&self, run: RunId, step: &StepRecord) -> Result<()> {
        let doing = || format!("recording step {} of run {run}", step.n);
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .doing(doing)?;
        let counted = tx
            .execute("UPDATE runs SET steps = steps + 1 WHERE id = ?1", [run.0])
            .doing(doing)?;
        if counted == 0 {
            return Err(StoreError::NoSuchRun(run));
        }
        let inserted = tx.execute(
            "INSERT INTO steps (run_id, n, url, dom_hash, action, action_summary, outcome,
                                outcome_text, strategy, thought, decide_ms, act_ms, total_ms,
                                recorded_at, model_calls, prompt_tokens)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
            params![
                run.0,
                step.n,
                step.url,
                step.dom_hash,
                json_text(&step.action),
                step.action_summary,
                json_text(&step.outcome),
                step.outcome_text,
                step.strategy,
                step.thought,
                ms_column(step.decide_ms),
                ms_column(step.act_ms),
                ms_column(step.total_ms),
                now_ms(),
                step.model_calls,
                ms_column(step.prompt_tokens),
            ],
        );
        match inserted {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE =>
            {
                return Err(StoreError::StepExists { run, n: step.n });
            }
            other => other.doing(doing)?,
        };
        tx.commit().doing(doing)
    }

    /// Records how a run ended. `Running` is not an end; a run can be finished again (the last
    /// word counts), so a run wrongly taken for interrupted still gets its real result.
    pub fn finish_run(&self, run: RunId, status: RunStatus, answer: Option<&str>) -> Result<()> {
        if status == RunStatus::Running {
            return Err(StoreError::Invalid(format!(
                "run {run} cannot finish as running"
            )));
        }
        let changed = self
            .conn()
            .execute(
                "UPDATE runs SET status = ?2, answer = ?3, finished_at = ?4 WHERE id = ?1",
                params![run.0, status.as_str(), answer, now_ms()],
            )
            .doing(|| format!("recording the end of run {run}"))?;
        if changed == 0 {
            return Err(StoreError::NoSuchRun(run));
        }
        Ok(())
    }

    /// The latest `limit` runs, newest first.
    pub fn recent_runs(&self, limit: u32) -> Result<Vec<RunSummary>> {
        self.latest_runs("", rusqlite::params![limit], || {
            "listing the latest runs".to_owned()
        })
    }

    /// The latest `limit` runs on `origin` (`scheme://host[:port]`), newest first: older ones
    /// than the latest of all are found too.
    pub fn recent_runs_on(&self, origin: &str, limit: u32) -> Result<Vec<RunSummary>> {
        self.latest_runs(
            "WHERE origin = ?2",
            rusqlite::params![limit, origin],
            || format!("listing the latest runs on {origin}"),
        )
    }

    /// The runs `filter` (an SQL `WHERE` clause, or nothing) keeps, newest first, at most
    /// `params`' first (`?1`).
    fn latest_runs(
        &self,
        filter: &str,
        params: impl rusqlite::Params,
        doing: impl Fn() -> String,
    ) -> Result<Vec<RunSummary>> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(&format!(
                "SELECT {RUN_COLUMNS} FROM runs {filter} \
                 ORDER BY started_at DESC, id DESC LIMIT ?1"
            ))
            .doing(&doing)?;
        let runs = stmt
            .query_map(params, run_from_row)
            .and_then(|rows| rows.collect())
            .doing(&doing);
        runs
    }

    /// One run, if it exists.
    pub fn run(&self, run: RunId) -> Result<Option<RunSummary>> {
        get_run(&self.conn(), run)
    }

    /// A run's steps, in order (empty for a run that does not exist).
    pub fn run_steps(&self, run: RunId) -> Result<Vec<StepRecord>> {
        get_steps(&self.conn(), run)
    }

    /// A run and its steps, read together, if the run exists.
    pub fn run_detail(&self, run: RunId) -> Result<Option<RunDetail>> {
        let mut conn = self.conn();
        // One read transaction: the steps match the summary's count.
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .doing(|| format!("reading run {run}"))?;
        let Some(summary) = get_run(&tx, run)? else {
            return Ok(None);
        };
        let steps = get_steps(&tx, run)?;
        let pictures = super::pictures::pictures_of(&tx, run)?;
        Ok(Some(RunDetail {
            run: summary,
            steps,
            pictures,
        }))
    }

    /// Deletes a run and its steps; whether it existed. Lessons learnt in it are kept.
    pub fn delete_run(&self, run: RunId) -> Result<bool> {
        let deleted = self
            .conn()
            .execute("DELETE FROM runs WHERE id = ?1", [run.0])
            .doing(|| format!("deleting run {run}"))?;
        Ok(deleted > 0)
    }
}

fn get_run(conn: &Connection, run: RunId) -> Result<Option<RunSummary>> {
    conn.query_row(
        &format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = ?1"),
        [run.0],
        run_from_row,
    )
    .optional()
    .doing(|| format!("reading run {run}"))
}

fn get_steps(conn: &Connection, run: RunId) -> Result<Vec<StepRecord>> {
    let doing = || format!("reading the steps of run {run}");
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {STEP_COLUMNS} FROM steps WHERE run_id = ?1 ORDER BY n"
        ))
        .doing(doing)?;
    let raw: Vec<RawStep> = stmt
        .query_map([run.0], step_from_row)
        .and_then(|rows| rows.collect())
        .doing(doing)?;
    raw.into_iter()
        .map(|r| {
            let n = r.step.n;
            Ok(StepRecord {
                action: json_value(r.action, || format!("action of step {n} of run {run}"))?,
                outcome: json_value(r.outcome, || format!("outcome of step {n} of run {run}"))?,
                ..r.step
            })
        })
        .collect()
}

/// Marks `running` runs whose host process is gone as interrupted, ending them at their last
/// recorded step; returns how many. Runs of live hosts (other browser profiles) are left alone.
pub(crate) fn interrupt_orphans(conn: &Connection) -> Result<usize> {
    let doing = || "marking runs of hosts that ended as interrupted".to_owned();
    let pids: Vec<u32> = conn
        .prepare("SELECT DISTINCT host_pid FROM runs WHERE status = 'running'")
        .and_then(|mut stmt| stmt.query_map([], |r| r.get(0))?.collect())
        .doing(doing)?;
    let mut marked = 0;
    for pid in pids {
        if host_process::is_alive(pid) {
            continue;
        }
        marked += conn
            .execute(
                "UPDATE runs SET status = 'interrupted',
                     finished_at = COALESCE(
                         (SELECT MAX(recorded_at) FROM steps WHERE steps.run_id = runs.id),
                         started_at)
                 WHERE status = 'running' AND host_pid = ?1",
                [pid],
            )
            .doing(doing)?;
    }
    Ok(marked)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn new_run(goal: &str) -> NewRun {
        NewRun {
            goal: goal.into(),
            start_url: "https://shop.example/search?q=socks".into(),
            tab_id: Some(4),
            backend: "ollama".into(),
            model: "qwen2.5:3b".into(),
        }
    }

    fn step(n: u32) -> StepRecord {
        StepRecord {
            n,
            url: format!("https://shop.example/page/{n}"),
            dom_hash: Some(format!("hash{n}")),
            action: Some(json!({"kind": "click", "target": {"index": n}})),
            action_summary: format!("click [{n}]"),
            outcome: Some(json!({"kind": "done"})),
            outcome_text: "done".into(),
            strategy: "llm".into(),
            thought: "the button says so".into(),
            decide_ms: Some(900),
            act_ms: Some(40),
            total_ms: Some(950),
            model_calls: 2,
            prompt_tokens: Some(587),
            recorded_at: 0,
        }
    }

    #[test]
    fn a_run_is_begun_stepped_finished_and_read_back() {
        let store = Store::open_in_memory().unwrap();
        let before = now_ms();
        let id = store.begin_run(&new_run("find socks")).unwrap();
        let run = store.run(id).unwrap().unwrap();
        assert_eq!(run.status, RunStatus::Running);
        assert_eq!(run.origin.as_deref(), Some("https://shop.example"));
        assert_eq!(run.tab_id, Some(4));
        assert_eq!(
            (run.backend.as_str(), run.model.as_str()),
            ("ollama", "qwen2.5:3b")
        );
        assert!(run.started_at >= before);
        assert_eq!(run.finished_at, None);
        assert_eq!(run.steps, 0);

        store.record_step(id, &step(1)).unwrap();
        let mut second = step(2);
        second.action = None;
        second.outcome = Some(Value::Null);
        second.decide_ms = None;
        store.record_step(id, &second).unwrap();
        store
            .finish_run(id, RunStatus::Succeeded, Some("12.99 EUR"))
            .unwrap();

        let detail = store.run_detail(id).unwrap().unwrap();
        assert_eq!(detail.run.status, RunStatus::Succeeded);
        assert_eq!(detail.run.answer.as_deref(), Some("12.99 EUR"));
        assert_eq!(detail.run.steps, 2);
        assert!(detail.run.finished_at.unwrap() >= detail.run.started_at);
        assert_eq!(detail.steps.len(), 2);
        let first = &detail.steps[0];
        assert!(first.recorded_at >= before);
        assert_eq!(
            StepRecord {
                recorded_at: 0,
                ..first.clone()
            },
            step(1)
        );
        assert_eq!(detail.steps[1].action, None);
        assert_eq!(detail.steps[1].outcome, None);
        assert_eq!(detail.steps[1].decide_ms, None);
        assert_eq!(store.run_steps(id).unwrap(), detail.steps);
    }

    #[test]
    fn a_step_without_its_run_or_twice_is_refused_and_nothing_is_counted() {
        let store = Store::open_in_memory().unwrap();
        assert!(matches!(
            store.record_step(RunId(99), &step(1)),
            Err(StoreError::NoSuchRun(RunId(99)))
        ));
        let id = store.begin_run(&new_run("g")).unwrap();
        store.record_step(id, &step(1)).unwrap();
        let err = store.record_step(id, &step(1)).unwrap_err();
        assert!(matches!(err, StoreError::StepExists { n: 1, .. }), "{err}");
        assert_eq!(
            err.to_string(),
            format!("step 1 of run {id} is already recorded")
        );
        // The failed insert rolled back its count.
        assert_eq!(store.run(id).unwrap().unwrap().steps, 1);
        assert_eq!(store.run_steps(id).unwrap().len(), 1);
    }

    #[test]
    fn finishing_checks_the_run_and_the_status() {
        let store = Store::open_in_memory().unwrap();
        assert!(matches!(
            store.finish_run(RunId(5), RunStatus::Failed, None),
            Err(StoreError::NoSuchRun(RunId(5)))
        ));
        let id = store.begin_run(&new_run("g")).unwrap();
        assert!(store.finish_run(id, RunStatus::Running, None).is_err());
        store.finish_run(id, RunStatus::Stopped, None).unwrap();
        // The last word counts.
        store.finish_run(id, RunStatus::StepLimit, None).unwrap();
        let run = store.run(id).unwrap().unwrap();
        assert_eq!(run.status, RunStatus::StepLimit);
        assert_eq!(run.answer, None);
    }

    #[test]
    fn recent_runs_are_newest_first_and_limited() {
        let store = Store::open_in_memory().unwrap();
        let ids: Vec<RunId> = (0..5)
            .map(|i| store.begin_run(&new_run(&format!("goal {i}"))).unwrap())
            .collect();
        let runs = store.recent_runs(3).unwrap();
        let got: Vec<RunId> = runs.iter().map(|r| r.id).collect();
        assert_eq!(got, [ids[4], ids[3], ids[2]]);
        assert_eq!(runs[0].goal, "goal 4");
        assert_eq!(store.recent_runs(0).unwrap(), []);
        assert_eq!(store.recent_runs(100).unwrap().len(), 5);
    }

    #[test]
    fn a_site_s_runs_are_found_behind_any_number_of_others() {
        let store = Store::open_in_memory().unwrap();
        let on = |url: &str, goal: &str| {
            store
                .begin_run(&NewRun {
                    start_url: url.into(),
                    ..new_run(goal)
                })
                .unwrap()
        };
        let old = on("https://mail.example/inbox", "old mail");
        let newer = on("https://mail.example/sent", "newer mail");
        for i in 0..5 {
            on("https://shop.example/", &format!("shop {i}"));
        }
        let got: Vec<RunId> = store
            .recent_runs_on("https://mail.example", 10)
            .unwrap()
            .iter()
            .map(|r| r.id)
            .collect();
        assert_eq!(got, [newer, old]);
        assert_eq!(
            store.recent_runs_on("https://mail.example", 1).unwrap()[0].id,
            newer
        );
        assert_eq!(
            store
                .recent_runs_on("https://shop.example", 10)
                .unwrap()
                .len(),
            5
        );
        assert_eq!(
            store.recent_runs_on("https://none.example", 10).unwrap(),
            []
        );
    }

    #[test]
    fn deleting_a_run_takes_its_steps_and_keeps_its_lessons() {
        let store = Store::open_in_memory().unwrap();
        let id = store.begin_run(&new_run("g")).unwrap();
        let other = store.begin_run(&new_run("h")).unwrap();
        store.record_step(id, &step(1)).unwrap();
        store.record_step(id, &step(2)).unwrap();
        store.record_step(other, &step(1)).unwrap();
        let lesson = store
            .add_lesson("https://shop.example", "size M", "ask_human", Some(id))
            .unwrap();
        assert!(store.delete_run(id).unwrap());
        assert!(!store.delete_run(id).unwrap());
        assert_eq!(store.run(id).unwrap(), None);
        assert_eq!(store.run_detail(id).unwrap(), None);
        assert_eq!(store.run_steps(id).unwrap(), []);
        let left: i64 = store
            .conn()
            .query_row("SELECT COUNT(*) FROM steps", [], |r| r.get(0))
            .unwrap();
        assert_eq!(left, 1);
        let lessons = store.lessons(None, 10).unwrap();
        assert_eq!(lessons.len(), 1);
        assert_eq!(lessons[0].id, lesson);
        assert_eq!(lessons[0].run_id, None);
    }

    #[test]
    fn a_page_without_an_origin_is_recorded_without_one() {
        let store = Store::open_in_memory().unwrap();
        let id = store
            .begin_run(&NewRun {
                start_url: "about:blank".into(),
                tab_id: None,
                ..new_run("g")
            })
            .unwrap();
        let run = store.run(id).unwrap().unwrap();
        assert_eq!(run.origin, None);
        assert_eq!(run.tab_id, None);
    }

    #[test]
    fn runs_of_a_dead_host_are_interrupted_and_a_live_hosts_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(super::super::FILE_NAME);
        let store = Store::open(&path).unwrap();
        let ours = store.begin_run(&new_run("ours")).unwrap();
        let dead = store.begin_run(&new_run("dead host's")).unwrap();
        let done = store.begin_run(&new_run("finished")).unwrap();
        store.record_step(dead, &step(1)).unwrap();
        store.finish_run(done, RunStatus::Succeeded, None).unwrap();
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .arg("--list")
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let dead_pid = child.id();
        child.wait().unwrap();
        store
            .conn()
            .execute(
                "UPDATE runs SET host_pid = ?1 WHERE id = ?2",
                params![dead_pid, dead.0],
            )
            .unwrap();
        let last_step_at = store.run_steps(dead).unwrap()[0].recorded_at;

        // A second host opening the store (another browser profile, say).
        let second = Store::open(&path).unwrap();
        assert_eq!(second.interrupted_at_open(), 1);
        let run = second.run(dead).unwrap().unwrap();
        assert_eq!(run.status, RunStatus::Interrupted);
        assert_eq!(run.finished_at, Some(last_step_at));
        assert_eq!(run.steps, 1);
        assert_eq!(
            second.run(ours).unwrap().unwrap().status,
            RunStatus::Running
        );
        assert_eq!(
            second.run(done).unwrap().unwrap().status,
            RunStatus::Succeeded
        );
        // The live host goes on recording into its run.
        store.record_step(ours, &step(1)).unwrap();
        assert_eq!(second.run(ours).unwrap().unwrap().steps, 1);
        assert_eq!(Store::open(&path).unwrap().interrupted_at_open(), 0);
    }

    #[test]
    fn a_corrupt_json_column_is_reported_not_a_panic() {
        let store = Store::open_in_memory().unwrap();
        let id = store.begin_run(&new_run("g")).unwrap();
        store.record_step(id, &step(1)).unwrap();
        // Written around the CHECK, as a damaged file or another tool might have.
        let conn = store.conn();
        conn.pragma_update(None, "ignore_check_constraints", true)
            .unwrap();
        conn.execute("UPDATE steps SET action = '{a:1'", [])
            .unwrap();
        drop(conn);
        let err = store.run_steps(id).unwrap_err();
        assert!(err.to_string().contains("action of step 1 of run"), "{err}");
    }
}
