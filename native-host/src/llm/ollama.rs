//! Ollama (`/api/chat`, `/api/tags`).
//!
//! Requests are built with ollama-rs's types and the model list comes from ollama-rs. The chat
//! reply is read here, not by ollama-rs: its stream reader drops lines it cannot parse, and so
//! loses the `{"error": …}` line Ollama sends when a generation fails midway, and it drops a
//! chunk that ends inside a UTF-8 character. Both would turn a clear failure into a silently
//! short reply.

use async_trait::async_trait;
use ollama_rs::generation::chat::request::ChatMessageRequest;
use ollama_rs::generation::chat::ChatMessage;
use ollama_rs::generation::parameters::{FormatType, JsonStructure};
use ollama_rs::models::ModelOptions;
use serde::Deserialize;

use super::defuse::defused;
use super::http::{error_chain, Endpoint};
use super::lines::Lines;
use super::{
    Backend, ChatReply, ChatRequest, Finish, LlmError, ModelInfo, Role, Streamed, Timeouts,
    TokenSink,
};

const NAME: &str = "Ollama";
const START_HINT: &str =
    "Start it with `ollama serve` (install it from https://ollama.com), or set OLLAMA_HOST to where it runs";

/// Where Ollama listens unless `OLLAMA_HOST` says otherwise (as the Ollama CLI reads it).
pub fn default_url() -> String {
    match std::env::var("OLLAMA_HOST") {
        Ok(h) if !h.trim().is_empty() => {
            let h = h.trim();
            if h.contains("://") {
                h.to_owned()
            } else {
                format!("http://{h}")
            }
        }
        _ => "http://127.0.0.1:11434".to_owned(),
    }
}

pub struct Ollama {
    http: Endpoint,
    api: ollama_rs::Ollama,
}

impl Ollama {
    pub fn new(base_url: &str, timeouts: Timeouts) -> Result<Self, LlmError> {
        let http = Endpoint::new(base_url, timeouts, NAME, START_HINT)?;
        let api = ollama_rs::Ollama::builder()
            .url(http.base().clone())
            .reqwest_client(http.client.clone())
            .build();
        Ok(Self { http, api })
    }

    fn body(&self, request: &ChatRequest) -> Result<serde_json::Value, LlmError> {
        let messages = request
            .messages
            .iter()
            .map(|m| match m.role {
                Role::System => ChatMessage::system(defused(&m.content)),
                Role::User => ChatMessage::user(defused(&m.content)),
                Role::Assistant => ChatMessage::assistant(defused(&m.content)),
            })
            .collect();
        let mut options = ModelOptions::default();
        if let Some(t) = request.temperature {
            options = options.temperature(t);
        }
        if let Some(s) = request.seed {
            options = options.seed(s as i32);
        }
        if let Some(n) = request.context_tokens {
            options = options.num_ctx(u64::from(n));
        }
        if let Some(n) = request.max_tokens {
            options = options.num_predict(n as i32);
        }
        if !request.stop.is_empty() {
            options = options.stop(request.stop.clone());
        }
        let mut chat = ChatMessageRequest::new(request.model.clone(), messages).options(options);
        if let Some(schema) = &request.schema {
            let schema =
                schemars::Schema::try_from(schema.clone()).map_err(|e| LlmError::Protocol {
                    backend: NAME,
                    detail: format!("the output schema is not a JSON schema: {e}"),
                })?;
            chat = chat.format(FormatType::StructuredJson(Box::new(
                JsonStructure::new_for_schema(schema),
            )));
        }
        let mut body = serde_json::to_value(&chat).map_err(|e| LlmError::Protocol {
            backend: NAME,
            detail: format!("cannot encode the request: {e}"),
        })?;
        body["stream"] = serde_json::Value::Bool(request.stream);
        Ok(body)
    }

    /// An error reply: Ollama's body is `{"error": "…"}`.
    async fn refused(&self, model: &str, response: reqwest::Response) -> LlmError {
        let status = response.status().as_u16();
        let text = response.text().await.unwrap_or_default();
        let message = serde_json::from_str::<Chunk>(&text)
            .ok()
            .and_then(|c| c.error)
            .unwrap_or(text);
        classify(model, status, message)
    }
}

/// One line of `/api/chat`'s reply: a piece of the message, the final statistics, or an error.
#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    message: Option<ChunkMessage>,
    #[serde(default)]
    done: bool,
    #[serde(default)]
    done_reason: Option<String>,
    #[serde(default)]
    prompt_eval_count: Option<u64>,
    #[serde(default)]
    eval_count: Option<u64>,
    #[serde(default)]
    error: Option<String>,
}

#[derive(Deserialize)]
struct ChunkMessage {
    #[serde(default)]
    content: String,
}

fn classify(model: &str, status: u16, message: String) -> LlmError {
    let lower = message.to_lowercase();
    if status == 404 || (lower.contains("model") && lower.contains("not found")) {
        return LlmError::ModelNotFound {
            model: model.to_owned(),
            detail: message,
            hint: format!("Pull it with `ollama pull {model}`"),
        };
    }
    if lower.contains("context") && (lower.contains("exceed") || lower.contains("length")) {
        return LlmError::ContextOverflow(message);
    }
    LlmError::Http {
        backend: NAME,
        status,
        message,
    }
}

#[async_trait]
impl Backend for Ollama {
    fn name(&self) -> &'static str {
        "ollama"
    }

    async fn chat(
        &self,
        request: &ChatRequest,
        sink: TokenSink<'_>,
    ) -> Result<ChatReply, LlmError> {
        let body = self.body(request)?;
        tracing::debug!(model = %request.model, stream = request.stream, "ollama chat");
        let post = self.http.client.post(self.http.url("api/chat")).json(&body);
        let response = self.http.send(post).await?;
        if !response.status().is_success() {
            return Err(self.refused(&request.model, response).await);
        }
        // Streamed or not, the reply is NDJSON: one object, or one per piece.
        let mut lines = Lines::new(response, self.http.timeouts.response, NAME);
        let mut content = String::new();
        while let Some(line) = lines.next().await? {
            let chunk: Chunk = serde_json::from_str(&line).map_err(|e| LlmError::Protocol {
                backend: NAME,
                detail: format!("{e} in {line:?}"),
            })?;
            if let Some(error) = chunk.error {
                return Err(classify(&request.model, 200, error));
            }
            if let Some(m) = &chunk.message {
                if !m.content.is_empty() {
                    if request.stream {
                        sink(Streamed::Text(&m.content));
                    }
                    content.push_str(&m.content);
                }
            }
            if chunk.done {
                let finish = match chunk.done_reason.as_deref() {
                    Some("length") => Finish::Length,
                    Some("stop") | None => Finish::Stop,
                    Some(_) => Finish::Other,
                };
                // Ollama cuts a prompt that is too long instead of refusing it; a prompt that
                // filled the whole window was cut, and the model never saw its start.
                if let (Some(window), Some(used)) =
                    (request.context_tokens, chunk.prompt_eval_count)
                {
                    if used >= u64::from(window) {
                        return Err(LlmError::ContextOverflow(format!(
                            "the prompt filled all {window} tokens of the context window, so Ollama cut it"
                        )));
                    }
                }
                return Ok(ChatReply {
                    content,
                    finish,
                    prompt_tokens: chunk.prompt_eval_count,
                    completion_tokens: chunk.eval_count,
                });
            }
        }
        Err(LlmError::Protocol {
            backend: NAME,
            detail: "the reply ended before Ollama said it was done".into(),
        })
    }

    async fn models(&self) -> Result<Vec<ModelInfo>, LlmError> {
        let wait = self.http.timeouts.response;
        let list = tokio::time::timeout(wait, self.api.list_local_models())
            .await
            .map_err(|_| LlmError::Timeout(wait))?;
        match list {
            Ok(models) => Ok(models
                .into_iter()
                .map(|m| ModelInfo {
                    name: m.name,
                    size: Some(m.size),
                })
                .collect()),
            Err(ollama_rs::error::OllamaError::ReqwestError(e)) if e.is_connect() => {
                Err(self.http.unreachable(&e))
            }
            Err(e) => Err(LlmError::Protocol {
                backend: NAME,
                detail: error_chain(&e),
            }),
        }
    }
}
