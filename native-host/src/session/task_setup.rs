//! Everything a task needs before its first step: its options completed from the user's
//! settings, its model (with the API key the vault keeps for its server), the skill it replays
//! (if any), its record in the store, and the deciders it runs with (the strategy chain, the
//! planner, auto-login), or why it cannot run.

use std::sync::Arc;

use itinero_shared::messages::{StartTask, TaskEventKind, TaskOptions};
use itinero_shared::records::Settings;

use super::api_key;
use super::chain::{deciders, without_model};
use super::panel::SessionPanel;
use crate::agent::given::Given;
use crate::agent::memory::StoreMemory;
use crate::agent::replay::Replay;
use crate::agent::run::{Deciders, Panel, Task};
use crate::agent::skill_run::{self, Chosen};
use crate::llm::choose::{choose_model, openai_server, ModelChoice};
use crate::sign_in::auto_login::AutoLogin;
use crate::sign_in::overrides::{self, Overrides};
use crate::store::{NewRun, Store};
use crate::vault::Vault;

/// A task ready to run: what it is, how it decides (or why it cannot), and its memory.
pub struct Prepared {
    pub task: Task,
    pub deciders: Result<Deciders, String>,
    pub memory: Arc<StoreMemory>,
}

/// The user's settings, or the defaults when the store is missing or unreadable.
pub async fn settings(store: Option<&Store>) -> Settings {
    match store {
        Some(s) => s.call(|s| s.settings()).await.unwrap_or_else(|e| {
            tracing::warn!(error = %e, "settings unreadable; using the defaults");
            Settings::default()
        }),
        None => Settings::default(),
    }
}

/// The task's own options first, then the user's settings.
fn completed(options: &TaskOptions, settings: &Settings) -> TaskOptions {
    let mut options = options.clone();
    options.plan = options.plan.or(Some(settings.plan));
    options.vote = options.vote.or(Some(settings.vote));
    options.vote_samples = options.vote_samples.or(Some(settings.vote_samples));
    if options.vote_models.is_empty() {
        options.vote_models = settings.vote_models.clone();
    }
    options
}

/// Why a model named by the panel (a task's options or the settings, both of which come over
/// the wire) is refused: it names a file. The built-in engine would open and parse whatever file
/// a page or another program got named there; a GGUF file is named with `ITINERO_MODEL` or on
/// the command line, by the user.
fn file_refused(model: &str) -> Option<String> {
    let m = model.trim();
    let path_like = std::path::Path::new(m).is_absolute()
        || m.starts_with("./")
        || m.starts_with("../")
        || m.starts_with('~')
        || m.contains('\\')
        || m.to_ascii_lowercase().ends_with(".gguf");
    path_like.then(|| {
        format!(
            "the model {m:?} names a file: the panel names models by their id (as the settings \
             list them); a GGUF file is named with ITINERO_MODEL"
        )
    })
}

/// Prepares the task `start` asks for.
pub async fn prepare(
    start: &StartTask,
    store: Option<Store>,
    vault: Option<Vault>,
    panel: &SessionPanel,
) -> Prepared {
    let settings = settings(store.as_ref()).await;
    let options = completed(&start.options, &settings);
    let mut task = Task {
        goal: start.goal.clone(),
        tab: start.tab_id,
        max_steps: options.max_steps.unwrap_or(settings.max_steps).max(1),
        plan: options.plan.unwrap_or_default(),
        approval: settings.approval,
        model: None,
        pictures: settings.keep_pictures,
    };
    if !options.steps.is_empty() {
        return given(start, store, vault, settings, &options, task, panel).await;
    }
    let wire_model = options.model.as_deref().or(settings.model.as_deref());
    let refused = wire_model
        .into_iter()
        .chain(options.vote_models.iter().map(String::as_str))
        .find_map(file_refused);
    let chosen = match refused {
        Some(why) => Err(why),
        None => {
            let backend = options
                .backend
                .as_deref()
                .or(settings.backend.task_backend());
            let openai_url = settings.openai_url.as_deref();
            let key = match openai_server(backend, openai_url) {
                Some(server) => api_key::for_task(vault.as_ref(), &server, panel).await,
                None => Ok(None),
            };
            match key {
                Ok(key) => {
                    choose_model(backend, wire_model, openai_url, key, settings.device).await
                }
                Err(why) => Err(why),
            }
        }
    };
    task.model = chosen
        .as_ref()
        .ok()
        .map(|c| format!("{}, {}", c.model, backend_label(c.backend.name())));
    let skill = skill_run::choose(store.as_ref(), options.skill.as_ref(), &start.goal, panel).await;
    let overrides = site_overrides(store.as_ref(), panel).await;
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
    let deciders = match (chosen, skill) {
        (_, Err(why)) => Err(why),
        (choice, Ok(skill)) => decide_with(choice, skill, &options, &memory).await,
    }
    .map(|mut d| {
        if let Some(vault) = vault {
            d.sign_in = Some(Box::new(AutoLogin::new(
                vault,
                settings.sign_in_names_user,
                overrides,
            )));
        }
        d
    });
    Prepared {
        task,
        deciders,
        memory,
    }
}

/// A task of steps a program named: no model, no skill, no plan and nothing learnt for the
/// cache (its strategy is not one the cache keeps); the guards, approvals and auto-login as
/// for any task.
async fn given(
    start: &StartTask,
    store: Option<Store>,
    vault: Option<Vault>,
    settings: Settings,
    options: &TaskOptions,
    mut task: Task,
    panel: &SessionPanel,
) -> Prepared {
    // Each step, the end, and room for auto-login's own steps on a sign-in page.
    task.max_steps = u32::try_from(options.steps.len()).unwrap_or(u32::MAX / 2) * 2 + 4;
    let overrides = site_overrides(store.as_ref(), panel).await;
    let memory = Arc::new(StoreMemory::new(
        store,
        NewRun {
            goal: start.goal.clone(),
            start_url: String::new(),
            tab_id: Some(start.tab_id),
            backend: String::new(),
            model: String::new(),
        },
    ));
    let sign_in = vault.map(|vault| {
        Box::new(AutoLogin::new(
            vault,
            settings.sign_in_names_user,
            overrides,
        )) as Box<dyn crate::agent::run::SignIn>
    });
    Prepared {
        task,
        deciders: Ok(Deciders {
            strategy: Box::new(Given::new(options.steps.clone())),
            planner: None,
            sign_in,
        }),
        memory,
    }
}

/// The deciders for a task with the model `choice` (or why there is none) and the skill it
/// replays, if any.
async fn decide_with(
    choice: Result<ModelChoice, String>,
    skill: Option<Chosen>,
    options: &TaskOptions,
    memory: &Arc<StoreMemory>,
) -> Result<Deciders, String> {
    let mut chain = match &choice {
        Ok(choice) => deciders(choice, options, Some(memory.clone())),
        // The grounding and a skill's replay need no model; one is needed only for a step
        // neither can decide.
        Err(e) => without_model(
            format!("no model to decide this step: {e}"),
            Some(memory.clone()),
        ),
    };
    let Some(chosen) = skill else {
        // A goal the cache knows needs no plan: its steps are remembered.
        if memory.knows_goal().await {
            chain.planner = None;
        }
        return Ok(chain);
    };
    let script = chosen
        .script()
        .map_err(|e| format!("cannot run the skill: {e}"))?;
    let diverged = chosen.diverged.clone();
    memory.replays(chosen);
    Ok(Deciders {
        strategy: Box::new(Replay::new(chain.strategy, script, diverged)),
        planner: None,
        sign_in: None,
    })
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

/// A backend as the panel names it.
fn backend_label(name: &str) -> &str {
    match name {
        "wgpu" => "built-in engine",
        "ollama" => "Ollama",
        "openai" => "OpenAI-compatible server",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::file_refused;

    #[test]
    fn models_named_from_the_panel_are_ids_not_files() {
        for file in [
            "/home/u/models/x.gguf",
            "./x",
            "../../etc/passwd",
            "~/m",
            "C:\\models\\x",
            "smollm2.GGUF",
        ] {
            assert!(file_refused(file).is_some(), "{file}");
        }
        for id in [
            "smollm2-135m-instruct-q4_1",
            "qwen2.5:3b",
            "hf.co/bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M",
        ] {
            assert_eq!(file_refused(id), None, "{id}");
        }
    }
}
