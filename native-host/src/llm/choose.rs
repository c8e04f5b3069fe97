//! Which backend and model a task uses, from its options, the user's settings and the
//! environment; and the models a backend offers, for the panel's model list. Errors are worded
//! for the user (how to start Ollama, which variable names the server).

use std::sync::Arc;

use itinero_shared::messages::ModelList;
use itinero_shared::records::{BackendChoice, Settings};

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
        return scripted(path, model);
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
            let model = model.unwrap_or_else(|| super::wgpu::DEFAULT_MODEL.to_owned());
            Ok(ModelChoice {
                backend: super::wgpu::shared(&model),
                model,
            })
        }
        other => Err(format!(
            "unknown backend {other:?}: use ollama, openai, wgpu or scripted:PATH"
        )),
    }
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
            let models = tokio::task::spawn_blocking(super::wgpu::runnable_models)
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
