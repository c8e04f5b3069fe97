//! Fixture sites on loopback.
//!
//! Files under the fixture directory are served as they are; a sibling file
//! `<name>.headers` adds response headers (one `Name: value` per line), so a
//! page with a strict CSP is just two files. `/node_modules/…` serves the npm
//! packages installed in `tools/` (React for the fixture app). Tests add dynamic routes (form
//! endpoints that record what they received) through the extra router.

use std::net::SocketAddr;
use std::path::{Component, Path, PathBuf};

use anyhow::{Context, Result};
use axum::body::Body;
use axum::http::{HeaderName, HeaderValue, Response, StatusCode, Uri};
use axum::Router;
use tokio::task::JoinHandle;

/// The same fixtures on two loopback ports: two origins, for cross-origin frames.
pub struct FixtureServer {
    pub addr: SocketAddr,
    pub other_addr: SocketAddr,
    tasks: Vec<JoinHandle<()>>,
}

impl FixtureServer {
    pub async fn start(dir: PathBuf, extra: Router) -> Result<Self> {
        let app = extra.fallback(move |uri: Uri| serve_file(dir.clone(), uri));
        let mut addrs = Vec::new();
        let mut tasks = Vec::new();
        for _ in 0..2 {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .context("binding a loopback port for fixtures")?;
            addrs.push(listener.local_addr()?);
            let app = app.clone();
            tasks.push(tokio::spawn(async move {
                let _ = axum::serve(listener, app).await;
            }));
        }
        Ok(Self {
            addr: addrs[0],
            other_addr: addrs[1],
            tasks,
        })
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}/{}", self.addr, path.trim_start_matches('/'))
    }

    /// The same path on the second port: another origin than `url`'s.
    pub fn other_origin_url(&self, path: &str) -> String {
        format!(
            "http://{}/{}",
            self.other_addr,
            path.trim_start_matches('/')
        )
    }
}

impl Drop for FixtureServer {
    fn drop(&mut self) {
        self.tasks.iter().for_each(JoinHandle::abort);
    }
}

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("js" | "mjs") => "text/javascript",
        Some("css") => "text/css",
        Some("json") => "application/json",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        _ => "application/octet-stream",
    }
}

async fn serve_file(dir: PathBuf, uri: Uri) -> Response<Body> {
    let rel = uri.path().trim_start_matches('/');
    let rel = if rel.is_empty() { "index.html" } else { rel };
    let rel_path = Path::new(rel);
    if rel_path
        .components()
        .any(|c| !matches!(c, Component::Normal(_)))
    {
        return status(StatusCode::BAD_REQUEST);
    }
    // Fixture apps load libraries installed from npm (React) under /node_modules/.
    let path = match rel_path.strip_prefix("node_modules") {
        Ok(inside) => super::workspace_root()
            .join("tools/node_modules")
            .join(inside),
        Err(_) => dir.join(rel_path),
    };
    let Ok(bytes) = tokio::fs::read(&path).await else {
        return status(StatusCode::NOT_FOUND);
    };
    let mut response = Response::new(Body::from(bytes));
    response.headers_mut().insert(
        "content-type",
        HeaderValue::from_static(content_type(&path)),
    );
    let headers_file = path.with_file_name(format!(
        "{}.headers",
        path.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
    ));
    if let Ok(text) = tokio::fs::read_to_string(headers_file).await {
        for line in text.lines() {
            if let Some((name, value)) = line.split_once(':') {
                if let (Ok(n), Ok(v)) = (
                    HeaderName::try_from(name.trim()),
                    HeaderValue::try_from(value.trim()),
                ) {
                    response.headers_mut().insert(n, v);
                }
            }
        }
    }
    response
}

fn status(code: StatusCode) -> Response<Body> {
    let mut r = Response::new(Body::from(code.to_string()));
    *r.status_mut() = code;
    r
}
