//! Evaluating JavaScript in a page and waiting on conditions, with useful errors.

use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Result};
use chromiumoxide::cdp::js_protocol::runtime::{
    EvaluateParams, ExecutionContextDescription, ExecutionContextId,
};
use chromiumoxide::Page;
use serde::de::DeserializeOwned;
use serde_json::Value;

#[allow(async_fn_in_trait)]
pub trait PageExt {
    /// Evaluates `body` as the body of an async function and returns its result as JSON.
    async fn run_js<T: DeserializeOwned>(&self, body: &str) -> Result<T>;

    /// Polls a JS expression until it is truthy; returns its value. Fails after `timeout`
    /// with the last value seen, so a failing test says what the page showed instead.
    async fn wait_for(&self, expression: &str, timeout: Duration) -> Result<Value>;

    /// Evaluates `expression` in the execution context `world` (e.g. a content script's
    /// isolated world, see [`content_script_frame`]) and returns its value.
    async fn eval_in_world(&self, world: ExecutionContextId, expression: &str) -> Result<Value>;

    /// Text content of the first element matching `selector` ("" if none).
    async fn text_of(&self, selector: &str) -> Result<String>;

    /// From an extension page (the panel), sends `msg` once to the content script in the top
    /// frame of the tab showing `url`, and returns its reply.
    async fn tab_message(&self, url: &str, msg: &Value) -> Result<Value>;

    /// Like [`PageExt::tab_message`], retried until the content script answers (it loads at
    /// `document_idle`). Only for messages that are safe to repeat (`probe`, `observe`).
    async fn tab_message_when_ready(&self, url: &str, msg: &Value) -> Result<Value>;
}

/// The frame whose extension content script runs in `context`, when `context` is such a
/// world (an isolated world of a `chrome-extension://` origin); `None` for any other.
pub fn content_script_frame(context: &ExecutionContextDescription) -> Option<&str> {
    let aux = context.aux_data.as_ref()?;
    let isolated = aux["type"].as_str() == Some("isolated");
    let extension = context.origin.starts_with("chrome-extension://");
    (isolated && extension)
        .then(|| aux["frameId"].as_str())
        .flatten()
}

/// A script asking the tab showing `url` (top frame) with `msg`; `null` while there is no such tab.
fn tab_message_script(url: &str, msg: &Value) -> Result<String> {
    let url = serde_json::to_string(url)?;
    Ok(format!(
        "(async () => {{
           const [tab] = await chrome.tabs.query({{ url: {url} }});
           return tab ? await chrome.tabs.sendMessage(tab.id, {msg}, {{ frameId: 0 }}) : null;
         }})()"
    ))
}

impl PageExt for Page {
    async fn run_js<T: DeserializeOwned>(&self, body: &str) -> Result<T> {
        let params = EvaluateParams::builder()
            .expression(format!("(async () => {{ {body} }})()"))
            .await_promise(true)
            .return_by_value(true)
            .build()
            .map_err(|e| anyhow!(e))?;
        let result = self.evaluate_expression(params).await?;
        let value = result.value().cloned().unwrap_or(Value::Null);
        Ok(serde_json::from_value(value)?)
    }

    async fn wait_for(&self, expression: &str, timeout: Duration) -> Result<Value> {
        let deadline = Instant::now() + timeout;
        loop {
            let last = match self
                .run_js::<Value>(&format!("return ({expression});"))
                .await
            {
                Ok(v) if truthy(&v) => return Ok(v),
                Ok(v) => v,
                Err(e) => Value::String(format!("error: {e:#}")),
            };
            if Instant::now() > deadline {
                bail!(
                    "timed out after {timeout:?} waiting for `{expression}` (last value: {last})"
                );
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    async fn eval_in_world(&self, world: ExecutionContextId, expression: &str) -> Result<Value> {
        let params = EvaluateParams::builder()
            .expression(expression)
            .context_id(world)
            .return_by_value(true)
            .build()
            .map_err(|e| anyhow!(e))?;
        let result = self.evaluate_expression(params).await?;
        Ok(result.value().cloned().unwrap_or(Value::Null))
    }

    async fn tab_message(&self, url: &str, msg: &Value) -> Result<Value> {
        self.run_js(&format!("return await {};", tab_message_script(url, msg)?))
            .await
    }

    async fn tab_message_when_ready(&self, url: &str, msg: &Value) -> Result<Value> {
        self.wait_for(&tab_message_script(url, msg)?, super::WAIT)
            .await
    }

    async fn text_of(&self, selector: &str) -> Result<String> {
        let sel = serde_json::to_string(selector)?;
        self.run_js(&format!(
            "return document.querySelector({sel})?.textContent ?? '';"
        ))
        .await
    }
}

fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        _ => true,
    }
}
