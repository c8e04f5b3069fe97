//! Tasks the browser starts: each runs on its own (several may run in different tabs at once),
//! drives its tab through the session's link, and streams its progress back.
//!
//! Every message of a task (`TaskEvent`s, `AskUser`, and last `TaskFinished`) carries the
//! envelope id of the `StartTask` that began it, so the background can route the whole stream
//! to the panel that asked; the body's `task_id` names the task in `StopTask` and `UserReply`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use itinero_shared::messages::{StartTask, TaskFinished, TaskStatus, UserReply};
use itinero_shared::ToBrowser;
use tokio::sync::Notify;

use super::browser::SessionBrowser;
use super::link::BrowserLink;
use super::outbox::{Outbox, WeakOutbox};
use super::panel::SessionPanel;
use super::registry::{Registry, Running};
use super::task_setup::{self, Prepared};
use super::vault_requests::VaultLine;
use crate::agent::run::{self, Finished};
use crate::store::StoreSlot;
use crate::vault::key_store::{self, KeyStore, NoKeyring};
use crate::vault::Vault;

/// The session's tasks; cheap to clone.
#[derive(Clone)]
pub struct Tasks {
    registry: Registry,
    link: BrowserLink,
    /// Weak: the control socket holds the session's tasks too, and must not keep the browser's
    /// writer (and so the session) alive once the browser has gone.
    out: WeakOutbox,
    store: StoreSlot,
    vault: Option<Vault>,
    /// The vault's request queue, started with the first request; one for every clone.
    vault_line: std::sync::Arc<std::sync::OnceLock<VaultLine>>,
}

impl Tasks {
    pub fn new(link: BrowserLink, out: Outbox, store: StoreSlot) -> Self {
        // The vault lives in the store; its key, in the OS secret store of the store's data
        // directory (or a passphrase).
        let vault = store.get().ok().map(|s| {
            let keys: Box<dyn KeyStore> = match s.path().and_then(|p| p.parent()) {
                Some(dir) => key_store::for_data_dir(dir),
                None => Box::new(NoKeyring("a store in memory has no secret store".into())),
            };
            Vault::new(s.clone(), keys)
        });
        Self {
            registry: Registry::default(),
            link,
            out: out.downgrade(),
            store,
            vault,
            vault_line: std::sync::Arc::default(),
        }
    }

    /// The session's vault (`None` without a store).
    pub fn vault(&self) -> Option<&Vault> {
        self.vault.as_ref()
    }

    /// Where the panel's vault requests queue (`None` without a store). Called on the runtime.
    pub fn vault_line(&self) -> Option<&VaultLine> {
        let vault = self.vault.as_ref()?;
        Some(
            self.vault_line
                .get_or_init(|| VaultLine::start(vault.clone())),
        )
    }

    /// The store the tasks record their runs in (and read skills from).
    pub fn store(&self) -> &StoreSlot {
        &self.store
    }

    /// Starts a task for the `StartTask` with envelope id `request_id`; returns its task id.
    pub fn start(&self, request_id: u64, start: StartTask) -> Option<u64> {
        // Gone only once the session ended, when nobody is left to start a task for.
        let out = self.out.upgrade()?;
        Some(self.start_reporting_to(out, request_id, start, None))
    }

    /// Like [`Tasks::start`], with the task's events, questions and result sent to `out`
    /// rather than to the browser: a task started from the control socket reports to its client.
    /// With `for_program` (the program's name) its questions go to the side panels instead,
    /// for the user to answer: a program must not approve its own risky steps.
    pub fn start_reporting_to(
        &self,
        out: Outbox,
        request_id: u64,
        start: StartTask,
        for_program: Option<String>,
    ) -> u64 {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::new(Notify::new());
        let task_id = self.registry.add(stop.clone(), stopped.clone());
        let panel = SessionPanel {
            registry: self.registry.clone(),
            out,
            request_id,
            task_id,
            stopped,
            answer_within: super::panel::answer_within(),
            // A browser already gone has no panel to ask in; the wait for an answer ends it.
            asks_user: for_program.map(|by| {
                (
                    self.out.upgrade().unwrap_or_else(|| Outbox::channel().0),
                    by,
                )
            }),
        };
        let handle = tokio::spawn(self.clone().run(task_id, start, panel, stop));
        if let Some(running) = self.registry.lock().running.get_mut(&task_id) {
            running.abort = Some(handle.abort_handle());
        }
        task_id
    }

    /// One task from start to its `TaskFinished`.
    async fn run(self, task_id: u64, start: StartTask, panel: SessionPanel, stop: Arc<AtomicBool>) {
        tracing::info!(task_id, tab = start.tab_id, "task started");
        let store = self.store.get().ok().cloned();
        let Prepared {
            task,
            deciders,
            memory,
        } = task_setup::prepare(&start, store, self.vault.clone(), &panel).await;
        let browser = SessionBrowser {
            link: self.link.clone(),
            task_id,
        };
        let mut finished = match deciders {
            Ok(deciders) => {
                run::run(&task, &deciders, &browser, &panel, memory.as_ref(), &stop).await
            }
            Err(why) => Finished {
                status: TaskStatus::Failed,
                answer: Some(why),
                steps: 0,
            },
        };
        let healed = memory
            .finish(finished.status, finished.answer.clone())
            .await;
        if let Some(note) = healed {
            finished.answer = Some(match finished.answer {
                Some(a) => format!("{a}\n{note}"),
                None => note,
            });
        }
        tracing::info!(task_id, status = ?finished.status, steps = finished.steps, "task finished");
        self.registry.lock().running.remove(&task_id);
        panel
            .out
            .send(
                panel.request_id,
                ToBrowser::TaskFinished(TaskFinished {
                    task_id,
                    status: finished.status,
                    answer: finished.answer,
                    run_id: memory.run_id().await,
                }),
            )
            .await;
    }

    /// Ends every task at once: the browser is gone, so nobody is left to report to, and a task
    /// waiting on a model or a user must not keep the host alive.
    pub fn abort_all(&self) {
        let running: Vec<Running> = self
            .registry
            .lock()
            .running
            .drain()
            .map(|(_, r)| r)
            .collect();
        for r in running {
            r.stop.store(true, Ordering::SeqCst);
            if let Some(abort) = r.abort {
                abort.abort();
            }
        }
    }

    /// Asks a running task to stop (between steps, or while it waits on the user).
    pub fn stop(&self, task_id: u64) -> Result<(), String> {
        let s = self.registry.lock();
        let running = s
            .running
            .get(&task_id)
            .ok_or_else(|| format!("no task {task_id} is running"))?;
        running.stop.store(true, Ordering::SeqCst);
        running.stopped.notify_waiters();
        Ok(())
    }

    /// The user's answer to a question a task asked.
    pub fn reply(&self, reply: UserReply) -> Result<(), String> {
        let mut s = self.registry.lock();
        let running = s
            .running
            .get_mut(&reply.task_id)
            .ok_or_else(|| format!("no task {} is running", reply.task_id))?;
        let tx = running
            .questions
            .remove(&reply.question_id)
            .ok_or_else(|| {
                format!(
                    "task {} asked no question {}",
                    reply.task_id, reply.question_id
                )
            })?;
        let _ = tx.send((reply.reply, reply.remember));
        Ok(())
    }

    /// Tasks running now.
    pub fn running(&self) -> usize {
        self.registry.lock().running.len()
    }
}
