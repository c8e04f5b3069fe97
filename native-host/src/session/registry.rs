//! The running tasks of a session, shared by the registry's owner ([`super::tasks::Tasks`]) and
//! each task's panel (which registers the questions it asks). A poisoned lock is taken over: the
//! map holds no invariant a panicking holder could have broken halfway, and one task's panic
//! must not take the session's later tasks down with it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::{oneshot, Notify};

/// One task while it runs.
pub struct Running {
    pub stop: Arc<AtomicBool>,
    pub stopped: Arc<Notify>,
    /// The questions it waits on, by question id: each gets the answer and whether the user
    /// asked for it to be remembered.
    pub questions: HashMap<u64, oneshot::Sender<(String, bool)>>,
    /// Set once the task is spawned; ends it at once when the session ends.
    pub abort: Option<tokio::task::AbortHandle>,
}

#[derive(Default)]
pub struct State {
    pub next_task: u64,
    pub next_question: u64,
    pub running: HashMap<u64, Running>,
}

/// The registry; cheap to clone.
#[derive(Clone, Default)]
pub struct Registry(Arc<Mutex<State>>);

impl Registry {
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Registers a new task; its id.
    pub fn add(&self, stop: Arc<AtomicBool>, stopped: Arc<Notify>) -> u64 {
        let mut s = self.lock();
        s.next_task += 1;
        let id = s.next_task;
        s.running.insert(
            id,
            Running {
                stop,
                stopped,
                questions: HashMap::new(),
                abort: None,
            },
        );
        id
    }

    /// Registers a question of task `task_id`, answered through `tx`; its id, or `None` when
    /// the task is gone or stopping (nobody should be asked then).
    pub fn ask(&self, task_id: u64, tx: oneshot::Sender<(String, bool)>) -> Option<u64> {
        let mut s = self.lock();
        s.next_question += 1;
        let id = s.next_question;
        let running = s.running.get_mut(&task_id)?;
        if running.stop.load(Ordering::SeqCst) {
            return None;
        }
        running.questions.insert(id, tx);
        Some(id)
    }
}
