//! Every message of the protocol, in both directions: `ToHost` (the panel's requests, and the
//! browser's replies to the host's own requests) and `ToBrowser`.
//!
//! Each set is declared through one macro that also lists its wire names, so a decoder can
//! tell an unknown type from a bad body, and a request the host declares but does not handle
//! is answered with a typed `not_implemented` error rather than "unknown type". Only the host
//! sends `Observe`, `Perform`, `ListTabs` and `Capture`, under ids from
//! [`crate::envelope::HOST_REQUEST_ID_BASE`]; the browser's `Observation`, `ActionOutcome`,
//! `TabList`, `Captured` or `Error` echo that id. Each store request has one reply type, named on the
//! `ToBrowser` variant that answers it.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::action::Action;
use crate::envelope::MessageSet;
use crate::observation::Observation;
use crate::records::{Lesson, LessonId, RunDetail, RunId, RunSummary, Settings, SiteApproval};
// The task's modes and end states are kept with the records that store them; the messages
// carry them too.
pub use crate::records::{PlanMode, TaskStatus, VoteMode};
use crate::skills::{Skill, SkillId, SkillSummary};
use crate::vault::{AuditEntry, CredentialId, CredentialSummary, ImportReport, VaultStatus};

/// Declares an adjacently tagged message enum together with the list of its wire names.
macro_rules! message_set {
    ($(#[$meta:meta])* pub enum $name:ident { $($(#[$vmeta:meta])* $variant:ident($body:ty),)* }) => {
        $(#[$meta])*
        // Messages are decoded once and moved, not stored in bulk: boxing the large ones buys nothing.
        #[allow(clippy::large_enum_variant)]
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "type", content = "body")]
        pub enum $name { $($(#[$vmeta])* $variant($body),)* }

        impl MessageSet for $name {
            const TYPES: &'static [&'static str] = &[$(stringify!($variant),)*];
            fn type_name(&self) -> &'static str {
                match self { $($name::$variant(_) => stringify!($variant),)* }
            }
        }
    };
}

message_set! {
    /// Messages the extension sends to the native host.
    pub enum ToHost {
        Hello(Hello),
        Ping(Ping),
        StartTask(StartTask),
        StopTask(StopTask),
        Observation(ObservationReport),
        ActionOutcome(ActionOutcomeReport),
        UserReply(UserReply),
        Skills(SkillRequest),
        Vault(VaultRequest),
        GetSettings(GetSettings),
        SetSettings(SetSettings),
        ListRuns(ListRuns),
        GetRun(GetRun),
        DeleteRun(DeleteRun),
        ListLessons(ListLessons),
        DeleteLesson(DeleteLesson),
        ListSiteApprovals(ListSiteApprovals),
        RevokeSiteApproval(RevokeSiteApproval),
        ListModels(ListModels),
        TabList(TabList),
        /// Answers `Capture`.
        Captured(Captured),
        GetStepPicture(GetStepPicture),
        GetStats(GetStats),
        /// The browser could not carry out a host request (see [`crate::envelope::HOST_REQUEST_ID_BASE`]).
        Error(ErrorReply),
    }
}

message_set! {
    /// Messages the native host sends to the extension.
    pub enum ToBrowser {
        HelloAck(HelloAck),
        Pong(Pong),
        Observe(Observe),
        Perform(Perform),
        ListTabs(ListTabs),
        Capture(Capture),
        TaskEvent(TaskEvent),
        AskUser(AskUser),
        TaskFinished(TaskFinished),
        Skills(SkillResponse),
        Vault(VaultResponse),
        /// Answers `GetSettings` and `SetSettings` with the settings as stored.
        Settings(Settings),
        /// Answers `ListRuns`.
        Runs(RunList),
        /// Answers `GetRun`.
        RunDetail(RunDetail),
        /// Answers `ListLessons`.
        Lessons(LessonList),
        /// Answers `ListSiteApprovals`.
        SiteApprovals(SiteApprovalList),
        /// Answers `DeleteRun`, `DeleteLesson` and `RevokeSiteApproval`.
        Deleted(Deleted),
        /// Answers `ListModels`.
        Models(ModelList),
        /// Answers `GetStepPicture`.
        StepPicture(StepPictureData),
        /// Answers `GetStats`.
        Stats(StatsReport),
        Error(ErrorReply),
    }
}

// ---- handshake and diagnostics ----

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hello {
    pub protocol: u32,
    pub extension_version: String,
    /// The browser's user agent, for `doctor` and logs.
    #[serde(default)]
    pub browser: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HelloAck {
    pub protocol: u32,
    pub host_version: String,
    /// Features this host offers, e.g. `"ping"`; the panel hides what is missing.
    pub capabilities: Vec<String>,
    /// Process id, shown in the panel's details so a stuck host can be found.
    pub pid: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ping {
    #[serde(default)]
    pub payload: String,
    /// Whether the reply should carry the payload back (off for large benchmark messages,
    /// since host→browser frames must stay under 1 MiB).
    #[serde(default = "yes")]
    pub echo: bool,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pong {
    pub payload: Option<String>,
    pub received_bytes: u64,
}

// ---- tasks ----

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct TaskOptions {
    pub max_steps: Option<u32>,
    pub backend: Option<String>,
    pub model: Option<String>,
    /// Whether the goal is broken into sub-goals first (default: auto, for long goals).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<PlanMode>,
    /// Whether several samples vote on each step (default: off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vote: Option<VoteMode>,
    /// Voters when voting, the first included (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vote_samples: Option<u32>,
    /// Other models (same backend) that vote alongside the task's model, instead of samples.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vote_models: Vec<String>,
    /// Replay this skill (with these parameter values) instead of asking the model each step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skill: Option<SkillRun>,
    /// Carry out these actions, in order, instead of deciding: a program that names its own
    /// steps (an MCP client) still has each checked by the guards and approved by the user like
    /// a model's, and the task ends after the last or at the first that fails.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<crate::Action>,
}

/// A skill to replay and its parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillRun {
    pub id: crate::skills::SkillId,
    /// `(name, value)` for each of the skill's parameters.
    #[serde(default)]
    pub params: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StartTask {
    pub goal: String,
    pub tab_id: i64,
    #[serde(default)]
    pub options: TaskOptions,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StopTask {
    pub task_id: u64,
}

/// The host's request for a fresh observation of a tab.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Observe {
    pub task_id: u64,
    pub tab_id: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ObservationReport {
    pub task_id: u64,
    pub tab_id: i64,
    pub observation: Observation,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Perform {
    pub task_id: u64,
    pub tab_id: i64,
    /// 0 is the top frame, as in `chrome.webNavigation`.
    pub frame_id: i64,
    pub action: Action,
    /// Set when the action types a saved secret: the page checks the field is what it must be
    /// before typing, whatever the host believed when it sent it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<SecretField>,
}

/// Where a saved secret may be typed: the content script refuses the action (`ValueRejected`)
/// unless the target's own document has this origin, the field is of this kind, and its form
/// sends to this origin or to a host of `site`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SecretField {
    pub origin: String,
    pub kind: crate::vault::SecretKind,
    /// The registrable domain of `origin` (by the public suffix list, which only the host
    /// has), whose other hosts a sign-in form may send to; none for an IP address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub site: Option<String>,
}

/// What happened when an action ran, reported precisely so recovery can act on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Outcome {
    Done,
    Navigated {
        url: String,
    },
    OpenedTab {
        tab_id: i64,
        url: String,
    },
    TargetDetached,
    TargetOccluded {
        by: String,
    },
    ValueRejected {
        reason: String,
    },
    NeverSettled {
        waited_ms: u64,
    },
    /// A scroll that found nothing able to move its way: the page at its end, or too short to
    /// scroll. A person would see the page stay put; the model must not think it moved on.
    NotScrolled {
        why: String,
    },
    Failed {
        reason: String,
    },
}

impl Outcome {
    /// The action did what it was meant to (the page may have moved on).
    pub fn took_effect(&self) -> bool {
        matches!(
            self,
            Outcome::Done
                | Outcome::Navigated { .. }
                | Outcome::OpenedTab { .. }
                | Outcome::NeverSettled { .. }
        )
    }

    /// Its one text, if it has one: what a page may have put there (an address, a reason, what
    /// covers the target), for the host to scrub before anything reads it. Every variant is
    /// named, so a new one with a text cannot be missed.
    pub fn text_mut(&mut self) -> Option<&mut String> {
        match self {
            Outcome::Navigated { url } | Outcome::OpenedTab { url, .. } => Some(url),
            Outcome::TargetOccluded { by } => Some(by),
            Outcome::ValueRejected { reason } | Outcome::Failed { reason } => Some(reason),
            Outcome::NotScrolled { why } => Some(why),
            Outcome::Done | Outcome::TargetDetached | Outcome::NeverSettled { .. } => None,
        }
    }
}

/// One line a person (or the model) reads: the panel's log, the CLI, the model's history.
impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Done => f.write_str("done"),
            Outcome::Navigated { url } => write!(f, "navigated to {url}"),
            Outcome::OpenedTab { tab_id, url } => write!(f, "opened tab {tab_id}: {url}"),
            Outcome::TargetDetached => {
                f.write_str("target detached: the element is gone or means something else now")
            }
            Outcome::TargetOccluded { by } => write!(f, "target covered by {by}"),
            Outcome::ValueRejected { reason } => write!(f, "value rejected: {reason}"),
            Outcome::NeverSettled { waited_ms } => {
                write!(
                    f,
                    "done, but the page never settled (waited {waited_ms} ms)"
                )
            }
            Outcome::NotScrolled { why } => write!(f, "did not scroll: {why}"),
            Outcome::Failed { reason } => write!(f, "failed: {reason}"),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionOutcomeReport {
    pub task_id: u64,
    pub tab_id: i64,
    pub outcome: Outcome,
    pub elapsed_ms: u64,
}

/// The host's request for the browser's open tabs, answered with [`TabList`].
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ListTabs {}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TabList {
    pub tabs: Vec<TabInfo>,
}

/// The host's request for a picture of what a tab shows, answered with [`Captured`]. The
/// browser takes it only while the tab is the one in view in its window and shows a web page
/// (never the extension's own pages), so a picture never shows another tab or the vault.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capture {
    pub task_id: u64,
    pub tab_id: i64,
    /// The largest JPEG the host keeps; the browser lowers the quality to fit it.
    pub max_bytes: u32,
}

/// A tab's picture: a JPEG, base64 (standard alphabet, padded) as a data URL carries it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Captured {
    pub tab_id: i64,
    pub jpeg_base64: String,
}

/// One tab, as `chrome.tabs` describes it; enough for a person or the agent to pick one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TabInfo {
    pub tab_id: i64,
    pub window_id: i64,
    /// The committed URL, or the pending one while the first load is under way.
    pub url: String,
    #[serde(default)]
    pub title: String,
    /// The selected tab of its window.
    #[serde(default)]
    pub active: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskEvent {
    pub task_id: u64,
    pub step: u32,
    #[serde(flatten)]
    pub kind: TaskEventKind,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
#[allow(clippy::large_enum_variant)] // one event per step, sent once: not worth a box
pub enum TaskEventKind {
    Started {
        goal: String,
        /// The model that decides and where it runs, where there is one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
    },
    Observed {
        summary: String,
    },
    Decided {
        action: Action,
        reason: String,
        source: String,
    },
    Acted {
        outcome: Outcome,
        elapsed_ms: u64,
    },
    Note {
        text: String,
    },
    /// The goal broken into sub-goals; sent when planned and again whenever one is done.
    Plan {
        subgoals: Vec<Subgoal>,
    },
    /// How far a long wait inside a step has got (a model downloading or loading, a long
    /// prompt being read): the panel shows a bar until the step's decision. `total` 0: no
    /// measure, the bar only says that work goes on. Never stored with the run.
    Progress {
        label: String,
        done: u64,
        total: u64,
    },
}

/// One part of a long goal, shown in the panel and ticked off as the run goes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Subgoal {
    pub text: String,
    #[serde(default)]
    pub done: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AskUser {
    pub task_id: u64,
    pub question_id: u64,
    pub question: String,
    /// `"question"` for free text, `"approval"` for a yes/no on a risky action.
    pub kind: String,
    /// For an approval: the user may answer `"always"`, remembered for this kind of action on
    /// this site (the approval policy allows it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub can_always: bool,
    /// The question is the model's (a page can steer what a model asks): the panel says so, and
    /// offers to remember the answer for the site rather than remembering it unasked.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub from_model: bool,
    /// The program that started the task (an MCP client), when not the panel: the question
    /// is the user's to answer in the panel, never the program's, and the panel says whose
    /// task asks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_by: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserReply {
    pub task_id: u64,
    pub question_id: u64,
    pub reply: String,
    /// The user asked for the answer to be kept as a lesson for the site.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub remember: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskFinished {
    pub task_id: u64,
    pub status: TaskStatus,
    pub answer: Option<String>,
    /// The run as the store keeps it (for "Save as skill"); `None` without a store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<RunId>,
}

// ---- skills, vault: request/response families filled in by later features ----

/// The panel's requests about skills; each is answered with a [`SkillResponse`] or an `Error`.
/// A skill is run with `StartTask` and [`TaskOptions::skill`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum SkillRequest {
    /// The library, filtered by words of the name, description, goal or site.
    List {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        search: Option<String>,
    },
    Get {
        id: SkillId,
    },
    /// Captures a succeeded run as a new skill.
    Save {
        run_id: RunId,
        name: String,
        #[serde(default)]
        description: String,
    },
    Rename {
        id: SkillId,
        name: String,
        #[serde(default)]
        description: String,
    },
    /// Renames a parameter everywhere it is used.
    RenameParam {
        id: SkillId,
        from: String,
        to: String,
    },
    /// Puts a parameter's example value back everywhere: it is no longer asked for.
    Unparameterise {
        id: SkillId,
        name: String,
    },
    Delete {
        id: SkillId,
    },
    Export {
        id: SkillId,
        format: SkillFormat,
        /// Values for the parameters (the Playwright script needs them).
        #[serde(default)]
        params: Vec<(String, String)>,
    },
    /// A skill's JSON (kept as a skill) or a Markdown playbook (kept as a hint for its site).
    Import {
        text: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkillFormat {
    Markdown,
    Json,
    Playwright,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[allow(clippy::large_enum_variant)] // one reply per request, moved once: not worth a box
pub enum SkillResponse {
    List {
        skills: Vec<SkillSummary>,
    },
    /// Answers `Get`, `Save`, `Rename`, `RenameParam` and `Unparameterise`.
    Skill {
        summary: SkillSummary,
        skill: Skill,
    },
    Deleted {
        existed: bool,
    },
    Exported {
        /// A file name for the download, e.g. `search-the-shop.spec.js`.
        file_name: String,
        text: String,
    },
    /// What an import kept, in words.
    Imported {
        what: String,
    },
}

/// The panel's requests about the vault; each is answered with a [`VaultResponse`] or an
/// `Error`. Passwords travel only browser→host inside `Add`, API keys only inside `SetApiKey`;
/// a response carries a password only for `Reveal`, which the panel sends after the user asked
/// and confirmed, and never an API key. Its `Debug` leaves every
/// secret out, so that no log line or panic message can hold one.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum VaultRequest {
    Status,
    /// A page of the credentials, without secrets (works while locked): `limit` of them (at
    /// most [`VaultRequest::LIST_MAX`]) from `offset`, so a reply fits in one frame however
    /// many there are.
    List {
        #[serde(default)]
        offset: u32,
        #[serde(default = "VaultRequest::list_page")]
        limit: u32,
    },
    /// Saves a credential (replacing the one for the same origin and username).
    Add {
        origin: String,
        username: String,
        password: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        totp_seed: Option<String>,
        #[serde(default)]
        notes: String,
        #[serde(default)]
        same_site: bool,
        #[serde(default)]
        allow_http: bool,
    },
    Remove {
        id: CredentialId,
    },
    /// The password (and the current TOTP code), for the user's eyes only, on the vault's
    /// passphrase: whoever can start the host cannot read a password without knowing it.
    Reveal {
        id: CredentialId,
        #[serde(default)]
        passphrase: String,
    },
    /// Unlocks with the passphrase; creates the vault with it when there is none yet.
    Unlock {
        passphrase: String,
    },
    Lock,
    /// A CSV export of Bitwarden, KeePassXC or Chrome.
    Import {
        csv: String,
    },
    /// The latest fills and refusals, newest first.
    Audit {
        limit: u32,
    },
    /// Seals `key` as the API key of the OpenAI-compatible server at `server` (its address as
    /// the settings have it; the vault keeps it for the address's origin, so `/v1` or a trailing
    /// slash names the same server). Needs the vault unlocked; answered with `ApiKeySaved`.
    SetApiKey {
        server: String,
        key: String,
    },
    /// Forgets the API key of the server at `server` (works while locked); answered with
    /// `ApiKeyRemoved`. Which servers have a key is in every `Status`.
    RemoveApiKey {
        server: String,
    },
}

/// Its `Debug` leaves the revealed password and code out.
impl VaultRequest {
    /// Credentials a page lists when the request does not say.
    pub const LIST_PAGE: u32 = 500;
    /// The most a page lists: a credential's summary is well under 200 bytes, so this keeps a
    /// reply far below the 1 MiB frame.
    pub const LIST_MAX: u32 = 1000;

    fn list_page() -> u32 {
        Self::LIST_PAGE
    }
}

#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum VaultResponse {
    /// Answers `Status`, `Unlock` and `Lock`.
    Status {
        status: VaultStatus,
    },
    /// A page of the credentials: those from `offset`, of `total`.
    Credentials {
        credentials: Vec<CredentialSummary>,
        #[serde(default)]
        offset: u32,
        #[serde(default)]
        total: u32,
    },
    Saved {
        credential: CredentialSummary,
    },
    Removed {
        existed: bool,
    },
    Revealed {
        password: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        totp_code: Option<String>,
    },
    Imported {
        report: ImportReport,
    },
    Audit {
        entries: Vec<AuditEntry>,
    },
    /// The key is kept for `server` (the origin it was saved under); never the key itself.
    ApiKeySaved {
        server: String,
    },
    ApiKeyRemoved {
        server: String,
        existed: bool,
    },
}

/// What `Debug` shows in place of a secret.
const HIDDEN: &str = "<hidden>";

impl fmt::Debug for VaultRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VaultRequest::Status => f.write_str("Status"),
            VaultRequest::List { offset, limit } => f
                .debug_struct("List")
                .field("offset", offset)
                .field("limit", limit)
                .finish(),
            VaultRequest::Add {
                origin,
                username,
                totp_seed,
                same_site,
                allow_http,
                ..
            } => f
                .debug_struct("Add")
                .field("origin", origin)
                .field("username", username)
                .field("password", &HIDDEN)
                .field("totp_seed", &totp_seed.as_ref().map(|_| HIDDEN))
                .field("notes", &HIDDEN)
                .field("same_site", same_site)
                .field("allow_http", allow_http)
                .finish(),
            VaultRequest::Remove { id } => f.debug_struct("Remove").field("id", id).finish(),
            VaultRequest::Reveal { id, .. } => f.debug_struct("Reveal").field("id", id).finish(),
            VaultRequest::Unlock { .. } => f
                .debug_struct("Unlock")
                .field("passphrase", &HIDDEN)
                .finish(),
            VaultRequest::Lock => f.write_str("Lock"),
            VaultRequest::Import { csv } => f
                .debug_struct("Import")
                .field("csv_bytes", &csv.len())
                .finish(),
            VaultRequest::Audit { limit } => f.debug_struct("Audit").field("limit", limit).finish(),
            VaultRequest::SetApiKey { server, .. } => f
                .debug_struct("SetApiKey")
                .field("server", server)
                .field("key", &HIDDEN)
                .finish(),
            VaultRequest::RemoveApiKey { server } => f
                .debug_struct("RemoveApiKey")
                .field("server", server)
                .finish(),
        }
    }
}

impl fmt::Debug for VaultResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VaultResponse::Status { status } => {
                f.debug_struct("Status").field("status", status).finish()
            }
            VaultResponse::Credentials {
                credentials,
                offset,
                total,
            } => f
                .debug_struct("Credentials")
                .field("credentials", credentials)
                .field("offset", offset)
                .field("total", total)
                .finish(),
            VaultResponse::Saved { credential } => f
                .debug_struct("Saved")
                .field("credential", credential)
                .finish(),
            VaultResponse::Removed { existed } => {
                f.debug_struct("Removed").field("existed", existed).finish()
            }
            VaultResponse::Revealed { totp_code, .. } => f
                .debug_struct("Revealed")
                .field("password", &HIDDEN)
                .field("totp_code", &totp_code.as_ref().map(|_| HIDDEN))
                .finish(),
            VaultResponse::Imported { report } => {
                f.debug_struct("Imported").field("report", report).finish()
            }
            VaultResponse::Audit { entries } => {
                f.debug_struct("Audit").field("entries", entries).finish()
            }
            VaultResponse::ApiKeySaved { server } => f
                .debug_struct("ApiKeySaved")
                .field("server", server)
                .finish(),
            VaultResponse::ApiKeyRemoved { server, existed } => f
                .debug_struct("ApiKeyRemoved")
                .field("server", server)
                .field("existed", existed)
                .finish(),
        }
    }
}

// ---- the store: settings, run history, lessons, site approvals (see `records`) ----

/// Asks for the settings; answered with `Settings`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GetSettings {}

/// Replaces the settings; answered with `Settings` as stored, or `Error{bad_body}` when a value
/// is out of range.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetSettings {
    pub settings: Settings,
}

/// Asks for the latest runs, newest first; answered with `Runs`. A reply that would not fit in
/// one frame (1 MiB) keeps the newest that do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListRuns {
    #[serde(default = "ListRuns::default_limit")]
    pub limit: u32,
}

impl ListRuns {
    pub const DEFAULT_LIMIT: u32 = 50;
    /// More is cut to this, so the reply stays under the 1 MiB frame limit.
    pub const MAX_LIMIT: u32 = 500;
    fn default_limit() -> u32 {
        Self::DEFAULT_LIMIT
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunList {
    pub runs: Vec<RunSummary>,
}

/// Asks for one run with its steps; answered with `RunDetail`, or `Error{not_found}`. A run too
/// large for one frame comes with its steps' long texts shortened (ending in `…`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GetRun {
    pub run_id: RunId,
}

/// Asks for the picture kept after a step of a run; answered with `StepPicture`, or
/// `Error{not_found}` when there is none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GetStepPicture {
    pub run_id: RunId,
    pub n: u32,
}

/// The JPEG kept after step `n` of a run, base64 (a picture is capped well under the frame
/// limit).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepPictureData {
    pub run_id: RunId,
    pub n: u32,
    pub jpeg_base64: String,
}

/// How long each period of the statistics is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StatsBy {
    Day,
    #[default]
    Week,
    Month,
}

/// Asks how the runs of the last `days` days went, per period; answered with `Stats`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GetStats {
    #[serde(default = "GetStats::default_days")]
    pub days: u32,
    #[serde(default)]
    pub by: StatsBy,
}

impl GetStats {
    pub const DEFAULT_DAYS: u32 = 84;
    /// More is cut to this (a year and a bit).
    pub const MAX_DAYS: u32 = 400;
    fn default_days() -> u32 {
        Self::DEFAULT_DAYS
    }
}

/// The statistics: every period for all sites together (`site` none) and for the sites with
/// the most tasks (at most [`StatsReport::MAX_SITES`]), oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatsReport {
    pub by: StatsBy,
    pub periods: Vec<crate::records::UsagePeriod>,
}

impl StatsReport {
    pub const MAX_SITES: usize = 20;
}

/// Deletes a run and its steps; answered with `Deleted`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeleteRun {
    pub run_id: RunId,
}

/// Asks for lessons, newest first: one site's (`origin` is a URL or an origin) or every site's.
/// Answered with `Lessons`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListLessons {
    #[serde(default)]
    pub origin: Option<String>,
    #[serde(default = "ListLessons::default_limit")]
    pub limit: u32,
}

impl ListLessons {
    pub const DEFAULT_LIMIT: u32 = 200;
    /// More is cut to this, so the reply stays under the 1 MiB frame limit.
    pub const MAX_LIMIT: u32 = 1000;
    fn default_limit() -> u32 {
        Self::DEFAULT_LIMIT
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LessonList {
    pub lessons: Vec<Lesson>,
}

/// Deletes a lesson; answered with `Deleted`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeleteLesson {
    pub lesson_id: LessonId,
}

/// Asks for every "always allow"; answered with `SiteApprovals`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ListSiteApprovals {}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SiteApprovalList {
    pub approvals: Vec<SiteApproval>,
}

/// Withdraws an "always allow"; answered with `Deleted`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RevokeSiteApproval {
    pub origin: String,
    pub kind: String,
}

/// The models a backend offers, for the settings page's model field. Without `backend`, the
/// one the settings name (Ollama for `auto`); without `openai_url`, the settings' URL.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ListModels {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<crate::records::BackendChoice>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub openai_url: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelList {
    /// The backend asked, e.g. `ollama`.
    pub backend: String,
    /// Model names as the backend lists them.
    pub models: Vec<String>,
}

/// The answer to a deletion. Deleting what is not there is not an error: `existed` says which.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deleted {
    pub existed: bool,
}

// ---- errors ----

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The bytes were not JSON, or the envelope lacked its fields.
    BadMessage,
    /// The envelope's `type` is not one this side knows.
    UnknownType,
    /// The body did not fit the named type.
    BadBody,
    /// The peer speaks a newer protocol.
    UnsupportedVersion,
    /// A frame's length prefix exceeded the limit; the stream is closed after this.
    FrameTooLarge,
    /// The caller's origin is not an allowed extension.
    OriginRefused,
    /// The message is valid but the feature behind it is not in this build.
    NotImplemented,
    /// No tab has the id a host request named.
    NoSuchTab,
    /// The model backend could not be reached or refused the request; the message says how to fix it.
    Backend,
    /// The tab was closed while the request was under way.
    TabClosed,
    /// No itinero content script answers in that frame: a browser-internal page, or a frame
    /// that does not exist.
    NoContentScript,
    /// The run, lesson or approval a request named does not exist.
    NotFound,
    /// The host's store could not be opened (the message says why); tasks still run, but
    /// nothing is remembered.
    StoreUnavailable,
    Internal,
    /// A code from a newer peer.
    #[serde(other)]
    Other,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorReply {
    pub code: ErrorCode,
    pub message: String,
}

#[cfg(test)]
mod tests {
    #[test]
    fn vault_messages_print_no_secret_in_debug() {
        let add = VaultRequest::Add {
            origin: "https://shop.example".into(),
            username: "alice".into(),
            password: "hunter22-secret".into(),
            totp_seed: Some("JBSWY3DPEHPK3PXP".into()),
            notes: "pin 4321".into(),
            same_site: false,
            allow_http: false,
        };
        let unlock = VaultRequest::Unlock {
            passphrase: "correct horse".into(),
        };
        let import = VaultRequest::Import {
            csv: "url,username,password\nhttps://a.example,bob,p4ss".into(),
        };
        let revealed = VaultResponse::Revealed {
            password: "hunter22-secret".into(),
            totp_code: Some("492039".into()),
        };
        let reveal = VaultRequest::Reveal {
            id: 1,
            passphrase: "correct horse".into(),
        };
        let api_key = VaultRequest::SetApiKey {
            server: "http://127.0.0.1:8080/v1".into(),
            key: "sk-live-0123456789abcdef".into(),
        };
        let printed = format!(
            "{add:?} {unlock:?} {import:?} {revealed:?} {reveal:?} {add:#?} {api_key:?} {api_key:#?}"
        );
        for secret in [
            "sk-live-0123456789abcdef",
            "hunter22-secret",
            "JBSWY3DPEHPK3PXP",
            "4321",
            "correct horse",
            "p4ss",
            "492039",
        ] {
            assert!(!printed.contains(secret), "{secret} in {printed}");
        }
        assert!(printed.contains("alice") && printed.contains("<hidden>"));
        assert!(printed.contains("SetApiKey") && printed.contains("http://127.0.0.1:8080/v1"));
    }

    use super::*;
    use crate::envelope::{Envelope, EnvelopeError};
    use serde_json::Value;

    #[test]
    fn wire_form_matches_the_design() {
        let env = Envelope::new(
            7,
            ToHost::Ping(Ping {
                payload: "hi".into(),
                echo: true,
            }),
        );
        let json: Value = serde_json::from_slice(&env.to_json()).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"v": 1, "id": 7, "type": "Ping", "body": {"payload": "hi", "echo": true}})
        );
        let back = Envelope::<ToHost>::from_json(&env.to_json()).unwrap();
        assert_eq!(back, env);
    }

    #[test]
    fn missing_body_defaults_fields() {
        let env = Envelope::<ToHost>::from_json(br#"{"v":1,"id":3,"type":"Ping"}"#).unwrap();
        assert_eq!(
            env.msg,
            ToHost::Ping(Ping {
                payload: String::new(),
                echo: true
            })
        );
    }

    #[test]
    fn a_body_too_deep_to_read_is_an_error_for_its_own_id() {
        let mut node = String::from(r##"{"tag":"#text","text":"deep"}"##);
        for _ in 0..200 {
            node = format!(r#"{{"tag":"div","children":[{node}]}}"#);
        }
        let frame = format!(
            r#"{{"v":1,"id":4503599627370497,"type":"Observation","body":{{"observation":{{"url":"https://a.example/","title":"t","root":{node}}}}}}}"#
        );
        let (id, err) = Envelope::<ToHost>::from_json(frame.as_bytes()).unwrap_err();
        assert_eq!(id, Some(4_503_599_627_370_497));
        assert!(
            matches!(&err, EnvelopeError::Body { kind, reason } if kind == "Observation" && reason.contains("recursion")),
            "{err}"
        );
        // Even an envelope that is not one still gives its id where it has one.
        let (id, err) =
            Envelope::<ToHost>::from_json(br#"{"v":"one","id":12,"type":"Ping"}"#).unwrap_err();
        assert_eq!(id, Some(12));
        assert!(matches!(err, EnvelopeError::Shape(_)), "{err}");
        let (id, err) = Envelope::<ToHost>::from_json(br#"{"v":1,"id":12,"type":"Pi"#).unwrap_err();
        assert_eq!(id, None);
        assert!(matches!(err, EnvelopeError::Json(_)), "{err}");
    }

    #[test]
    fn unknown_type_is_told_apart_and_keeps_the_id() {
        let (id, err) = Envelope::<ToHost>::from_json(br#"{"v":1,"id":9,"type":"Nope","body":{}}"#)
            .unwrap_err();
        assert_eq!(id, Some(9));
        assert!(matches!(err, EnvelopeError::UnknownType(t) if t == "Nope"));
    }

    #[test]
    fn host_messages_are_not_accepted_from_the_browser() {
        let (_, err) =
            Envelope::<ToHost>::from_json(br#"{"v":1,"id":1,"type":"HelloAck","body":{}}"#)
                .unwrap_err();
        assert!(matches!(err, EnvelopeError::UnknownType(_)));
    }

    #[test]
    fn bad_body_names_the_type() {
        let (id, err) = Envelope::<ToHost>::from_json(
            br#"{"v":1,"id":2,"type":"StopTask","body":{"task_id":"x"}}"#,
        )
        .unwrap_err();
        assert_eq!(id, Some(2));
        assert!(matches!(err, EnvelopeError::Body { kind, .. } if kind == "StopTask"));
    }

    #[test]
    fn newer_version_is_refused() {
        let (_, err) = Envelope::<ToHost>::from_json(br#"{"v":2,"id":2,"type":"Ping","body":{}}"#)
            .unwrap_err();
        assert!(matches!(
            err,
            EnvelopeError::NewerVersion { got: 2, ours: 1 }
        ));
    }

    #[test]
    fn invalid_json_and_bad_utf8_are_errors() {
        assert!(matches!(
            Envelope::<ToHost>::from_json(b"{not json").unwrap_err(),
            (None, EnvelopeError::Json(_))
        ));
        assert!(matches!(
            Envelope::<ToHost>::from_json(&[0xff, 0xfe]).unwrap_err(),
            (None, EnvelopeError::Json(_))
        ));
        assert!(matches!(
            Envelope::<ToHost>::from_json(br#"{"id":5}"#).unwrap_err(),
            (Some(5), EnvelopeError::Shape(_))
        ));
    }

    /// The round-trip test below must name every message of a direction.
    fn assert_covers_every_type<M: MessageSet>(msgs: &[M]) {
        let seen: std::collections::BTreeSet<_> = msgs.iter().map(|m| m.type_name()).collect();
        let declared: std::collections::BTreeSet<_> = M::TYPES.iter().copied().collect();
        let missing: Vec<_> = declared.difference(&seen).collect();
        assert!(missing.is_empty(), "no round-trip case for {missing:?}");
    }

    #[test]
    fn every_declared_type_round_trips() {
        use crate::action::{Action, Fingerprint, Target};
        use crate::records::*;
        let run = RunSummary {
            id: RunId(7),
            goal: "What do wool socks cost?".into(),
            start_url: "https://shop.example/".into(),
            origin: Some("https://shop.example".into()),
            tab_id: Some(3),
            backend: "ollama".into(),
            model: "qwen2.5:3b".into(),
            started_at: 1_700_000_000_000,
            finished_at: None,
            status: RunStatus::Interrupted,
            answer: None,
            steps: 1,
        };
        let target = Target {
            index: 3,
            fingerprint: Fingerprint {
                tag: "button".into(),
                ..Default::default()
            },
        };
        let to_host = vec![
            ToHost::Hello(Hello {
                protocol: 1,
                extension_version: "0.1.0".into(),
                browser: "x".into(),
            }),
            ToHost::StartTask(StartTask {
                goal: "g".into(),
                tab_id: 1,
                options: Default::default(),
            }),
            ToHost::StopTask(StopTask { task_id: 1 }),
            ToHost::Observation(ObservationReport {
                task_id: 1,
                tab_id: 1,
                observation: Default::default(),
            }),
            ToHost::ActionOutcome(ActionOutcomeReport {
                task_id: 1,
                tab_id: 1,
                outcome: Outcome::Done,
                elapsed_ms: 3,
            }),
            ToHost::UserReply(UserReply {
                task_id: 1,
                question_id: 2,
                reply: "yes".into(),
                remember: true,
            }),
            ToHost::Skills(SkillRequest::List { search: None }),
            ToHost::Skills(SkillRequest::Export {
                id: 3,
                format: SkillFormat::Playwright,
                params: vec![("q".into(), "socks".into())],
            }),
            ToHost::Vault(VaultRequest::Lock),
            ToHost::Vault(VaultRequest::SetApiKey {
                server: "http://127.0.0.1:8080/v1".into(),
                key: "sk-test".into(),
            }),
            ToHost::Vault(VaultRequest::RemoveApiKey {
                server: "http://127.0.0.1:8080".into(),
            }),
            ToHost::Ping(Ping {
                payload: "p".into(),
                echo: false,
            }),
            ToHost::GetSettings(GetSettings {}),
            ToHost::SetSettings(SetSettings {
                settings: Settings {
                    backend: BackendChoice::OpenAi,
                    model: Some("qwen2.5:3b".into()),
                    openai_url: Some("http://127.0.0.1:8080/v1".into()),
                    device: crate::records::EngineDevice::Gpu,
                    max_steps: 12,
                    approval: ApprovalPolicy::AskEveryAction,
                    plan: PlanMode::Off,
                    vote: VoteMode::Always,
                    vote_samples: 3,
                    vote_models: vec!["llama3.2:3b".into()],
                    sign_in_names_user: true,
                    keep_pictures: false,
                },
            }),
            ToHost::ListRuns(ListRuns { limit: 20 }),
            ToHost::ListModels(ListModels {
                backend: Some(BackendChoice::Ollama),
                openai_url: None,
            }),
            ToHost::GetRun(GetRun { run_id: RunId(7) }),
            ToHost::DeleteRun(DeleteRun { run_id: RunId(7) }),
            ToHost::ListLessons(ListLessons {
                origin: Some("https://shop.example".into()),
                limit: 5,
            }),
            ToHost::ListLessons(ListLessons {
                origin: None,
                limit: 5,
            }),
            ToHost::DeleteLesson(DeleteLesson {
                lesson_id: LessonId(3),
            }),
            ToHost::ListSiteApprovals(ListSiteApprovals {}),
            ToHost::RevokeSiteApproval(RevokeSiteApproval {
                origin: "https://shop.example".into(),
                kind: "buy".into(),
            }),
            ToHost::TabList(TabList {
                tabs: vec![TabInfo {
                    tab_id: 3,
                    window_id: 1,
                    url: "https://example.org/".into(),
                    title: "Example".into(),
                    active: true,
                }],
            }),
            ToHost::Captured(Captured {
                tab_id: 3,
                jpeg_base64: "/9j/4AAQ".into(),
            }),
            ToHost::GetStepPicture(GetStepPicture {
                run_id: RunId(4),
                n: 2,
            }),
            ToHost::GetStats(GetStats {
                days: 90,
                by: StatsBy::Month,
            }),
            ToHost::Error(ErrorReply {
                code: ErrorCode::NoSuchTab,
                message: "m".into(),
            }),
        ];
        assert_covers_every_type(&to_host);
        for msg in to_host {
            let env = Envelope::new(1, msg);
            assert!(ToHost::TYPES.contains(&env.msg.type_name()));
            assert_eq!(Envelope::<ToHost>::from_json(&env.to_json()).unwrap(), env);
        }
        let to_browser = vec![
            ToBrowser::HelloAck(HelloAck {
                protocol: 1,
                host_version: "0.1.0".into(),
                capabilities: vec!["ping".into()],
                pid: 4,
            }),
            ToBrowser::Pong(Pong {
                payload: None,
                received_bytes: 9,
            }),
            ToBrowser::Observe(Observe {
                task_id: 1,
                tab_id: 2,
            }),
            ToBrowser::Perform(Perform {
                task_id: 1,
                tab_id: 2,
                frame_id: 0,
                action: Action::Click {
                    target: target.clone(),
                },
                secret: None,
            }),
            ToBrowser::ListTabs(ListTabs {}),
            ToBrowser::TaskEvent(TaskEvent {
                task_id: 1,
                step: 1,
                kind: TaskEventKind::Decided {
                    action: Action::Back,
                    reason: "r".into(),
                    source: "llm".into(),
                },
            }),
            ToBrowser::TaskEvent(TaskEvent {
                task_id: 1,
                step: 0,
                kind: TaskEventKind::Plan {
                    subgoals: vec![Subgoal {
                        text: "find the socks".into(),
                        done: true,
                    }],
                },
            }),
            ToBrowser::AskUser(AskUser {
                task_id: 1,
                question_id: 1,
                question: "q".into(),
                kind: "question".into(),
                can_always: true,
                from_model: true,
                started_by: Some("the MCP client claude".into()),
            }),
            ToBrowser::TaskFinished(TaskFinished {
                task_id: 1,
                status: TaskStatus::Succeeded,
                answer: Some("a".into()),
                run_id: Some(RunId(4)),
            }),
            ToBrowser::Skills(SkillResponse::Deleted { existed: true }),
            ToBrowser::Vault(VaultResponse::Removed { existed: false }),
            ToBrowser::Vault(VaultResponse::ApiKeySaved {
                server: "http://127.0.0.1:8080".into(),
            }),
            ToBrowser::Vault(VaultResponse::ApiKeyRemoved {
                server: "http://127.0.0.1:8080".into(),
                existed: true,
            }),
            ToBrowser::Vault(VaultResponse::Status {
                status: VaultStatus {
                    state: crate::vault::VaultState::Locked,
                    source: Some(crate::vault::KeySource::Passphrase),
                    keyring_unavailable: None,
                    api_key_servers: vec!["http://127.0.0.1:8080".into()],
                },
            }),
            ToBrowser::Settings(Settings::default()),
            ToBrowser::Models(ModelList {
                backend: "ollama".into(),
                models: vec!["qwen2.5:3b".into()],
            }),
            ToBrowser::Runs(RunList {
                runs: vec![run.clone()],
            }),
            ToBrowser::RunDetail(RunDetail {
                run: run.clone(),
                steps: vec![StepRecord {
                    n: 1,
                    url: "https://shop.example/".into(),
                    dom_hash: Some("ab12".into()),
                    action: Some(serde_json::to_value(Action::Back).unwrap()),
                    action_summary: "back".into(),
                    outcome: Some(serde_json::to_value(Outcome::Done).unwrap()),
                    outcome_text: "done".into(),
                    strategy: "llm".into(),
                    thought: "t".into(),
                    decide_ms: Some(800),
                    act_ms: Some(40),
                    total_ms: Some(850),
                    model_calls: 0,
                    prompt_tokens: None,
                    recorded_at: 1_700_000_000_850,
                }],
                pictures: vec![
                    StepPicture {
                        n: 1,
                        bytes: 48_211,
                        withheld: None,
                    },
                    StepPicture {
                        n: 2,
                        bytes: 0,
                        withheld: Some("a saved secret was typed".into()),
                    },
                ],
            }),
            ToBrowser::Stats(StatsReport {
                by: StatsBy::Week,
                periods: vec![UsagePeriod {
                    start: 1_700_000_000_000,
                    site: Some("https://shop.example".into()),
                    tasks: 3,
                    succeeded: 2,
                    model_calls: 4,
                    steps: StepsBy {
                        cache: 1,
                        skill: 0,
                        grounding: 5,
                        model: 4,
                        other: 1,
                    },
                    median_task_ms: Some(4_200),
                }],
            }),
            ToBrowser::StepPicture(StepPictureData {
                run_id: RunId(4),
                n: 1,
                jpeg_base64: "/9j/4AAQ".into(),
            }),
            ToBrowser::Capture(Capture {
                task_id: 1,
                tab_id: 2,
                max_bytes: 600_000,
            }),
            ToBrowser::Lessons(LessonList {
                lessons: vec![Lesson {
                    id: LessonId(1),
                    origin: "https://shop.example".into(),
                    text: "the size is M".into(),
                    source: "ask_human".into(),
                    run_id: Some(RunId(7)),
                    created_at: 1,
                }],
            }),
            ToBrowser::SiteApprovals(SiteApprovalList {
                approvals: vec![SiteApproval {
                    origin: "https://shop.example".into(),
                    kind: "buy".into(),
                    created_at: 1,
                }],
            }),
            ToBrowser::Deleted(Deleted { existed: true }),
            ToBrowser::Error(ErrorReply {
                code: ErrorCode::UnknownType,
                message: "m".into(),
            }),
        ];
        assert_covers_every_type(&to_browser);
        for msg in to_browser {
            let env = Envelope::new(1, msg);
            assert!(ToBrowser::TYPES.contains(&env.msg.type_name()));
            assert_eq!(
                Envelope::<ToBrowser>::from_json(&env.to_json()).unwrap(),
                env
            );
        }
    }

    #[test]
    fn host_requests_without_a_body_decode_and_their_ids_survive_javascript() {
        let id = crate::envelope::HOST_REQUEST_ID_BASE + 7;
        let env = Envelope::<ToBrowser>::from_json(
            format!(r#"{{"v":1,"id":{id},"type":"ListTabs"}}"#).as_bytes(),
        )
        .unwrap();
        assert_eq!(env.msg, ToBrowser::ListTabs(ListTabs {}));
        // The extension reads ids as f64: host ids must round-trip through one exactly.
        assert_eq!(id as f64 as u64, id);
        assert!(crate::envelope::is_host_request_id(id));
        assert!(!crate::envelope::is_host_request_id(1_000_000));
    }

    #[test]
    fn store_requests_fill_their_defaults() {
        let env = Envelope::<ToHost>::from_json(br#"{"v":1,"id":3,"type":"ListRuns"}"#).unwrap();
        assert_eq!(env.msg, ToHost::ListRuns(ListRuns { limit: 50 }));
        let env = Envelope::<ToHost>::from_json(
            br#"{"v":1,"id":4,"type":"SetSettings","body":{"settings":{"max_steps":9}}}"#,
        )
        .unwrap();
        let ToHost::SetSettings(set) = env.msg else {
            panic!("{:?}", env.msg)
        };
        assert_eq!(set.settings.max_steps, 9);
        assert_eq!(set.settings.model, None);
        let env = Envelope::<ToHost>::from_json(br#"{"v":1,"id":5,"type":"ListLessons"}"#).unwrap();
        assert_eq!(
            env.msg,
            ToHost::ListLessons(ListLessons {
                origin: None,
                limit: 200
            })
        );
        let env = Envelope::<ToHost>::from_json(br#"{"v":1,"id":6,"type":"GetSettings"}"#).unwrap();
        assert_eq!(env.msg, ToHost::GetSettings(GetSettings {}));
    }

    #[test]
    fn unknown_error_codes_from_newer_peers_are_tolerated() {
        let e: ErrorReply = serde_json::from_str(r#"{"code":"brand_new","message":"m"}"#).unwrap();
        assert_eq!(e.code, ErrorCode::Other);
    }
}
