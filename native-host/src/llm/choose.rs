//! Which backend and model a task uses, from its options, the user's settings and the
//! environment; and the models a backend offers, for the panel's model list. Errors are worded
//! for the user (how to start Ollama, which variable names the server).

use std::sync::Arc;

use itinero_shared::messages::ModelList;
use itinero_shared::records::{BackendChoice, EngineDevice, Settings};

use super::ollama::{self, Ollama};
use super::openai::OpenAi;
use super::{Backend, Timeouts};

/// The model a task uses, resolved when it starts.
pub struct ModelChoice {
    pub backend: Arc<dyn Backend>,
    pub model: String,
}

/// Ollama at `OLLAMA_HOST` or its default address.
fn ollama_backend() -> Result<Ollama, String> {
    Ollama::new(&ollama::default_url(), Timeouts::default()).map_err(|e| e.to_string())
}

/// The OpenAI-compatible server's address: `url` (the settings'), else `ITINERO_OPENAI_URL`.
pub fn openai_url(url: Option<&str>) -> Option<String> {
    url.map(str::to_owned)
        .or_else(|| std::env::var("ITINERO_OPENAI_URL").ok())
}

/// The backend's word: `backend`, else `ITINERO_BACKEND`, else `auto`.
fn backend_word(backend: Option<&str>) -> String {
    backend
        .map(str::to_owned)
        .or_else(|| std::env::var("ITINERO_BACKEND").ok())
        .unwrap_or_else(|| "auto".to_owned())
}

/// The address of the OpenAI-compatible server a task with these choices talks to, or `None`
/// when it uses another backend: whoever calls [`choose_model`] looks up that server's key.
pub fn openai_server(backend: Option<&str>, url: Option<&str>) -> Option<String> {
    (backend_word(backend) == "openai")
        .then(|| openai_url(url))
        .flatten()
}

/// The OpenAI-compatible server at `url`, else `ITINERO_OPENAI_URL`, with `key` (the caller's:
/// the one the vault keeps for that server) else `ITINERO_OPENAI_KEY`. The key is never stored
/// with the settings.
fn openai_backend(url: Option<&str>, key: Option<String>) -> Result<OpenAi, String> {
    let url = openai_url(url).ok_or(
        "set the OpenAI-compatible server's URL in the settings (or ITINERO_OPENAI_URL), e.g. http://127.0.0.1:8080/v1",
    )?;
    let key = key.or_else(|| std::env::var("ITINERO_OPENAI_KEY").ok());
    OpenAi::new(&url, key, Timeouts::default()).map_err(|e| e.to_string())
}

/// Picks the backend and model for a task from its options and the environment:
/// `ITINERO_BACKEND` (`auto`, the default: Ollama when it answers and has a model, else the
/// built-in engine; `ollama`; `openai`, at `openai_url` or `ITINERO_OPENAI_URL`, with
/// `openai_key` (the vault's key for that server, see [`openai_server`]) or `ITINERO_OPENAI_KEY`;
/// `wgpu`, the built-in engine, with a GGUF path, a cache model or an Ollama name as the model;
/// `none`, the grounding alone; or `scripted:PATH`, for tests) and `ITINERO_MODEL`. With Ollama and no model named, the first
/// model Ollama lists is used. The built-in engine runs on `device` (`ITINERO_DEVICE` where that
/// is `Auto`).
pub async fn choose_model(
    backend: Option<&str>,
    model: Option<&str>,
    openai_url: Option<&str>,
    openai_key: Option<String>,
    device: EngineDevice,
) -> Result<ModelChoice, String> {
    let backend = backend_word(backend);
    let backend = backend.as_str();
    let env_model = std::env::var("ITINERO_MODEL").ok();
    let model = model.or(env_model.as_deref()).map(str::to_owned);
    if let Some(path) = backend.strip_prefix("scripted:") {
        return scripted(path, model);
    }
    match backend {
        "auto" => {
            // A user who has not chosen gets Ollama when it runs (their own models), and the
            // built-in engine's small default model when it does not: a task never fails for
            // want of a server.
            let why = match ollama_backend() {
                Ok(ollama) => match ollama.models().await {
                    Ok(list) => match model
                        .clone()
                        .or_else(|| list.first().map(|m| m.name.clone()))
                    {
                        Some(model) => {
                            return Ok(ModelChoice {
                                backend: Arc::new(ollama),
                                model,
                            })
                        }
                        None => "Ollama has no models".to_owned(),
                    },
                    Err(e) => e.to_string(),
                },
                Err(e) => e,
            };
            let choice = builtin(model, device).map_err(|e| format!("{why}; {e}"))?;
            tracing::info!("{why}: the task runs on the built-in engine");
            Ok(choice)
        }
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
            let api = openai_backend(openai_url, openai_key)?;
            let model = model.ok_or("name the model with ITINERO_MODEL")?;
            Ok(ModelChoice {
                backend: Arc::new(api),
                model,
            })
        }
        "wgpu" => builtin(model, device),
        // The agent's own strategies only: what it does with no model at all.
        "none" => Err("no model is used (backend `none`)".into()),
        other => Err(format!(
            "unknown backend {other:?}: use auto, ollama, openai, wgpu, none or scripted:PATH"
        )),
    }
}

/// The built-in engine: the model in process, shared by every task of the host.
#[cfg(feature = "engine")]
fn builtin(model: Option<String>, device: EngineDevice) -> Result<ModelChoice, String> {
    let model = model.unwrap_or_else(|| super::builtin::DEFAULT_MODEL.to_owned());
    Ok(ModelChoice {
        backend: super::builtin::shared(&model, device),
        model,
    })
}

#[cfg(not(feature = "engine"))]
fn builtin(_: Option<String>, _: EngineDevice) -> Result<ModelChoice, String> {
    Err(super::NO_ENGINE.into())
}

/// The models the built-in engine can run now.
#[cfg(feature = "engine")]
async fn builtin_models() -> Result<ModelList, String> {
    let models = tokio::task::spawn_blocking(super::builtin::runnable_models)
        .await
        .map_err(|e| e.to_string())?;
    Ok(ModelList {
        backend: "wgpu".to_owned(),
        models: models.into_iter().map(|m| m.name).collect(),
    })
}

#[cfg(not(feature = "engine"))]
async fn builtin_models() -> Result<ModelList, String> {
    Err(super::NO_ENGINE.into())
}

/// The scripted backend reading `path`, in a build for tests.
#[cfg(feature = "scripted")]
fn scripted(path: &str, model: Option<String>) -> Result<ModelChoice, String> {
    let script = super::scripted::Scripted::from_file(std::path::Path::new(path))
        .map_err(|e| e.to_string())?;
    Ok(ModelChoice {
        backend: Arc::new(script),
        model: model.unwrap_or_else(|| "scripted".into()),
    })
}

/// A build for users has no scripted backend: it would let whoever starts the host choose the
/// model's replies.
#[cfg(not(feature = "scripted"))]
fn scripted(_: &str, _: Option<String>) -> Result<ModelChoice, String> {
    Err("this build of itinero-host has no scripted backend (it is for tests: build with --features scripted)".into())
}

/// The models `backend` offers (the settings' backend when `None`; for `auto`, Ollama's when it
/// answers with some, else the built-in engine's, as a task would choose), by name, with the
/// backend's own name; or what is wrong, worded for the user (how to start Ollama…). An
/// OpenAI-compatible server is asked with `openai_key`, else `ITINERO_OPENAI_KEY`.
pub async fn list_models(
    backend: Option<BackendChoice>,
    openai_url: Option<&str>,
    openai_key: Option<String>,
    settings: &Settings,
) -> Result<ModelList, String> {
    let backend = backend.unwrap_or(settings.backend);
    let api: Box<dyn Backend> = match backend {
        BackendChoice::Auto => {
            if let Ok(ollama) = ollama_backend() {
                match ollama.models().await {
                    Ok(models) if !models.is_empty() => {
                        return Ok(ModelList {
                            backend: ollama.name().to_owned(),
                            models: models.into_iter().map(|m| m.name).collect(),
                        })
                    }
                    _ => {}
                }
            }
            return builtin_models().await;
        }
        BackendChoice::Ollama => Box::new(ollama_backend()?),
        BackendChoice::OpenAi => Box::new(openai_backend(
            openai_url.or(settings.openai_url.as_deref()),
            openai_key,
        )?),
        BackendChoice::Wgpu => return builtin_models().await,
    };
    let models = api.models().await.map_err(|e| e.to_string())?;
    Ok(ModelList {
        backend: api.name().to_owned(),
        models: models.into_iter().map(|m| m.name).collect(),
    })
}
