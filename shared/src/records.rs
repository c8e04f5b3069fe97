//! What the host keeps in its store and the side panel shows: settings, the run history with
//! each run's steps, lessons, and the sites where a kind of risky action is always allowed.
//!
//! These types are written to SQLite by the host and sent to the panel as they are, so the
//! history the panel shows is exactly what was recorded. Nothing here ever holds a secret.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// When the planner breaks a goal into sub-goals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanMode {
    Off,
    /// Goals that chain several parts, or long ones.
    #[default]
    Auto,
    Always,
}

/// When a step's action is decided by a majority of samples rather than by one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VoteMode {
    #[default]
    Off,
    /// When the first answer looks unsure (it had to be re-asked, or was not clean JSON).
    Unsure,
    Always,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    Succeeded,
    Failed,
    Stopped,
    StepLimit,
}

impl TaskStatus {
    /// How the panel, the CLI and the MCP server head a task's answer.
    pub fn heading(self) -> &'static str {
        match self {
            TaskStatus::Succeeded => "Done",
            TaskStatus::Failed => "Failed",
            TaskStatus::Stopped => "Stopped",
            TaskStatus::StepLimit => "Step limit reached",
        }
    }
}

// ---- settings ----

/// The user's settings, kept by the host. Every field has a default, so settings written by an
/// older or newer host (a field missing, an unknown field) still read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    pub backend: BackendChoice,
    /// The model to ask; `None` lets the backend choose (Ollama: its first model).
    pub model: Option<String>,
    /// The OpenAI-compatible server's API base, e.g. `http://127.0.0.1:8080/v1`. Its key is a
    /// secret and is never kept here.
    pub openai_url: Option<String>,
    /// Where the built-in engine runs.
    pub device: EngineDevice,
    /// Steps a task may take before it stops with `step_limit`.
    pub max_steps: u32,
    pub approval: ApprovalPolicy,
    /// Whether long goals are broken into sub-goals first.
    pub plan: PlanMode,
    /// Whether several samples vote on a step, and how many (the first included).
    pub vote: VoteMode,
    pub vote_samples: u32,
    /// Other models of the same backend that vote alongside the task's model; empty: samples of
    /// the task's model vote.
    pub vote_models: Vec<String>,
    /// Whether the model may learn the username auto-login signed in as ("signed in to … as
    /// alice"); off, it learns only the site.
    pub sign_in_names_user: bool,
    /// Whether a run keeps a picture of the page after each step for its report.
    pub keep_pictures: bool,
}

impl Settings {
    /// The step limit a new host starts with.
    pub const DEFAULT_MAX_STEPS: u32 = 30;
    /// The most steps a task may be allowed; a run's history must fit in one reply to the panel.
    pub const MAX_MAX_STEPS: u32 = 200;
    /// Voters when voting is on.
    pub const DEFAULT_VOTERS: u32 = 3;
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            backend: BackendChoice::Auto,
            model: None,
            openai_url: None,
            device: EngineDevice::Auto,
            max_steps: Self::DEFAULT_MAX_STEPS,
            approval: ApprovalPolicy::AskRisky,
            plan: PlanMode::Auto,
            vote: VoteMode::Off,
            vote_samples: Self::DEFAULT_VOTERS,
            vote_models: Vec::new(),
            sign_in_names_user: false,
            keep_pictures: true,
        }
    }
}

/// Which model backend runs tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BackendChoice {
    /// What `ITINERO_BACKEND` names; else Ollama when it runs and has a model, and the built-in
    /// engine with its default model when not.
    #[default]
    Auto,
    Ollama,
    /// An OpenAI-compatible server at [`Settings::openai_url`].
    #[serde(rename = "openai")]
    OpenAi,
    /// The built-in engine: the model runs in the host (on the GPU, or the CPU), no server
    /// needed.
    Wgpu,
}

/// Where the built-in engine runs its model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EngineDevice {
    /// What `ITINERO_DEVICE` names; else a real GPU where there is one, and the CPU otherwise
    /// (also where the only GPU adapter is a software one, such as lavapipe).
    #[default]
    Auto,
    Cpu,
    Gpu,
}

impl EngineDevice {
    /// The name `ITINERO_DEVICE` and `--device` use; `None` for `Auto`.
    pub fn name(self) -> Option<&'static str> {
        match self {
            EngineDevice::Auto => None,
            EngineDevice::Cpu => Some("cpu"),
            EngineDevice::Gpu => Some("gpu"),
        }
    }
}

impl BackendChoice {
    /// The name `StartTask`'s options and `ITINERO_BACKEND` use; `None` for `Auto`.
    pub fn task_backend(self) -> Option<&'static str> {
        match self {
            BackendChoice::Auto => None,
            BackendChoice::Ollama => Some("ollama"),
            BackendChoice::OpenAi => Some("openai"),
            BackendChoice::Wgpu => Some("wgpu"),
        }
    }
}

/// When the agent asks before it acts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalPolicy {
    /// Risky actions (buy, pay, delete, send, payment or password fields) wait for approval,
    /// unless the user chose "always allow" for that kind of action on that site.
    #[default]
    AskRisky,
    /// Risky actions wait for approval every time; "always allow" is neither offered nor honoured.
    AlwaysAskRisky,
    /// Every action waits for approval (supervised mode).
    AskEveryAction,
}

impl ApprovalPolicy {
    /// Whether a remembered "always allow" for a site lets a risky action run without asking.
    pub fn honours_site_approvals(self) -> bool {
        self == ApprovalPolicy::AskRisky
    }
}

// ---- run history ----

/// A run's id in the store (its SQLite row id).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RunId(pub i64);

impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Where a run stands. A task's end ([`TaskStatus`]) maps onto the finished states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Running,
    Succeeded,
    Failed,
    Stopped,
    StepLimit,
    /// The host ended (crashed, was killed, the computer went off) while the run was going.
    Interrupted,
}

impl RunStatus {
    pub const ALL: [RunStatus; 6] = [
        RunStatus::Running,
        RunStatus::Succeeded,
        RunStatus::Failed,
        RunStatus::Stopped,
        RunStatus::StepLimit,
        RunStatus::Interrupted,
    ];

    /// The word kept in the store and sent on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Succeeded => "succeeded",
            RunStatus::Failed => "failed",
            RunStatus::Stopped => "stopped",
            RunStatus::StepLimit => "step_limit",
            RunStatus::Interrupted => "interrupted",
        }
    }

    /// The status [`RunStatus::as_str`] names.
    pub fn parse(word: &str) -> Option<RunStatus> {
        RunStatus::ALL.into_iter().find(|s| s.as_str() == word)
    }
}

impl fmt::Display for RunStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<TaskStatus> for RunStatus {
    fn from(s: TaskStatus) -> Self {
        match s {
            TaskStatus::Succeeded => RunStatus::Succeeded,
            TaskStatus::Failed => RunStatus::Failed,
            TaskStatus::Stopped => RunStatus::Stopped,
            TaskStatus::StepLimit => RunStatus::StepLimit,
        }
    }
}

/// How the runs of one period (and one site, or all) went: what shows whether itinero gets
/// better with use, as the cache and skills take steps off the model. Times are Unix
/// milliseconds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsagePeriod {
    /// The period's first moment (a day, week or month, UTC).
    pub start: i64,
    /// The site (`scheme://host[:port]`), or `None` for every site together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub site: Option<String>,
    /// Tasks that ended in the period (running ones are not counted yet).
    pub tasks: u32,
    pub succeeded: u32,
    pub model_calls: u64,
    pub steps: StepsBy,
    /// The median time from a task's start to its end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_task_ms: Option<u64>,
}

/// The sites of `periods`, most tasks first (ties by name): the host keeps the busiest in a
/// statistics report, the panel offers them in that order.
pub fn sites_by_tasks(periods: &[UsagePeriod]) -> Vec<String> {
    let mut tasks: Vec<(String, u32)> = Vec::new();
    for p in periods {
        let Some(site) = &p.site else { continue };
        match tasks.iter_mut().find(|(s, _)| s == site) {
            Some((_, n)) => *n += p.tasks,
            None => tasks.push((site.clone(), p.tasks)),
        }
    }
    tasks.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    tasks.into_iter().map(|(s, _)| s).collect()
}

/// Steps by what decided them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepsBy {
    /// A remembered step (the action cache).
    pub cache: u32,
    /// A saved skill's replay.
    pub skill: u32,
    /// What the goal names found on the page, or a moved target found again, with no model.
    pub grounding: u32,
    /// A model's reply (one model, a vote, or the model choosing among candidates).
    pub model: u32,
    /// Sign-in, the user's answers, the guards, a program's own steps.
    pub other: u32,
}

impl StepsBy {
    pub fn total(&self) -> u32 {
        self.cache + self.skill + self.grounding + self.model + self.other
    }

    /// Counts `n` steps decided by `strategy` (the name a step record keeps).
    pub fn count(&mut self, strategy: &str, n: u32) {
        let kind = match strategy {
            "cache" => &mut self.cache,
            "skill" => &mut self.skill,
            "grounded" | "recovery" => &mut self.grounding,
            "llm" | "vote" | "chooser" => &mut self.model,
            _ => &mut self.other,
        };
        *kind += n;
    }

    pub fn add(&mut self, other: &StepsBy) {
        self.cache += other.cache;
        self.skill += other.skill;
        self.grounding += other.grounding;
        self.model += other.model;
        self.other += other.other;
    }
}

/// One run as the history lists it. Times are Unix milliseconds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunSummary {
    pub id: RunId,
    pub goal: String,
    /// The tab's URL when the run started.
    pub start_url: String,
    /// `scheme://host[:port]` of `start_url`; `None` for pages without one (`about:blank`).
    pub origin: Option<String>,
    pub tab_id: Option<i64>,
    /// The backend and model that decided, as the task resolved them (e.g. `ollama`, `qwen2.5:3b`).
    pub backend: String,
    pub model: String,
    pub started_at: i64,
    pub finished_at: Option<i64>,
    pub status: RunStatus,
    pub answer: Option<String>,
    /// How many steps were recorded.
    pub steps: u32,
}

/// One step of a run: where it was, what was decided by whom, what happened, how long it took.
///
/// `action` and `outcome` are kept as JSON (the `Action` and `Outcome` of the protocol) so that
/// history written by an older host still reads when those types grow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct StepRecord {
    /// The step's number in its run, from 1, as the task's events number it.
    pub n: u32,
    /// The page the step was decided on.
    pub url: String,
    /// Hash of the observed page's relevant DOM, for the action cache.
    #[serde(default)]
    pub dom_hash: Option<String>,
    /// The action taken, if one was (a step can end in a question or a refusal).
    #[serde(default)]
    pub action: Option<Value>,
    /// The action in words, e.g. `click [4] "Add to cart"`.
    #[serde(default)]
    pub action_summary: String,
    #[serde(default)]
    pub outcome: Option<Value>,
    /// The outcome in words, e.g. `navigated to https://shop.example/cart`.
    #[serde(default)]
    pub outcome_text: String,
    /// What answered: `llm`, `recovery`, `vote`, `cache`, `skill`, `human`, `guard`.
    #[serde(default)]
    pub strategy: String,
    /// The model's reason, as it gave it.
    #[serde(default)]
    pub thought: String,
    #[serde(default)]
    pub decide_ms: Option<u64>,
    #[serde(default)]
    pub act_ms: Option<u64>,
    #[serde(default)]
    pub total_ms: Option<u64>,
    /// Model calls made to decide it (a plan made before the first step counts with that step).
    #[serde(default)]
    pub model_calls: u32,
    /// The largest prompt among those calls, in tokens as the backend counted them.
    #[serde(default)]
    pub prompt_tokens: Option<u64>,
    /// When it was recorded (Unix milliseconds); set by the store, ignored when recording.
    #[serde(default)]
    pub recorded_at: i64,
}

/// A run with all its steps, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunDetail {
    pub run: RunSummary,
    pub steps: Vec<StepRecord>,
    /// What the run kept of how the page looked after each step, by step number.
    #[serde(default)]
    pub pictures: Vec<StepPicture>,
}

/// The picture after a step: how large the kept JPEG is, or why none was taken (a secret was
/// typed, the tab was not in view, the run's allowance was used up).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepPicture {
    pub n: u32,
    /// The JPEG's size; 0 when there is none.
    pub bytes: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub withheld: Option<String>,
}

impl StepPicture {
    pub fn is_kept(&self) -> bool {
        self.withheld.is_none() && self.bytes > 0
    }
}

// ---- lessons and site approvals ----

/// A lesson's id in the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct LessonId(pub i64);

impl fmt::Display for LessonId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Something the user taught the agent about a site (an answer to its question, say), given to
/// the model on later runs there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lesson {
    pub id: LessonId,
    /// `scheme://host[:port]`.
    pub origin: String,
    pub text: String,
    /// Where it came from, e.g. `ask_human`.
    pub source: String,
    /// The run it was learnt in, while that run is kept.
    pub run_id: Option<RunId>,
    pub created_at: i64,
}

/// "Always allow" for one kind of risky action on one site.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SiteApproval {
    /// `scheme://host[:port]`.
    pub origin: String,
    /// The kind of risk, as the guard names it (e.g. `buy`, `delete`, `payment`).
    pub kind: String,
    pub created_at: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sites_come_busiest_first_and_every_site_once() {
        let site = |s: &str, tasks| UsagePeriod {
            site: Some(s.into()),
            tasks,
            ..Default::default()
        };
        let all = UsagePeriod {
            tasks: 9,
            ..Default::default()
        };
        let periods = [
            site("https://a", 1),
            all,
            site("https://c", 3),
            site("https://b", 2),
            site("https://a", 2),
        ];
        assert_eq!(
            sites_by_tasks(&periods),
            ["https://a", "https://c", "https://b"]
        );
    }

    #[test]
    fn settings_fill_defaults_and_ignore_unknown_fields() {
        let s: Settings = serde_json::from_str(r#"{"model":"qwen2.5:3b","future":1}"#).unwrap();
        assert_eq!(
            s,
            Settings {
                model: Some("qwen2.5:3b".into()),
                ..Settings::default()
            }
        );
        assert_eq!(s.max_steps, 30);
        assert_eq!(s.approval, ApprovalPolicy::AskRisky);
        let json = serde_json::to_value(Settings::default()).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"backend": "auto", "model": null, "openai_url": null,
                "device": "auto", "max_steps": 30, "approval": "ask_risky", "plan": "auto", "vote": "off",
                "vote_samples": 3, "vote_models": [], "sign_in_names_user": false,
                "keep_pictures": true})
        );
    }

    #[test]
    fn run_status_words_round_trip() {
        for s in RunStatus::ALL {
            assert_eq!(RunStatus::parse(s.as_str()), Some(s));
            assert_eq!(
                serde_json::to_value(s).unwrap(),
                Value::String(s.as_str().into())
            );
        }
        assert_eq!(RunStatus::parse("exploded"), None);
        assert_eq!(RunStatus::from(TaskStatus::StepLimit), RunStatus::StepLimit);
    }

    #[test]
    fn backend_names_match_the_task_options() {
        assert_eq!(BackendChoice::OpenAi.task_backend(), Some("openai"));
        assert_eq!(
            serde_json::to_value(BackendChoice::OpenAi).unwrap(),
            "openai"
        );
        assert_eq!(BackendChoice::Auto.task_backend(), None);
        assert_eq!(BackendChoice::Wgpu.task_backend(), Some("wgpu"));
        assert_eq!(serde_json::to_value(BackendChoice::Wgpu).unwrap(), "wgpu");
        assert!(ApprovalPolicy::AskRisky.honours_site_approvals());
        assert!(!ApprovalPolicy::AlwaysAskRisky.honours_site_approvals());
    }
}
