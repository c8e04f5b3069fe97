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

#[derive(Default)]
pub struct Scripted {
    steps: Mutex<VecDeque<Step>>,
    /// Every request received, in order, for tests to inspect.
    seen: Mutex<Vec<ChatRequest>>,
}

impl Scripted {
    pub fn new(steps: impl IntoIterator<Item = Step>) -> Self {
        Self {
            steps: Mutex::new(steps.into_iter().collect()),
            seen: Mutex::default(),
        }
    }

    /// A script file: a JSON array of steps (`{"expect": [...], "reject": [...], "reply": "..."}`).
    pub fn from_file(path: &Path) -> Result<Self, LlmError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| LlmError::Script(format!("cannot read {}: {e}", path.display())))?;
        let steps: Vec<Step> = serde_json::from_str(&text)
            .map_err(|e| LlmError::Script(format!("{} is not a script: {e}", path.display())))?;
        Ok(Self::new(steps))
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
        let step = self
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
