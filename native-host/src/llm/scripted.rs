//! Replies read from a script, for tests of everything around the model: the agent loop, the
//! prompt, the parser and the guards. Each step can say what the prompt must and must not
//! contain, so a test fails where the prompt went wrong, not several steps later.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::Mutex;

use async_trait::async_trait;
use serde::Deserialize;

use super::{Backend, ChatReply, ChatRequest, Finish, LlmError, ModelInfo, TokenSink};

/// One model call of the script.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Step {
    /// Text the prompt (any message) must contain.
    #[serde(default)]
    pub expect: Vec<String>,
    /// Text the prompt must not contain (e.g. a secret).
    #[serde(default)]
    pub reject: Vec<String>,
    pub reply: String,
}

impl Step {
    pub fn reply(reply: impl Into<String>) -> Self {
        Self {
            expect: Vec::new(),
            reject: Vec::new(),
            reply: reply.into(),
        }
    }
}

/// A step as a script file writes it: a [`Step`], and optionally a URL to fetch (GET) before
/// replying — for end-to-end tests that change the page while the "model thinks", such as a
/// fixture re-rendering the element the reply is about to name. A reply other than 2xx fails
/// the call, so a hook that did not happen cannot pass unnoticed.
#[derive(Debug, Clone, Deserialize)]
struct FileStep {
    #[serde(flatten)]
    step: Step,
    #[serde(default)]
    before: Option<String>,
}

#[derive(Default)]
pub struct Scripted {
    steps: Mutex<VecDeque<(Step, Option<String>)>>,
    /// Every request received, in order, for tests to inspect.
    seen: Mutex<Vec<ChatRequest>>,
}

impl Scripted {
    pub fn new(steps: impl IntoIterator<Item = Step>) -> Self {
        Self {
            steps: Mutex::new(steps.into_iter().map(|s| (s, None)).collect()),
            seen: Mutex::default(),
        }
    }

    /// A script file: a JSON array of steps (`{"expect": [...], "reject": [...], "reply": "...",
    /// "before": "http://…"}`; all but `reply` optional).
    pub fn from_file(path: &Path) -> Result<Self, LlmError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| LlmError::Script(format!("cannot read {}: {e}", path.display())))?;
        let steps: Vec<FileStep> = serde_json::from_str(&text)
            .map_err(|e| LlmError::Script(format!("{} is not a script: {e}", path.display())))?;
        Ok(Self {
            steps: Mutex::new(steps.into_iter().map(|s| (s.step, s.before)).collect()),
            seen: Mutex::default(),
        })
    }

    /// The requests received so far.
    pub fn requests(&self) -> Vec<ChatRequest> {
        self.seen.lock().expect("not poisoned").clone()
    }

    /// Steps not used yet.
    pub fn remaining(&self) -> usize {
        self.steps.lock().expect("not poisoned").len()
    }
}

#[async_trait]
impl Backend for Scripted {
    fn name(&self) -> &'static str {
        "scripted"
    }

    async fn chat(
        &self,
        request: &ChatRequest,
        sink: TokenSink<'_>,
    ) -> Result<ChatReply, LlmError> {
        let number = {
            let mut seen = self.seen.lock().expect("not poisoned");
            seen.push(request.clone());
            seen.len()
        };
        let (step, before) = self
            .steps
            .lock()
            .expect("not poisoned")
            .pop_front()
            .ok_or_else(|| {
                LlmError::Script(format!("call {number}: the script has no reply left"))
            })?;
        let prompt: String = request
            .messages
            .iter()
            .map(|m| m.content.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        if let Some(missing) = step.expect.iter().find(|e| !prompt.contains(e.as_str())) {
            return Err(LlmError::Script(format!(
                "call {number}: the prompt does not contain {missing:?}"
            )));
        }
        if let Some(found) = step.reject.iter().find(|r| prompt.contains(r.as_str())) {
            return Err(LlmError::Script(format!(
                "call {number}: the prompt contains {found:?}, which it must not"
            )));
        }
        if let Some(url) = before {
            let status = reqwest::get(&url)
                .await
                .map_err(|e| LlmError::Script(format!("call {number}: GET {url} failed: {e}")))?
                .status();
            if !status.is_success() {
                return Err(LlmError::Script(format!(
                    "call {number}: GET {url} answered {status}"
                )));
            }
        }
        if request.stream {
            // In word-sized pieces, as a model streams.
            for piece in step.reply.split_inclusive(' ') {
                sink(piece);
            }
        }
        Ok(ChatReply {
            content: step.reply,
            finish: Finish::Stop,
            prompt_tokens: None,
            completion_tokens: None,
        })
    }

    async fn models(&self) -> Result<Vec<ModelInfo>, LlmError> {
        Ok(vec![ModelInfo {
            name: "scripted".into(),
            size: None,
        }])
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use super::*;
    use crate::llm::Message;

    #[tokio::test]
    async fn a_script_file_can_fetch_a_url_before_replying() {
        let hits = Arc::new(AtomicUsize::new(0));
        let counted = hits.clone();
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::get(move || {
                counted.fetch_add(1, Ordering::SeqCst);
                async { "ok" }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("script.json");
        std::fs::write(
            &path,
            serde_json::json!([
                {"expect": ["socks"], "reply": "first", "before": format!("http://{addr}/hook")},
                {"reply": "second", "before": format!("http://{addr}/missing")},
            ])
            .to_string(),
        )
        .unwrap();
        let script = Scripted::from_file(&path).unwrap();
        let request = ChatRequest::new("m", vec![Message::user("wool socks")]);
        let mut ignore = |_: &str| {};
        let reply = script.chat(&request, &mut ignore).await.unwrap();
        assert_eq!(reply.content, "first");
        assert_eq!(hits.load(Ordering::SeqCst), 1);
        let err = script.chat(&request, &mut ignore).await.unwrap_err();
        assert!(err.to_string().contains("answered 404"), "{err}");
    }
}
