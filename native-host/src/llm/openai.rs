//! The OpenAI chat-completions API (`/chat/completions`, `/models`), as LM Studio, llama.cpp's
//! server, vLLM and hosted services speak it. The API key stays in the host; it is sent only
//! as the `Authorization` header and never logged.

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;
use zeroize::Zeroizing;

use super::defuse::defused;
use super::http::{error_chain, Endpoint};
use super::lines::Lines;
use super::{
    Backend, ChatReply, ChatRequest, Finish, LlmError, ModelInfo, Role, Streamed, Timeouts,
    TokenSink,
};

const NAME: &str = "the OpenAI-compatible server";
const START_HINT: &str =
    "Check that the server is running and that the base URL ends where its API starts (e.g. http://127.0.0.1:8080/v1)";

pub struct OpenAi {
    http: Endpoint,
    /// Wiped from memory with the backend (it may have come out of the vault).
    key: Option<Zeroizing<String>>,
}

impl OpenAi {
    /// `base_url` is where the API starts, e.g. `https://api.openai.com/v1`.
    pub fn new(base_url: &str, key: Option<String>, timeouts: Timeouts) -> Result<Self, LlmError> {
        Ok(Self {
            http: Endpoint::new(base_url, timeouts, NAME, START_HINT)?,
            key: key.filter(|k| !k.is_empty()).map(Zeroizing::new),
        })
    }

    fn authorised(&self, builder: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.key {
            Some(key) => builder.bearer_auth(key.as_str()),
            None => builder,
        }
    }

    async fn send(
        &self,
        builder: reqwest::RequestBuilder,
        model: &str,
    ) -> Result<reqwest::Response, LlmError> {
        let response = self.http.send(builder).await?;
        if response.status().is_success() {
            return Ok(response);
        }
        let status = response.status().as_u16();
        let text = response.text().await.unwrap_or_default();
        Err(classify(model, status, &text))
    }
}

/// `{"error": {"message", "type", "code"}}`, as OpenAI writes it; some servers write a string.
#[derive(Deserialize)]
struct ErrorBody {
    error: ErrorDetail,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ErrorDetail {
    Object {
        #[serde(default)]
        message: String,
        #[serde(default, rename = "type")]
        kind: Option<String>,
        #[serde(default)]
        code: Option<serde_json::Value>,
    },
    Text(String),
}

fn classify(model: &str, status: u16, text: &str) -> LlmError {
    let (message, kind, code) = match serde_json::from_str::<ErrorBody>(text) {
        Ok(ErrorBody {
            error:
                ErrorDetail::Object {
                    message,
                    kind,
                    code,
                },
        }) => (
            message,
            kind.unwrap_or_default(),
            code.map(|c| c.as_str().map_or_else(|| c.to_string(), str::to_owned))
                .unwrap_or_default(),
        ),
        Ok(ErrorBody {
            error: ErrorDetail::Text(message),
        }) => (message, String::new(), String::new()),
        Err(_) => (text.trim().to_owned(), String::new(), String::new()),
    };
    let all = format!("{kind} {code} {message}").to_lowercase();
    if status == 401 || status == 403 || code == "invalid_api_key" {
        return LlmError::Unauthorized {
            backend: NAME,
            message,
        };
    }
    if code == "model_not_found" || (status == 404 && all.contains("model")) {
        return LlmError::ModelNotFound {
            model: model.to_owned(),
            detail: message,
            hint: "Check the model name against the server's model list".into(),
        };
    }
    if code == "context_length_exceeded"
        || all.contains("exceed_context")
        || (all.contains("context") && (all.contains("exceed") || all.contains("length")))
    {
        return LlmError::ContextOverflow(message);
    }
    LlmError::Http {
        backend: NAME,
        status,
        message,
    }
}

#[derive(Deserialize)]
struct Completion {
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    message: Option<Content>,
    #[serde(default)]
    delta: Option<Content>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Content {
    #[serde(default)]
    content: Option<String>,
}

#[derive(Deserialize)]
struct Usage {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
}

fn finish_of(reason: Option<&str>) -> Finish {
    match reason {
        Some("stop") | None => Finish::Stop,
        Some("length") => Finish::Length,
        Some(_) => Finish::Other,
    }
}

#[async_trait]
impl Backend for OpenAi {
    fn name(&self) -> &'static str {
        "openai"
    }

    async fn chat(
        &self,
        request: &ChatRequest,
        sink: TokenSink<'_>,
    ) -> Result<ChatReply, LlmError> {
        let messages: Vec<_> = request
            .messages
            .iter()
            .map(|m| {
                let role = match m.role {
                    Role::System => "system",
                    Role::User => "user",
                    Role::Assistant => "assistant",
                };
                json!({ "role": role, "content": defused(&m.content) })
            })
            .collect();
        let mut body = json!({
            "model": request.model,
            "messages": messages,
            "stream": request.stream,
        });
        if let Some(t) = request.temperature {
            body["temperature"] = json!(t);
        }
        if let Some(s) = request.seed {
            body["seed"] = json!(s);
        }
        if let Some(n) = request.max_tokens {
            body["max_tokens"] = json!(n);
        }
        if !request.stop.is_empty() {
            body["stop"] = json!(request.stop);
        }
        if let Some(schema) = &request.schema {
            body["response_format"] = json!({
                "type": "json_schema",
                "json_schema": { "name": "reply", "schema": schema, "strict": true },
            });
        }
        if request.stream {
            body["stream_options"] = json!({ "include_usage": true });
        }
        tracing::debug!(model = %request.model, stream = request.stream, "openai-compatible chat");
        let builder = self.authorised(
            self.http
                .client
                .post(self.http.url("chat/completions"))
                .json(&body),
        );
        let response = self.send(builder, &request.model).await?;
        if !request.stream {
            let text = tokio::time::timeout(self.http.timeouts.response, response.text())
                .await
                .map_err(|_| LlmError::Timeout(self.http.timeouts.response))?
                .map_err(|e| LlmError::Protocol {
                    backend: NAME,
                    detail: error_chain(&e),
                })?;
            let completion: Completion =
                serde_json::from_str(&text).map_err(|e| LlmError::Protocol {
                    backend: NAME,
                    detail: format!("{e} in {text:?}"),
                })?;
            let choice = completion
                .choices
                .into_iter()
                .next()
                .ok_or(LlmError::Protocol {
                    backend: NAME,
                    detail: "the reply has no choices".into(),
                })?;
            return Ok(ChatReply {
                content: choice.message.and_then(|m| m.content).unwrap_or_default(),
                finish: finish_of(choice.finish_reason.as_deref()),
                prompt_tokens: completion.usage.as_ref().and_then(|u| u.prompt_tokens),
                completion_tokens: completion.usage.as_ref().and_then(|u| u.completion_tokens),
            });
        }
        // Server-sent events: `data: {…}` lines, then `data: [DONE]`.
        let mut lines = Lines::new(response, self.http.timeouts.response, NAME);
        let mut reply = ChatReply {
            content: String::new(),
            finish: Finish::Stop,
            prompt_tokens: None,
            completion_tokens: None,
        };
        let mut finished = false;
        while let Some(line) = lines.next().await? {
            let Some(data) = line.strip_prefix("data:") else {
                // Comments (`: keep-alive`) and other fields carry nothing for us.
                continue;
            };
            let data = data.trim();
            if data == "[DONE]" {
                return Ok(reply);
            }
            if data.contains("\"error\"") {
                if let Ok(ErrorBody { .. }) = serde_json::from_str::<ErrorBody>(data) {
                    return Err(classify(&request.model, 200, data));
                }
            }
            let chunk: Completion = serde_json::from_str(data).map_err(|e| LlmError::Protocol {
                backend: NAME,
                detail: format!("{e} in {data:?}"),
            })?;
            if let Some(usage) = chunk.usage {
                reply.prompt_tokens = usage.prompt_tokens;
                reply.completion_tokens = usage.completion_tokens;
            }
            for choice in chunk.choices {
                if let Some(piece) = choice.delta.and_then(|d| d.content) {
                    if !piece.is_empty() {
                        sink(Streamed::Text(&piece));
                        reply.content.push_str(&piece);
                    }
                }
                if choice.finish_reason.is_some() {
                    reply.finish = finish_of(choice.finish_reason.as_deref());
                    finished = true;
                }
            }
        }
        if finished {
            // Some servers end the stream without `[DONE]` once the finish reason is sent.
            return Ok(reply);
        }
        Err(LlmError::Protocol {
            backend: NAME,
            detail: "the stream ended before the reply was finished".into(),
        })
    }

    async fn models(&self) -> Result<Vec<ModelInfo>, LlmError> {
        #[derive(Deserialize)]
        struct List {
            data: Vec<Entry>,
        }
        #[derive(Deserialize)]
        struct Entry {
            id: String,
        }
        let builder = self.authorised(self.http.client.get(self.http.url("models")));
        let response = self.send(builder, "").await?;
        let list: List = response.json().await.map_err(|e| LlmError::Protocol {
            backend: NAME,
            detail: error_chain(&e),
        })?;
        Ok(list
            .data
            .into_iter()
            .map(|e| ModelInfo {
                name: e.id,
                size: None,
            })
            .collect())
    }
}
