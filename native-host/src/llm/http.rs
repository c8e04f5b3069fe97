//! What the HTTP backends share: a base URL, a client with a connect timeout, and sending a
//! request so that a dead server, a slow one and a broken connection are told apart.

use super::{LlmError, Timeouts};

/// One model server's address and client.
pub struct Endpoint {
    pub backend: &'static str,
    /// What to do when the server cannot be reached.
    hint: &'static str,
    base: reqwest::Url,
    pub client: reqwest::Client,
    pub timeouts: Timeouts,
}

impl Endpoint {
    pub fn new(
        base_url: &str,
        timeouts: Timeouts,
        backend: &'static str,
        hint: &'static str,
    ) -> Result<Self, LlmError> {
        let mut base = reqwest::Url::parse(base_url).map_err(|e| LlmError::Unreachable {
            backend,
            url: base_url.to_owned(),
            detail: format!("not a URL ({e})"),
            hint,
        })?;
        // Paths are joined onto it: without the slash, its last segment would be replaced.
        if !base.path().ends_with('/') {
            let path = format!("{}/", base.path());
            base.set_path(&path);
        }
        let client = reqwest::Client::builder()
            .connect_timeout(timeouts.connect)
            .build()
            .map_err(|e| LlmError::Protocol {
                backend,
                detail: format!("cannot create an HTTP client: {e}"),
            })?;
        Ok(Self {
            backend,
            hint,
            base,
            client,
            timeouts,
        })
    }

    pub fn base(&self) -> &reqwest::Url {
        &self.base
    }

    /// `path` relative to the base URL.
    pub fn url(&self, path: &str) -> reqwest::Url {
        self.base.join(path).expect("a relative path joins")
    }

    /// The server is not there (connection refused, no such host).
    pub fn unreachable(&self, e: &reqwest::Error) -> LlmError {
        LlmError::Unreachable {
            backend: self.backend,
            url: self.base.to_string(),
            detail: error_chain(e),
            hint: self.hint,
        }
    }

    /// Sends `builder`, waiting at most the response timeout for the reply to start. The status
    /// is the caller's to judge: error bodies differ between servers.
    pub async fn send(
        &self,
        builder: reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, LlmError> {
        tokio::time::timeout(self.timeouts.response, builder.send())
            .await
            .map_err(|_| LlmError::Timeout(self.timeouts.response))?
            .map_err(|e| {
                if e.is_connect() {
                    self.unreachable(&e)
                } else {
                    LlmError::Protocol {
                        backend: self.backend,
                        detail: error_chain(&e),
                    }
                }
            })
    }
}

/// The error and its causes (reqwest hides "connection refused" two levels down).
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        s.push_str(": ");
        s.push_str(&cause.to_string());
        source = cause.source();
    }
    s
}
