//! The task gym: everyday web tasks in families, each task generated from a seed (values,
//! labels, order, layout, distractors all vary), served on loopback, with a success check that
//! reads what the site was sent (or, for a question, whether the answer holds the value the
//! page showed) — never the agent's claim that it is done.
//!
//! A task lives under `/gym/{id}/`: its pages come from its [`Spec`]'s site function, every
//! request it gets is logged (`Hit`), and [`Gym::check`] runs the spec's check over the log.
//! `families/` holds the families, one theme a file; `page.rs` the page chrome that varies
//! with the seed; `clutter.rs` what real sites add around a task, when asked for;
//! `runner.rs` runs a task through the real panel, host and browser.
//!
//! Seeds below [`HELD_OUT`] are for development; from it on they are held apart and only
//! reported (`cargo bench --bench gym -- --held-out`).

mod clutter;
mod families;
mod page;
pub mod runner;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::extract::{Path, RawQuery, Request};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::any;
use axum::Router;

pub use families::{family, FAMILIES};

/// The first held-apart seed.
pub const HELD_OUT: u64 = 1_000;

/// A request a task's site received.
#[derive(Debug, Clone)]
pub struct Hit {
    pub post: bool,
    /// Below the task's root, without a leading slash (`""` for the start page).
    pub path: String,
    /// Query and form fields together, in order.
    pub params: Vec<(String, String)>,
}

impl Hit {
    pub fn get(&self, key: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
    pub fn all(&self, key: &str) -> Vec<&str> {
        self.params
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
            .collect()
    }
}

/// What a task's site answers.
pub enum Reply {
    Page(String),
    /// To another path of the same task.
    Redirect(String),
    NotFound,
}

pub(crate) type Site = Box<dyn Fn(&Hit) -> Reply + Send + Sync>;
type Check = Box<dyn Fn(&[Hit], &str) -> bool + Send + Sync>;

/// One generated task.
pub struct Spec {
    pub goal: String,
    /// The page the task starts on, below the task's root.
    pub start: String,
    pub site: Site,
    /// Whether the task succeeded, from the site's log and the run's final answer.
    pub check: Check,
}

/// A family of tasks: one kind of everyday task, in endless seeded variations.
pub struct Family {
    pub name: &'static str,
    pub build: fn(&mut fastrand::Rng) -> Spec,
}

/// A task as the runner sees it.
#[derive(Debug, Clone)]
pub struct TaskRef {
    pub id: u32,
    pub family: &'static str,
    pub seed: u64,
    pub goal: String,
    /// The start page, below the server's root (`gym/3/`).
    pub start: String,
}

struct Live {
    spec: Spec,
    hits: Vec<Hit>,
}

/// The gym's server state: the tasks made so far, each with its log.
#[derive(Clone, Default)]
pub struct Gym {
    tasks: Arc<Mutex<HashMap<u32, Live>>>,
    clutter: bool,
}

impl Gym {
    pub fn new() -> Self {
        Self::default()
    }

    /// Every page served with what real sites add around a task (`clutter.rs`).
    pub fn cluttered(mut self, on: bool) -> Self {
        self.clutter = on;
        self
    }

    /// Makes the task of `family` for `seed`; the same seed makes the same task.
    pub fn add(&self, family: &Family, seed: u64) -> TaskRef {
        let mut rng = fastrand::Rng::with_seed(seed.wrapping_mul(0x9e37_79b9) ^ hash(family.name));
        let spec = (family.build)(&mut rng);
        let mut tasks = self.tasks.lock().unwrap();
        let id = tasks.len() as u32 + 1;
        let task = TaskRef {
            id,
            family: family.name,
            seed,
            goal: spec.goal.clone(),
            start: format!("gym/{id}/{}", spec.start),
        };
        tasks.insert(
            id,
            Live {
                spec,
                hits: Vec::new(),
            },
        );
        task
    }

    /// Whether task `id` succeeded, given the run's final answer.
    pub fn check(&self, id: u32, answer: &str) -> bool {
        let tasks = self.tasks.lock().unwrap();
        tasks
            .get(&id)
            .is_some_and(|t| (t.spec.check)(&t.hits, answer))
    }

    /// What task `id`'s site received.
    pub fn hits(&self, id: u32) -> Vec<Hit> {
        let tasks = self.tasks.lock().unwrap();
        tasks.get(&id).map(|t| t.hits.clone()).unwrap_or_default()
    }

    pub fn router(&self) -> Router {
        let gym = self.clone();
        let root = self.clone();
        Router::new()
            .route(
                "/gym/{id}/{*rest}",
                any(
                    move |Path((id, rest)): Path<(u32, String)>, q: RawQuery, req: Request| {
                        let gym = gym.clone();
                        async move { gym.serve(id, rest, q, req).await }
                    },
                ),
            )
            .route(
                "/gym/{id}/",
                any(move |Path(id): Path<u32>, q: RawQuery, req: Request| {
                    let gym = root.clone();
                    async move { gym.serve(id, String::new(), q, req).await }
                }),
            )
    }

    async fn serve(
        &self,
        id: u32,
        path: String,
        RawQuery(query): RawQuery,
        req: Request,
    ) -> Response {
        let post = req.method() == axum::http::Method::POST;
        let mut params: Vec<(String, String)> =
            query.as_deref().map(form_urlencoded).unwrap_or_default();
        if post {
            let body = axum::body::to_bytes(req.into_body(), 1 << 20)
                .await
                .unwrap_or_default();
            params.extend(form_urlencoded(&String::from_utf8_lossy(&body)));
        }
        let hit = Hit { post, path, params };
        let reply = {
            let mut tasks = self.tasks.lock().unwrap();
            let Some(task) = tasks.get_mut(&id) else {
                return (axum::http::StatusCode::NOT_FOUND, "no such task").into_response();
            };
            task.hits.push(hit.clone());
            (task.spec.site)(&hit)
        };
        match reply {
            Reply::Page(html) if self.clutter => Html(clutter::around(&html)).into_response(),
            Reply::Page(html) => Html(html).into_response(),
            Reply::Redirect(to) => Redirect::to(&format!("/gym/{id}/{to}")).into_response(),
            Reply::NotFound => (axum::http::StatusCode::NOT_FOUND, "not found").into_response(),
        }
    }
}

fn form_urlencoded(s: &str) -> Vec<(String, String)> {
    s.split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let decode = |x: &str| {
                percent_encoding::percent_decode_str(&x.replace('+', " "))
                    .decode_utf8_lossy()
                    .into_owned()
            };
            (decode(k), decode(v))
        })
        .collect()
}

fn hash(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// Whether `answer` states `value` (case, spacing and a currency sign aside).
pub fn answer_holds(answer: &str, value: &str) -> bool {
    let norm = |s: &str| {
        s.to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == '.' || *c == ',')
            .collect::<String>()
    };
    norm(answer).contains(&norm(value))
}
