//! Streamed replies arrive as lines (Ollama's NDJSON, the OpenAI API's server-sent events)
//! cut into network chunks anywhere, even inside a character: lines are split out of bytes,
//! and only whole lines are decoded as UTF-8.

use std::time::Duration;

use futures::StreamExt;

use super::LlmError;

/// Reads a response body line by line, waiting at most `idle` for each chunk.
pub struct Lines {
    body: futures::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    buffer: Vec<u8>,
    idle: Duration,
    done: bool,
    backend: &'static str,
}

impl Lines {
    pub fn new(response: reqwest::Response, idle: Duration, backend: &'static str) -> Self {
        Self {
            body: response.bytes_stream().boxed(),
            buffer: Vec::new(),
            idle,
            done: false,
            backend,
        }
    }

    /// The next non-empty line, or `None` at the end of the body.
    pub async fn next(&mut self) -> Result<Option<String>, LlmError> {
        loop {
            if let Some(line) = self.take_line()? {
                if line.trim().is_empty() {
                    continue;
                }
                return Ok(Some(line));
            }
            if self.done {
                if self.buffer.iter().all(u8::is_ascii_whitespace) {
                    return Ok(None);
                }
                // A last line without its newline.
                let rest = std::mem::take(&mut self.buffer);
                return self.decode(rest).map(Some);
            }
            match tokio::time::timeout(self.idle, self.body.next()).await {
                Err(_) => return Err(LlmError::Timeout(self.idle)),
                Ok(None) => self.done = true,
                Ok(Some(Ok(chunk))) => self.buffer.extend_from_slice(&chunk),
                Ok(Some(Err(e))) => {
                    return Err(LlmError::Protocol {
                        backend: self.backend,
                        detail: format!("the reply stream broke off: {e}"),
                    })
                }
            }
        }
    }

    fn take_line(&mut self) -> Result<Option<String>, LlmError> {
        let Some(end) = self.buffer.iter().position(|&b| b == b'\n') else {
            return Ok(None);
        };
        let mut line: Vec<u8> = self.buffer.drain(..=end).collect();
        line.pop();
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        self.decode(line).map(Some)
    }

    fn decode(&self, line: Vec<u8>) -> Result<String, LlmError> {
        String::from_utf8(line).map_err(|e| LlmError::Protocol {
            backend: self.backend,
            detail: format!("a line of the reply is not UTF-8: {e}"),
        })
    }
}
