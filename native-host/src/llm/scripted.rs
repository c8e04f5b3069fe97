//! Replies read from a script, for tests of everything around the model: the agent loop, the
//! prompt, the parser and the guards. Each step can say what the prompt must and must not
//! contain, so a test fails where the prompt went wrong, not several steps later.
//!
//! A reply may name elements the way a model picks them, by what they are rather than by
//! number: `{{button 'Add to cart'}}` becomes the index the prompt's page gives the one `<button>`
//! whose name (its text, or a quoted `name`, `aria-label`, `placeholder` or `value`) is "Add to
//! cart". A script then survives changes to the page's layout, and a name that is missing or
//! ambiguous fails the call with a message saying so.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::Mutex;

use async_trait::async_trait;
use serde::Deserialize;

use super::{Backend, ChatReply, ChatRequest, Finish, LlmError, ModelInfo, Streamed, TokenSink};

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
        let content = fill_indices(&step.reply, &prompt)
            .map_err(|e| LlmError::Script(format!("call {number}: {e}")))?;
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
            for piece in content.split_inclusive(' ') {
                sink(Streamed::Text(piece));
            }
        }
        Ok(ChatReply {
            content,
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

/// `reply` with each `{{tag 'name'}}` replaced by that element's index in `prompt`
/// (`{{secret:…}}` placeholders stay).
fn fill_indices(reply: &str, prompt: &str) -> Result<String, String> {
    let mut out = String::with_capacity(reply.len());
    let mut rest = reply;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find("}}")
            .ok_or_else(|| format!("the reply has an unclosed {{{{ at {:?}", &rest[start..]))?;
        let inner = after[..end].trim();
        // A vault placeholder is the model's own text, kept as written.
        if inner.starts_with("secret:") {
            out.push_str(&rest[start..start + 2 + end + 2]);
            rest = &after[end + 2..];
            continue;
        }
        let (tag, name) = inner
            .split_once(' ')
            .ok_or_else(|| format!("{{{{{inner}}}}} names no element: write {{{{tag 'name'}}}}"))?;
        let name = name.trim().trim_matches('\'');
        out.push_str(&index_in(prompt, tag.trim(), name)?.to_string());
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The index of the one `<tag>` named `name` on the prompt's page.
fn index_in(prompt: &str, tag: &str, name: &str) -> Result<u32, String> {
    let needle = format!("]<{tag}");
    let name = name.to_lowercase();
    let mut found = Vec::new();
    for (pos, _) in prompt.match_indices(&needle) {
        let Some(open) = prompt[..pos].rfind('[') else {
            continue;
        };
        let Ok(index) = prompt[open + 1..pos].parse::<u32>() else {
            continue;
        };
        let after = &prompt[pos + needle.len()..];
        if !after.starts_with([' ', '>']) {
            continue;
        }
        let line = &after[..after.find('\n').unwrap_or(after.len())];
        let element = match line.find(&format!("</{tag}>")) {
            Some(close) => &line[..close],
            None => &line[..line.find('>').map_or(line.len(), |i| i + 1)],
        }
        .to_lowercase();
        let named = element.ends_with(&format!(">{name}"))
            || element.contains(&format!("\"{name}\""))
            || element.contains(&format!("={name} "))
            || element.contains(&format!("={name}>"));
        if named && !found.contains(&index) {
            found.push(index);
        }
    }
    match found.as_slice() {
        [one] => Ok(*one),
        [] => Err(format!("the page has no <{tag}> named {name:?}")),
        many => Err(format!(
            "the page has several <{tag}> named {name:?}: {many:?}"
        )),
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
        let mut ignore = |_: Streamed<'_>| {};
        let reply = script.chat(&request, &mut ignore).await.unwrap();
        assert_eq!(reply.content, "first");
        assert_eq!(hits.load(Ordering::SeqCst), 1);
        let err = script.chat(&request, &mut ignore).await.unwrap_err();
        assert!(err.to_string().contains("answered 404"), "{err}");
    }

    #[test]
    fn elements_are_named_by_tag_and_name() {
        let page = "Page: Shop — http://127.0.0.1/shop/\n\
                    [0]<input type=search aria-label=\"Search products\">\n\
                    [1]<button>Search</button>\n\
                    Wool socks 12.99 EUR *[2]<a href=\"/shop/product/wool-socks\">Wool socks</a>\n\
                    [3]<input type=number name=qty value=\"1\">\n\
                    [4]<button>Add to cart</button> [5]<button>Add to cart</button>";
        let filled = fill_indices(
            r#"{"action": "type", "index": {{input 'search products'}}, "then": {{a 'Wool socks'}}, "q": {{input 'qty'}}, "b": {{button 'Search'}}}"#,
            page,
        )
        .unwrap();
        assert_eq!(
            filled,
            r#"{"action": "type", "index": 0, "then": 2, "q": 3, "b": 1}"#
        );
        assert!(fill_indices("{{button 'Checkout'}}", page)
            .unwrap_err()
            .contains("no <button> named \"checkout\""));
        assert!(fill_indices("{{button 'Add to cart'}}", page)
            .unwrap_err()
            .contains("several"));
        assert_eq!(
            fill_indices("no placeholders", page).unwrap(),
            "no placeholders"
        );
    }
}
