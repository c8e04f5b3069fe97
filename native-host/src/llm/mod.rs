//! Model backends: one trait, so the agent does not care where its model runs.
//!
//! [`ollama`] talks to a local Ollama server, [`openai`] to anything that speaks the
//! OpenAI chat-completions API (LM Studio, llama.cpp's server, vLLM, hosted APIs), and
//! [`scripted`] replays replies from a script for tests (only in builds with the `scripted`
//! feature, which the tests and benchmarks turn on: whoever starts a host that has it can choose
//! the model's replies). [`builtin`] runs the model in the host with the built-in engine
//! (`native-host/engine`), on the GPU or the CPU: the backend when nothing else is set up. It
//! and [`pull`], which fetches its models, are in builds with the `engine` feature (the
//! default); without it, choosing the built-in engine fails with [`NO_ENGINE`].
//!
//! A request is cancelled by dropping its future: the HTTP connection closes with it.

#[cfg(feature = "engine")]
pub mod builtin;
pub mod choose;
pub mod defuse;
pub mod http;
pub mod lines;
pub mod ollama;
pub mod openai;
#[cfg(feature = "engine")]
pub mod pull;
#[cfg(any(test, feature = "scripted"))]
pub mod scripted;

use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

/// Why the built-in engine, or a command that needs it, is refused in a build without it.
pub const NO_ENGINE: &str =
    "this host was built without the built-in engine (cargo feature `engine`)";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
}

impl Message {
    pub fn system(content: impl Into<String>) -> Self {
        Self {
            role: Role::System,
            content: content.into(),
        }
    }

    pub fn user(content: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: content.into(),
        }
    }

    pub fn assistant(content: impl Into<String>) -> Self {
        Self {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

/// One chat completion to ask for.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    pub model: String,
    pub messages: Vec<Message>,
    /// A JSON schema the reply must follow (structured output), where the backend supports it.
    pub schema: Option<serde_json::Value>,
    pub temperature: Option<f32>,
    pub seed: Option<i64>,
    /// Context window to ask for (Ollama's `num_ctx`); also how a full context is recognised.
    pub context_tokens: Option<u32>,
    pub max_tokens: Option<u32>,
    pub stop: Vec<String>,
    /// Stream tokens to the caller as they come (see [`Backend::chat`]).
    pub stream: bool,
}

impl ChatRequest {
    pub fn new(model: impl Into<String>, messages: Vec<Message>) -> Self {
        Self {
            model: model.into(),
            messages,
            schema: None,
            temperature: None,
            seed: None,
            context_tokens: None,
            max_tokens: None,
            stop: Vec::new(),
            stream: false,
        }
    }
}

/// Why the model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Finish {
    /// It ended its reply, or hit a stop sequence.
    Stop,
    /// It ran into the token limit: the reply is cut.
    Length,
    Other,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ChatReply {
    pub content: String,
    pub finish: Finish,
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelInfo {
    pub name: String,
    /// Bytes on disk, where the backend says.
    pub size: Option<u64>,
}

/// How far a model call has got before its reply begins: the parts that take long enough to
/// look frozen (a first download, a long prompt on a CPU) say so as they go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// The model's file is being fetched into the cache: bytes so far, of `total`.
    Download { done: u64, total: u64 },
    /// The model is being read (and, on a GPU, uploaded) before its first use.
    Load,
    /// The prompt is being run through the model: tokens so far, of the `total` not already
    /// in its cache.
    Prompt { done: u64, total: u64 },
}

/// What a backend streams while it answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Streamed<'a> {
    /// Reply text as it arrives (only when the request asks to stream).
    Text(&'a str),
    Progress(Progress),
}

/// Receives what a backend streams.
pub type TokenSink<'a> = &'a mut (dyn FnMut(Streamed<'_>) + Send);

/// How long to wait: for a connection, and for each piece of a reply (a model may think
/// for a while before its first token, so the per-piece wait is generous).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    pub connect: Duration,
    pub response: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            connect: Duration::from_secs(3),
            response: Duration::from_secs(120),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("{backend} is not reachable at {url}: {detail}. {hint}")]
    Unreachable {
        backend: &'static str,
        url: String,
        detail: String,
        hint: &'static str,
    },
    #[error("the model {model:?} is not available: {detail}. {hint}")]
    ModelNotFound {
        model: String,
        detail: String,
        hint: String,
    },
    #[error("the prompt does not fit the model's context: {0}")]
    ContextOverflow(String),
    #[error("{backend} refused the API key: {message}. Set the key in the settings")]
    Unauthorized {
        backend: &'static str,
        message: String,
    },
    #[error("no reply within {0:?}")]
    Timeout(Duration),
    #[error("{backend} answered HTTP {status}: {message}")]
    Http {
        backend: &'static str,
        status: u16,
        message: String,
    },
    #[error("{backend} sent a reply that could not be read: {detail}")]
    Protocol {
        backend: &'static str,
        detail: String,
    },
    #[error("scripted backend: {0}")]
    Script(String),
}

/// A model server, or a model in process.
#[async_trait]
pub trait Backend: Send + Sync {
    /// Short name for messages and settings, e.g. `ollama`.
    fn name(&self) -> &'static str;

    /// Asks for one reply. With `request.stream`, text goes to `sink` as it arrives (the reply
    /// still holds all of it).
    async fn chat(&self, request: &ChatRequest, sink: TokenSink<'_>)
        -> Result<ChatReply, LlmError>;

    /// The models this backend can run now, for the settings page.
    async fn models(&self) -> Result<Vec<ModelInfo>, LlmError>;

    /// How many tokens `text` is for the model, by its own tokenizer, where the backend has
    /// it at hand (the built-in engine); `None` where only the server knows.
    fn count_tokens(&self, text: &str) -> Option<usize> {
        let _ = text;
        None
    }
}
