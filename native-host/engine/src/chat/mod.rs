//! Chat templates: a conversation → the prompt text the model was trained on.
//!
//! The GGUF carries the model's Hugging Face template (`tokenizer.chat_template`, Jinja). It is
//! rendered with minijinja configured the way `transformers` renders it (`trim_blocks`,
//! `lstrip_blocks`, Python string methods, `raise_exception`, `strftime_now`, and a `tojson` that
//! writes what Python's `json.dumps` writes), so the prompt is the one the model expects.
//!
//! Some GGUFs ship without a template (the Gemma 3 270M one does). For those architectures the
//! model family's published template is built in (`gemma3.jinja`, from Google's Gemma 3
//! tokenizer_config.json). llama.cpp has the same layout hard-coded as its `gemma` chat format
//! (`llama_chat_apply_template`), and the tests check the two agree.

mod json;

use minijinja::{Environment, Error, ErrorKind, Value};
use serde::Serialize;

use crate::gguf::{Gguf, GgufError};
use crate::tokenizer::Tokenizer;

/// Why a template could not be found, compiled or rendered.
#[derive(Debug, thiserror::Error)]
pub enum ChatError {
    #[error("reading the chat template from the GGUF: {0}")]
    Gguf(#[from] GgufError),
    #[error("the model has no chat template (no tokenizer.chat_template) and itinero has none built in for architecture {0:?}")]
    NoTemplate(String),
    #[error("the chat template does not compile: {0:#}")]
    Syntax(#[source] Error),
    #[error("rendering the chat template failed: {0:#}")]
    Render(#[source] Error),
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Message {
    pub role: String,
    pub content: String,
}

impl Message {
    pub fn new(role: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            role: role.into(),
            content: content.into(),
        }
    }
}

/// Where a template came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TemplateSource {
    /// `tokenizer.chat_template` in the GGUF.
    Gguf,
    /// itinero's built-in template for the architecture, for GGUFs that lack one.
    BuiltIn(&'static str),
}

const GEMMA3_TEMPLATE: &str = include_str!("gemma3.jinja");

/// A compiled chat template plus the token texts it refers to.
pub struct ChatTemplate {
    env: Environment<'static>,
    source: TemplateSource,
    bos_token: String,
    eos_token: String,
}

impl std::fmt::Debug for ChatTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatTemplate")
            .field("source", &self.source)
            .field("bos_token", &self.bos_token)
            .field("eos_token", &self.eos_token)
            .finish()
    }
}

impl ChatTemplate {
    /// The GGUF's template, or the built-in one for its architecture.
    pub fn from_gguf(gguf: &Gguf, tokenizer: &Tokenizer) -> Result<Self, ChatError> {
        let vocab = tokenizer.vocab();
        let text = |id: Option<u32>| {
            id.and_then(|id| vocab.token(id))
                .map(|t| t.text.clone())
                .unwrap_or_default()
        };
        let (bos, eos) = (text(vocab.bos), text(vocab.eos));
        if let Some(source) = gguf.metadata().opt_str("tokenizer.chat_template")? {
            return Self::new(source.to_string(), TemplateSource::Gguf, bos, eos);
        }
        let arch = gguf.architecture_name()?;
        match arch {
            "gemma3" => Self::new(
                GEMMA3_TEMPLATE.to_string(),
                TemplateSource::BuiltIn("gemma3"),
                bos,
                eos,
            ),
            other => Err(ChatError::NoTemplate(other.to_string())),
        }
    }

    /// Compiles `template` (Jinja source).
    pub fn new(
        template: String,
        source: TemplateSource,
        bos_token: String,
        eos_token: String,
    ) -> Result<Self, ChatError> {
        let mut env = Environment::new();
        // transformers renders with trim_blocks and lstrip_blocks on.
        env.set_trim_blocks(true);
        env.set_lstrip_blocks(true);
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_function("raise_exception", raise_exception);
        env.add_function("strftime_now", strftime_now);
        env.add_filter("tojson", json::tojson);
        env.add_template_owned("chat", template)
            .map_err(ChatError::Syntax)?;
        Ok(Self {
            env,
            source,
            bos_token,
            eos_token,
        })
    }

    pub fn source(&self) -> TemplateSource {
        self.source
    }

    /// Renders `messages`; with `add_generation_prompt` the prompt ends where the assistant's
    /// reply begins.
    pub fn render(
        &self,
        messages: &[Message],
        add_generation_prompt: bool,
    ) -> Result<String, ChatError> {
        let template = self.env.get_template("chat").map_err(ChatError::Render)?;
        template
            .render(minijinja::context! {
                messages => messages,
                add_generation_prompt => add_generation_prompt,
                bos_token => self.bos_token,
                eos_token => self.eos_token,
            })
            .map_err(ChatError::Render)
    }
}

/// Templates call `raise_exception("…")` to reject a conversation they cannot format.
fn raise_exception(message: String) -> Result<Value, Error> {
    Err(Error::new(ErrorKind::InvalidOperation, message))
}

/// `strftime_now(format)`: the local time, formatted as Python's `strftime` would.
fn strftime_now(format: String) -> Result<Value, Error> {
    use std::fmt::Write;
    let mut out = String::new();
    write!(out, "{}", chrono::Local::now().format(&format)).map_err(|_| {
        Error::new(
            ErrorKind::InvalidOperation,
            format!("strftime_now: invalid format {format:?}"),
        )
    })?;
    Ok(Value::from(out))
}

#[cfg(test)]
mod tests;
