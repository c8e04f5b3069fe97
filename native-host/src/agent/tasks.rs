//! Tasks the browser starts: each runs on its own (several may run in different tabs at once),
//! drives its tab through the session's link, and streams its progress back.
//!
//! Every message of a task (`TaskEvent`s, `AskUser`, and last `TaskFinished`) carries the
//! envelope id of the `StartTask` that began it, so the background can route the whole stream
//! to the panel that asked; the body's `task_id` names the task in `StopTask` and `UserReply`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use itinero_shared::messages::{
    AskUser, Outcome, SecretField, StartTask, TaskEvent, TaskEventKind, TaskFinished, TaskOptions,
    TaskStatus, UserReply, VoteMode,
};
use itinero_shared::observation::Observation;
use itinero_shared::{Action, ErrorCode, ToBrowser};
use tokio::sync::{oneshot, Notify};

use super::cache::{ActionCache, Cached};
use super::memory::StoreMemory;
use super::planner::LlmPlanner;
use super::prompt;
use super::recovery::Recovery;
use super::replay::Replay;
use super::run::{self, Ask, Browser, Deciders, Panel, Task};
use super::skill_run;
use super::strategy::{DecideError, Decision, Llm, Retry, Step, Strategy};
use super::vote::{self, Vote};
use crate::link::{BrowserLink, LinkError};
use crate::llm::ollama::{self, Ollama};
use crate::llm::openai::OpenAi;
use crate::llm::scripted::Scripted;
use crate::llm::{Backend, Timeouts};
use crate::session::{Outbox, WeakOutbox};
use crate::sites::auto_login::AutoLogin;
use crate::sites::overrides::{self, Overrides};
use crate::store::{NewRun, Store, StoreSlot};
use crate::vault::Vault;
use itinero_shared::messages::ModelList;
use itinero_shared::records::{BackendChoice, Settings};

/// The model a task uses, resolved when it starts.
pub struct ModelChoice {
    pub backend: Arc<dyn Backend>,
    pub model: String,
}

/// Ollama at `OLLAMA_HOST` or its default address.
fn ollama_backend() -> Result<Ollama, String> {
    Ollama::new(&ollama::default_url(), Timeouts::default()).map_err(|e| e.to_string())
}

/// The OpenAI-compatible server at `url`, else `ITINERO_OPENAI_URL`, with `ITINERO_OPENAI_KEY`
/// (the key is never stored with the settings).
fn openai_backend(url: Option<&str>) -> Result<OpenAi, String> {
    let url = match url {
        Some(url) => url.to_owned(),
        None => std::env::var("ITINERO_OPENAI_URL").map_err(|_| {
            "set the OpenAI-compatible server's URL in the settings (or ITINERO_OPENAI_URL), e.g. http://127.0.0.1:8080/v1"
        })?,
    };
    let key = std::env::var("ITINERO_OPENAI_KEY").ok();
    OpenAi::new(&url, key, Timeouts::default()).map_err(|e| e.to_string())
}

/// Picks the backend and model for a task from its options and the environment:
/// `ITINERO_BACKEND` (`ollama`, the default; `openai`, with `ITINERO_OPENAI_URL` and
/// `ITINERO_OPENAI_KEY`; `wgpu`, the built-in engine, with a GGUF path, a cache model or an Ollama
/// name as the model; or `scripted:PATH`, for tests) and `ITINERO_MODEL`. With Ollama and no
/// model named, the first model Ollama lists is used.
pub async fn choose_model(
    backend: Option<&str>,
    model: Option<&str>,
    openai_url: Option<&str>,
) -> Result<ModelChoice, String> {
    let env_backend = std::env::var("ITINERO_BACKEND").ok();
    let backend = backend.or(env_backend.as_deref()).unwrap_or("ollama");
    let env_model = std::env::var("ITINERO_MODEL").ok();
    let model = model.or(env_model.as_deref()).map(str::to_owned);
    if let Some(path) = backend.strip_prefix("scripted:") {
        let script = Scripted::from_file(std::path::Path::new(path)).map_err(|e| e.to_string())?;
        return Ok(ModelChoice {
            backend: Arc::new(script),
            model: model.unwrap_or_else(|| "scripted".into()),
        });
    }
    match backend {
        "ollama" => {
            let ollama = ollama_backend()?;
            let model = match model {
                Some(m) => m,
                None => ollama
                    .models()
                    .await
                    .map_err(|e| e.to_string())?
                    .into_iter()
                    .next()
                    .map(|m| m.name)
                    .ok_or("Ollama has no models yet. Pull one, e.g. `ollama pull qwen2.5:3b`")?,
            };
            Ok(ModelChoice {
                backend: Arc::new(ollama),
                model,
            })
        }
        "openai" => {
            let api = openai_backend(openai_url)?;
            let model = model.ok_or("name the model with ITINERO_MODEL")?;
            Ok(ModelChoice {
                backend: Arc::new(api),
                model,
            })
        }
        "wgpu" => {
            // The built-in engine: the model in process, shared by every task of the host.
            let model = model.unwrap_or_else(|| crate::llm::wgpu::DEFAULT_MODEL.to_owned());
            Ok(ModelChoice {
                backend: crate::llm::wgpu::shared(&model),
                model,
            })
        }
        other => Err(format!(
            "unknown backend {other:?}: use ollama, openai, wgpu or scripted:PATH"
        )),
    }
}

/// The models `backend` offers (the settings' backend when `None`; Ollama for `auto`), by name,
/// with the backend's own name; or what is wrong, worded for the user (how to start Ollama…).
pub async fn list_models(
    backend: Option<BackendChoice>,
    openai_url: Option<&str>,
    settings: &Settings,
) -> Result<ModelList, String> {
    let backend = backend.unwrap_or(settings.backend);
    let api: Box<dyn Backend> = match backend {
        BackendChoice::Auto | BackendChoice::Ollama => Box::new(ollama_backend()?),
        BackendChoice::OpenAi => Box::new(openai_backend(
            openai_url.or(settings.openai_url.as_deref()),
        )?),
        BackendChoice::Wgpu => {
            let models = tokio::task::spawn_blocking(crate::llm::wgpu::runnable_models)
                .await
                .map_err(|e| e.to_string())?;
            return Ok(ModelList {
                backend: "wgpu".to_owned(),
                models: models.into_iter().map(|m| m.name).collect(),
            });
        }
    };
    let models = api.models().await.map_err(|e| e.to_string())?;
    Ok(ModelList {
        backend: api.name().to_owned(),
        models: models.into_iter().map(|m| m.name).collect(),
    })
}

/// Replies that cannot be used are asked again this many times in all.
const ATTEMPTS: u32 = 3;
/// Recovery attempts per failed action before the model hears of it.
const RECOVERY_ATTEMPTS: u32 = 2;
/// Voters when voting is on and the task does not say how many.
const DEFAULT_VOTERS: u32 = 3;
/// Sampling temperature of the extra voters: different enough to disagree when unsure.
const VOTER_TEMPERATURE: f32 = 0.7;

/// The strategy chain for a task: recovery first (no model call when the page only moved the
/// target), then the model with retries, voted on when the options ask for it; and the planner.
pub fn deciders(
    choice: &ModelChoice,
    options: &TaskOptions,
    cache: Option<Arc<dyn ActionCache>>,
) -> Deciders {
    let llm = |model: &str, temperature: Option<f32>, seed: Option<i64>| -> Box<dyn Strategy> {
        let mut llm = Llm::new(choice.backend.clone(), model);
        llm.temperature = temperature;
        llm.seed = seed;
        Box::new(Retry {
            inner: llm,
            attempts: ATTEMPTS,
        })
    };
    let model: Box<dyn Strategy> = match options.vote.unwrap_or_default() {
        VoteMode::Off => llm(&choice.model, Some(0.0), None),
        mode => {
            let voters = if options.vote_models.is_empty() {
                let n = options.vote_samples.unwrap_or(DEFAULT_VOTERS).clamp(2, 9);
                (0..n)
                    .map(|i| {
                        if i == 0 {
                            llm(&choice.model, Some(0.0), None)
                        } else {
                            llm(&choice.model, Some(VOTER_TEMPERATURE), Some(i64::from(i)))
                        }
                    })
                    .collect()
            } else {
                // Several models: each answers greedily; they differ by being different models.
                std::iter::once(choice.model.as_str())
                    .chain(options.vote_models.iter().map(String::as_str).take(8))
                    .map(|m| llm(m, Some(0.0), None))
                    .collect()
            };
            Box::new(Vote {
                voters,
                when: if mode == VoteMode::Always {
                    vote::When::Always
                } else {
                    vote::When::Unsure
                },
            })
        }
    };
    let recovery = Recovery {
        inner: model,
        attempts: RECOVERY_ATTEMPTS,
    };
    Deciders {
        strategy: match cache {
            Some(cache) => Box::new(Cached {
                inner: recovery,
                cache,
            }),
            None => Box::new(recovery),
        },
        planner: Some(Box::new(LlmPlanner {
            backend: choice.backend.clone(),
            model: choice.model.clone(),
            family: prompt::family_of(&choice.model),
        })),
        sign_in: None,
    }
}

struct Running {
    stop: Arc<AtomicBool>,
    stopped: Arc<Notify>,
    questions: HashMap<u64, oneshot::Sender<String>>,
    /// Set once the task is spawned; ends it at once when the session ends.
    abort: Option<tokio::task::AbortHandle>,
}

#[derive(Default)]
struct State {
    next_task: u64,
    next_question: u64,
    running: HashMap<u64, Running>,
}

/// The session's tasks; cheap to clone.
#[derive(Clone)]
pub struct Tasks {
    state: Arc<Mutex<State>>,
    link: BrowserLink,
    /// Weak: the control socket holds the session's tasks too, and must not keep the browser's
    /// writer (and so the session) alive once the browser has gone.
    out: WeakOutbox,
    store: StoreSlot,
    vault: Option<Vault>,
}

impl Tasks {
    pub fn new(link: BrowserLink, out: Outbox, store: StoreSlot) -> Self {
        // The vault lives in the store; its key, in the OS secret store of the store's data
        // directory (or a passphrase).
        let vault = store.get().ok().map(|s| {
            let keys: Box<dyn crate::vault::key_store::KeyStore> =
                match s.path().and_then(|p| p.parent()) {
                    Some(dir) => crate::vault::key_store::for_data_dir(dir),
                    None => Box::new(crate::vault::key_store::NoKeyring(
                        "a store in memory has no secret store".into(),
                    )),
                };
            Vault::new(s.clone(), keys)
        });
        Self {
            state: Arc::default(),
            link,
            out: out.downgrade(),
            store,
            vault,
        }
    }

    /// The session's vault (`None` without a store).
    pub fn vault(&self) -> Option<&Vault> {
        self.vault.as_ref()
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().expect("tasks lock")
    }

    /// The store the tasks record their runs in (and read skills from).
    pub fn store(&self) -> &StoreSlot {
        &self.store
    }

    /// Starts a task for the `StartTask` with envelope id `request_id`; returns its task id.
    pub fn start(&self, request_id: u64, start: StartTask) -> Option<u64> {
        // Gone only once the session ended, when nobody is left to start a task for.
        let out = self.out.upgrade()?;
        Some(self.start_reporting_to(out, request_id, start))
    }

    /// Like [`Tasks::start`], with the task's events, questions and result sent to `out`
    /// rather than to the browser: a task started from the control socket reports to its client.
    pub fn start_reporting_to(&self, out: Outbox, request_id: u64, start: StartTask) -> u64 {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::new(Notify::new());
        let task_id = {
            let mut s = self.state();
            s.next_task += 1;
            let id = s.next_task;
            s.running.insert(
                id,
                Running {
                    stop: stop.clone(),
                    stopped: stopped.clone(),
                    questions: HashMap::new(),
                    abort: None,
                },
            );
            id
        };
        let this = self.clone();
        let handle = tokio::spawn(async move {
            let panel = SessionPanel {
                tasks: this.clone(),
                out: out.clone(),
                request_id,
                task_id,
                stopped,
            };
            // The task's own options first, then the user's settings.
            let store = this.store.get().ok().cloned();
            let settings = match &store {
                Some(s) => s.call(|s| s.settings()).await.unwrap_or_else(|e| {
                    tracing::warn!(error = %e, "settings unreadable; using the defaults");
                    Settings::default()
                }),
                None => Settings::default(),
            };
            let mut options = start.options.clone();
            options.plan = options.plan.or(Some(settings.plan));
            options.vote = options.vote.or(Some(settings.vote));
            options.vote_samples = options.vote_samples.or(Some(settings.vote_samples));
            if options.vote_models.is_empty() {
                options.vote_models = settings.vote_models.clone();
            }
            let options = &options;
            let task = Task {
                goal: start.goal.clone(),
                tab: start.tab_id,
                max_steps: options.max_steps.unwrap_or(settings.max_steps).max(1),
                plan: options.plan.unwrap_or_default(),
                approval: settings.approval,
            };
            tracing::info!(task_id, tab = start.tab_id, "task started");
            let chosen = choose_model(
                options
                    .backend
                    .as_deref()
                    .or(settings.backend.task_backend()),
                options.model.as_deref().or(settings.model.as_deref()),
                settings.openai_url.as_deref(),
            )
            .await;
            let skill =
                skill_run::choose(store.as_ref(), options.skill.as_ref(), &start.goal, &panel)
                    .await;
            let overrides = site_overrides(store.as_ref(), &panel).await;
            let memory = Arc::new(StoreMemory::new(
                store,
                NewRun {
                    goal: start.goal.clone(),
                    start_url: String::new(),
                    tab_id: Some(start.tab_id),
                    backend: chosen
                        .as_ref()
                        .map(|c| c.backend.name().to_owned())
                        .unwrap_or_default(),
                    model: chosen.as_ref().map(|c| c.model.clone()).unwrap_or_default(),
                },
            ));
            let browser = SessionBrowser {
                link: this.link.clone(),
                task_id,
            };
            // How the task decides, or why it cannot run.
            let prepared: Result<Deciders, String> = match (chosen, skill) {
                (_, Err(why)) => Err(why),
                (Err(e), Ok(None)) => Err(format!("no model to run the task: {e}")),
                (choice, Ok(skill)) => {
                    let mut deciders = match &choice {
                        Ok(choice) => deciders(choice, options, Some(memory.clone())),
                        // A skill replays without a model; one is needed only if it diverges.
                        Err(e) => Deciders {
                            strategy: Box::new(NoModel(format!("no model: {e}"))),
                            planner: None,
                            sign_in: None,
                        },
                    };
                    match skill {
                        Some(chosen) => match chosen.script() {
                            Ok(script) => {
                                let diverged = chosen.diverged.clone();
                                memory.replays(chosen);
                                Ok(Deciders {
                                    strategy: Box::new(Replay::new(
                                        deciders.strategy,
                                        script,
                                        diverged,
                                    )),
                                    planner: None,
                                    sign_in: None,
                                })
                            }
                            Err(e) => Err(format!("cannot run the skill: {e}")),
                        },
                        None => {
                            // A goal the cache knows needs no plan: its steps are remembered.
                            if memory.knows_goal().await {
                                deciders.planner = None;
                            }
                            Ok(deciders)
                        }
                    }
                }
            };
            let mut finished = match prepared {
                Ok(mut deciders) => {
                    if let Some(vault) = this.vault.clone() {
                        deciders.sign_in = Some(Box::new(AutoLogin::new(
                            vault,
                            settings.sign_in_names_user,
                            overrides,
                        )));
                    }
                    run::run(&task, &deciders, &browser, &panel, memory.as_ref(), &stop).await
                }
                Err(why) => run::Finished {
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
            this.state().running.remove(&task_id);
            out.send(
                request_id,
                ToBrowser::TaskFinished(TaskFinished {
                    task_id,
                    status: finished.status,
                    answer: finished.answer,
                    run_id: memory.run_id().await,
                }),
            )
            .await;
        });
        if let Some(running) = self.state().running.get_mut(&task_id) {
            running.abort = Some(handle.abort_handle());
        }
        task_id
    }

    /// Ends every task at once: the browser is gone, so nobody is left to report to, and a task
    /// waiting on a model or a user must not keep the host alive.
    pub fn abort_all(&self) {
        let running: Vec<Running> = self.state().running.drain().map(|(_, r)| r).collect();
        for r in running {
            r.stop.store(true, Ordering::SeqCst);
            if let Some(abort) = r.abort {
                abort.abort();
            }
        }
    }

    /// Asks a running task to stop (between steps, or while it waits on the user).
    pub fn stop(&self, task_id: u64) -> Result<(), String> {
        let s = self.state();
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
        let mut s = self.state();
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
        let _ = tx.send(reply.reply);
        Ok(())
    }

    /// Tasks running now.
    pub fn running(&self) -> usize {
        self.state().running.len()
    }
}

struct SessionBrowser {
    link: BrowserLink,
    task_id: u64,
}

/// What the user should read when the link fails: a closed tab is said plainly (the link's
/// wording is for the CLI, which can list the tabs).
fn task_error(tab: i64, e: LinkError) -> String {
    match e {
        LinkError::Browser {
            code: ErrorCode::NoSuchTab | ErrorCode::TabClosed,
            ..
        } => format!("the tab the task works in ({tab}) was closed"),
        other => other.to_string(),
    }
}

#[async_trait]
impl Browser for SessionBrowser {
    async fn observe(&self, tab: i64) -> Result<Observation, String> {
        self.link
            .observe(self.task_id, tab)
            .await
            .map(|r| r.value.observation)
            .map_err(|e| task_error(tab, e))
    }

    async fn perform(
        &self,
        tab: i64,
        frame: i64,
        action: &Action,
    ) -> Result<(Outcome, u64), String> {
        self.link
            .perform(self.task_id, tab, frame, action.clone(), None)
            .await
            .map(|r| (r.value.outcome, r.value.elapsed_ms))
            .map_err(|e| task_error(tab, e))
    }

    async fn perform_secret(
        &self,
        tab: i64,
        frame: i64,
        action: &Action,
        field: &SecretField,
    ) -> Result<(Outcome, u64), String> {
        self.link
            .perform(
                self.task_id,
                tab,
                frame,
                action.clone(),
                Some(field.clone()),
            )
            .await
            .map(|r| (r.value.outcome, r.value.elapsed_ms))
            .map_err(|e| task_error(tab, e))
    }
}

struct SessionPanel {
    tasks: Tasks,
    out: Outbox,
    request_id: u64,
    task_id: u64,
    stopped: Arc<Notify>,
}

#[async_trait]
impl Panel for SessionPanel {
    async fn event(&self, step: u32, kind: TaskEventKind) {
        self.out
            .send(
                self.request_id,
                ToBrowser::TaskEvent(TaskEvent {
                    task_id: self.task_id,
                    step,
                    kind,
                }),
            )
            .await;
    }

    async fn ask(&self, question: &str, kind: Ask) -> Option<String> {
        let (tx, rx) = oneshot::channel();
        let question_id = {
            let mut s = self.tasks.state();
            s.next_question += 1;
            let id = s.next_question;
            let running = s.running.get_mut(&self.task_id)?;
            if running.stop.load(Ordering::SeqCst) {
                return None;
            }
            running.questions.insert(id, tx);
            id
        };
        // Registered before the question goes out, so a Stop that races it is not missed.
        let stopped = self.stopped.notified();
        self.out
            .send(
                self.request_id,
                ToBrowser::AskUser(AskUser {
                    task_id: self.task_id,
                    question_id,
                    question: question.to_owned(),
                    kind: match kind {
                        Ask::Question => "question",
                        Ask::Approval { .. } => "approval",
                    }
                    .into(),
                    can_always: matches!(kind, Ask::Approval { can_always: true }),
                }),
            )
            .await;
        tokio::select! {
            answer = rx => answer.ok(),
            () = stopped => None,
        }
    }
}

/// The per-site sign-in overrides in the store's directory; a file that cannot be used is
/// reported in the panel, and the task goes on without it.
async fn site_overrides(store: Option<&Store>, panel: &SessionPanel) -> Overrides {
    let Some(dir) = store.and_then(|s| s.path()).and_then(|p| p.parent()) else {
        return Overrides::default();
    };
    let path = dir.join(overrides::FILE_NAME);
    match tokio::task::spawn_blocking(move || Overrides::load(&path)).await {
        Ok(Ok(o)) => o,
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "sign-in overrides unusable");
            let text = format!("{e}; signing in without the overrides");
            panel.event(0, TaskEventKind::Note { text }).await;
            Overrides::default()
        }
        Err(e) => {
            tracing::warn!(error = %e, "reading the sign-in overrides failed");
            Overrides::default()
        }
    }
}

/// Stands in for the model when none could be reached: a skill that needs it stops, saying why.
struct NoModel(String);

#[async_trait]
impl Strategy for NoModel {
    async fn decide(&self, _: &Step<'_>) -> Result<Decision, DecideError> {
        Err(DecideError::Stuck(self.0.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::test_support::{element, page_of, step};
    use crate::llm::scripted::Step as ScriptStep;

    #[tokio::test]
    async fn several_models_vote_when_the_options_name_them() {
        let script = Arc::new(Scripted::new([1, 1, 0].map(|i| {
            ScriptStep::reply(format!(r#"{{"action": "click", "index": {i}}}"#))
        })));
        let choice = ModelChoice {
            backend: script.clone(),
            model: "qwen2.5:3b".into(),
        };
        let options = TaskOptions {
            vote: Some(VoteMode::Always),
            vote_models: vec!["llama3.2:3b".into(), "gemma3:4b".into()],
            ..Default::default()
        };
        let deciders = deciders(&choice, &options, None);
        let obs = page_of(
            "",
            "",
            vec![
                element(0, "a", None, None, "Hats"),
                element(1, "a", None, None, "Socks"),
            ],
        );
        let d = deciders
            .strategy
            .decide(&step("Show me socks", &obs))
            .await
            .unwrap();
        assert_eq!(d.action.target().map(|t| t.index), Some(1));
        assert_eq!(d.note.as_deref(), Some("2 of 3 voters chose this"));
        let models: Vec<String> = script.requests().into_iter().map(|r| r.model).collect();
        assert_eq!(models, ["qwen2.5:3b", "llama3.2:3b", "gemma3:4b"]);
    }
}
