//! A task's memory in the store: its run and steps, the site's lessons and "always allow"s.
//!
//! Writing is best effort. A store that fails (a full disk, a locked file) is logged and the
//! task goes on: losing a history line is better than losing the user's task. Without a store
//! at all (it could not be opened) nothing is remembered, and the panel says why elsewhere.

use async_trait::async_trait;
use itinero_shared::messages::TaskStatus;
use itinero_shared::records::{RunId, RunStatus, StepRecord};
use tokio::sync::Mutex;

use super::run::Memory;
use crate::store::{NewRun, Store};

/// Lessons given to the prompt per site, newest first.
const LESSONS_PER_SITE: u32 = 10;

pub struct StoreMemory {
    store: Option<Store>,
    /// What the run is written down with once its first page is read.
    new_run: NewRun,
    run: Mutex<Option<RunId>>,
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
        }
    }

    async fn begin_run(&self, url: &str) -> Option<RunId> {
        let store = self.store.as_ref()?;
        let mut run = self.run.lock().await;
        if run.is_none() {
            let new_run = NewRun {
                start_url: url.to_owned(),
                ..self.new_run.clone()
            };
            *run = logged(
                "write down the run",
                store.call(move |s| s.begin_run(&new_run)).await,
            );
        }
        *run
    }

    /// Writes down how the task ended (a task that ended before reading its page is written
    /// down then, so the history shows it too).
    pub async fn finish(&self, status: TaskStatus, answer: Option<String>) {
        let Some(store) = &self.store else { return };
        let Some(run) = self.begin_run("").await else {
            return;
        };
        logged(
            "write down how the run ended",
            store
                .call(move |s| s.finish_run(run, RunStatus::from(status), answer.as_deref()))
                .await,
        );
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
        let Some(run) = *self.run.lock().await else {
            return;
        };
        logged(
            "write down the step",
            store.call(move |s| s.record_step(run, &record)).await,
        );
    }
}
