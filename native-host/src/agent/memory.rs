//! A task's memory in the store: its run and steps, the site's lessons and "always allow"s.
//!
//! Writing is best effort. A store that fails (a full disk, a locked file) is logged and the
//! task goes on: losing a history line is better than losing the user's task. Without a store
//! at all (it could not be opened) nothing is remembered, and the panel says why elsewhere.

use async_trait::async_trait;
use itinero_shared::messages::{Outcome, TaskStatus};
use itinero_shared::records::{RunId, RunStatus, StepRecord};
use itinero_shared::Action;
use tokio::sync::Mutex;

use super::cache::{self, ActionCache, Remembered};
use super::run::Memory;
use super::skill_run::{self, Chosen};
use crate::store::{CacheEntry, CacheKey, NewRun, Store, RUN_ALLOWANCE};

/// Lessons given to the prompt per site, newest first.
const LESSONS_PER_SITE: u32 = 10;
/// Past runs given to the prompt as examples, per site.
const EXAMPLES_PER_SITE: u32 = 2;

pub struct StoreMemory {
    store: Option<Store>,
    /// What the run is written down with once its first page is read.
    new_run: NewRun,
    run: Mutex<Option<RunId>>,
    /// What worked in this run, for the action cache once the run has succeeded.
    worked: Mutex<Vec<(CacheKey, CacheEntry)>>,
    /// The skill this run replays, if any.
    skill: std::sync::Mutex<Option<Chosen>>,
}

/// Strategies whose decisions are worth remembering: the cache's own and a skill's are already
/// remembered, a human's or a guard's are not decisions on the page.
const CACHEABLE: [&str; 3] = ["llm", "vote", "recovery"];

/// Whether a recorded step did what it meant to.
fn step_worked(record: &StepRecord) -> bool {
    let action: Option<Action> = record
        .action
        .as_ref()
        .and_then(|a| serde_json::from_value(a.clone()).ok());
    match (&action, &record.outcome) {
        (Some(Action::Done { success, .. }), _) => *success,
        (Some(_), Some(outcome)) => {
            serde_json::from_value::<Outcome>(outcome.clone()).is_ok_and(|o| o.took_effect())
        }
        _ => false,
    }
}

/// Whether a recorded step's action is one to replay: not a wait, not a question.
fn replayable(record: &StepRecord) -> bool {
    let kind = record
        .action
        .as_ref()
        .and_then(|a| a["kind"].as_str())
        .unwrap_or_default();
    !kind.is_empty() && kind != "wait" && kind != "ask_user"
}

fn logged<T>(what: &str, r: crate::store::Result<T>) -> Option<T> {
    r.map_err(|e| tracing::warn!(error = %e, "the store could not {what}; the task goes on"))
        .ok()
}

impl StoreMemory {
    pub fn new(store: Option<Store>, new_run: NewRun) -> Self {
        Self {
            store,
            new_run,
            run: Mutex::new(None),
            worked: Mutex::new(Vec::new()),
            skill: std::sync::Mutex::new(None),
        }
    }

    /// The run replays `chosen`: it counts in the skill's statistics and may heal it.
    pub fn replays(&self, chosen: Chosen) {
        *self.skill.lock().unwrap_or_else(|p| p.into_inner()) = Some(chosen);
    }

    fn chosen(&self) -> Option<Chosen> {
        self.skill.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Whether the cache holds anything for this task's goal: then the planner is not asked,
    /// since the steps are known.
    pub async fn knows_goal(&self) -> bool {
        let Some(store) = &self.store else {
            return false;
        };
        let goal = cache::normalise_goal(&self.new_run.goal);
        logged(
            "read the action cache",
            store.call(move |s| s.cache_knows_goal(&goal)).await,
        )
        .unwrap_or(false)
    }

    /// The run as the store keeps it, once it is written down.
    pub async fn run_id(&self) -> Option<RunId> {
        *self.run.lock().await
    }

    fn cache_key(&self, record: &StepRecord) -> Option<CacheKey> {
        let page = record.dom_hash.as_deref()?;
        Some(cache::key(&self.new_run.goal, &record.url, page))
    }

    async fn begin_run(&self, url: &str) -> Option<RunId> {
        let store = self.store.as_ref()?;
        let mut run = self.run.lock().await;
        if run.is_none() {
            let new_run = NewRun {
                start_url: url.to_owned(),
                ..self.new_run.clone()
            };
            let skill = self.chosen().map(|c| c.id);
            *run = logged(
                "write down the run",
                store
                    .call(move |s| {
                        let run = s.begin_run(&new_run)?;
                        if let Some(skill) = skill {
                            s.set_run_skill(run, skill)?;
                        }
                        Ok(run)
                    })
                    .await,
            );
        }
        *run
    }

    /// Writes down how the task ended (a task that ended before reading its page is written
    /// down then, so the history shows it too).
    /// Returns what to tell the user about a skill healed by this run.
    pub async fn finish(&self, status: TaskStatus, answer: Option<String>) -> Option<String> {
        let store = self.store.as_ref()?;
        let worked = std::mem::take(&mut *self.worked.lock().await);
        if status == TaskStatus::Succeeded && !worked.is_empty() {
            logged(
                "remember the run's steps in the action cache",
                store.call(move |s| s.cache_put(&worked)).await,
            );
        }
        let run = self.begin_run("").await?;
        logged(
            "write down how the run ended",
            store
                .call(move |s| s.finish_run(run, RunStatus::from(status), answer.as_deref()))
                .await,
        );
        let chosen = self.chosen().filter(|_| status == TaskStatus::Succeeded)?;
        store
            .call(move |s| Ok(skill_run::heal(s, &chosen, run)))
            .await
            .ok()
            .flatten()
    }
}

#[async_trait]
impl Memory for StoreMemory {
    async fn begin(&self, url: &str) {
        self.begin_run(url).await;
    }

    async fn lessons(&self, url: &str) -> Vec<String> {
        let Some(store) = &self.store else {
            return Vec::new();
        };
        let url = url.to_owned();
        logged(
            "read the site's lessons",
            store
                .call(move |s| s.lessons_for(&url, LESSONS_PER_SITE))
                .await,
        )
        .map(|ls| ls.into_iter().map(|l| l.text).collect())
        .unwrap_or_default()
    }

    async fn examples(&self, url: &str, goal: &str) -> Vec<String> {
        let Some(store) = &self.store else {
            return Vec::new();
        };
        let (url, goal) = (url.to_owned(), goal.to_owned());
        logged(
            "read past runs",
            store
                .call(move |s| s.similar_runs(&url, &goal, EXAMPLES_PER_SITE))
                .await,
        )
        .unwrap_or_default()
        .into_iter()
        .filter(|t| !t.steps.is_empty())
        .map(|t| {
            let mut text = format!("Goal: {}\n", t.goal);
            for (i, step) in t.steps.iter().enumerate() {
                text.push_str(&format!("{}. {step}\n", i + 1));
            }
            if let Some(answer) = t.answer.filter(|a| !a.is_empty()) {
                text.push_str(&format!("Answer: {answer}\n"));
            }
            text
        })
        .collect()
    }

    async fn add_lesson(&self, url: &str, text: &str) {
        let Some(store) = &self.store else { return };
        let run = *self.run.lock().await;
        let (url, text) = (url.to_owned(), text.to_owned());
        logged(
            "save the lesson",
            store
                .call(move |s| s.add_lesson(&url, &text, "ask_human", run))
                .await,
        );
    }

    async fn allowed(&self, url: &str, kind: &str) -> bool {
        let Some(store) = &self.store else {
            return false;
        };
        let (url, kind) = (url.to_owned(), kind.to_owned());
        logged(
            "read the site's approvals",
            store.call(move |s| s.is_allowed(&url, &kind)).await,
        )
        .unwrap_or(false)
    }

    async fn allow(&self, url: &str, kind: &str) {
        let Some(store) = &self.store else { return };
        let (url, kind) = (url.to_owned(), kind.to_owned());
        logged(
            "remember the approval",
            store.call(move |s| s.allow(&url, &kind)).await,
        );
    }

    async fn step(&self, record: StepRecord) {
        let Some(store) = &self.store else { return };
        if let Some(key) = self.cache_key(&record).filter(|_| replayable(&record)) {
            let worked = step_worked(&record);
            if record.strategy == cache::NAME {
                logged(
                    "count the cache's use",
                    store
                        .call(move |s| {
                            if worked {
                                s.cache_hit(&key)
                            } else {
                                s.cache_failed(&key).map(drop)
                            }
                        })
                        .await,
                );
            } else if worked && CACHEABLE.contains(&record.strategy.as_str()) {
                if let Some(action) = record.action.clone() {
                    self.worked.lock().await.push((
                        key,
                        CacheEntry {
                            action,
                            decide_ms: record.decide_ms.unwrap_or_default(),
                            hits: 0,
                        },
                    ));
                }
            }
        }
        let Some(run) = *self.run.lock().await else {
            return;
        };
        logged(
            "write down the step",
            store.call(move |s| s.record_step(run, &record)).await,
        );
    }

    async fn picture(&self, step: u32, picture: Result<Vec<u8>, String>) {
        let Some(store) = &self.store else { return };
        let Some(run) = *self.run.lock().await else {
            return;
        };
        let kept = match picture {
            Ok(jpeg) => {
                store
                    .call(move |s| s.keep_picture(run, step, &jpeg, RUN_ALLOWANCE).map(drop))
                    .await
            }
            Err(why) => {
                store
                    .call(move |s| s.withhold_picture(run, step, &why))
                    .await
            }
        };
        logged("keep the step's picture", kept);
    }
}

#[async_trait]
impl ActionCache for StoreMemory {
    async fn lookup(&self, key: &CacheKey) -> Option<Remembered> {
        let store = self.store.as_ref()?;
        let k = key.clone();
        let entry = logged(
            "read the action cache",
            store.call(move |s| s.cache_lookup(&k)).await,
        )??;
        match serde_json::from_value(entry.action) {
            Ok(action) => Some(Remembered {
                action,
                decide_ms: entry.decide_ms,
            }),
            Err(e) => {
                // Written by a host whose actions differed: of no use, and in the way.
                tracing::warn!(error = %e, "a cached action cannot be read; dropping it");
                self.unusable(key).await;
                None
            }
        }
    }

    async fn unusable(&self, key: &CacheKey) {
        let Some(store) = &self.store else { return };
        let key = key.clone();
        logged(
            "count the cache's failed use",
            store.call(move |s| s.cache_failed(&key)).await,
        );
    }
}
