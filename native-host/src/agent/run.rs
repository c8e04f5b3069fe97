//! One task, step by step, until the model says it is done, the step limit, Stop, or a
//! failure that cannot be worked around.
//!
//! [`run`] keeps the task's running state in a `Run` and calls its phases in order, each
//! returning either what the next phase needs or how the step ends (`Flow`: on to the next
//! step, or the task's end):
//! - `observe`: read the page (scrubbed of secrets typed so far) and what was taught for its site;
//! - `ask_for_help`: after three failed steps in a row, the user's hint becomes a lesson;
//! - `sign_in`: the auto-login hook's turn, before anything is decided on a sign-in page;
//! - `decide`: the strategy chain (cache, recovery, the model with retries, votes);
//! - `check`: the guards' verdict, and the user's approval for a risky step;
//! - `answer_or_ask`: `done` ends the task, `ask_user` asks;
//! - `act`: the action in its frame, a saved secret put in only for sending;
//! - `learn`: the record, and what the next step should know (history, failures, the plan).
//!
//! The browser, the side panel, the memory and the sign-in hook are traits here, so the loop
//! is the same whether it drives the extension (through the session's link) or a test's
//! stand-in; every step is reported to the panel as it happens.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use itinero_shared::messages::{
    Outcome, PlanMode, SecretField, Subgoal, TaskEventKind, TaskStatus,
};
use itinero_shared::observation::Observation;
use itinero_shared::records::{ApprovalPolicy, StepRecord};
use itinero_shared::Action;

use super::cache;
use super::given;
use super::guards::{self, Taken, Verdict};
use super::planner::{self, Planner};
use super::progress::{self, Reporter};
use super::prompt::PastStep;
use super::recovery;
use super::strategy::{DecideError, Decision, Failed, Step, Strategy};

/// The tab the task works in, as the loop needs it.
#[async_trait]
pub trait Browser: Send + Sync {
    async fn observe(&self, tab: i64) -> Result<Observation, String>;
    /// Carries out `action` in `frame` of `tab`; returns what came of it and how long it took (ms).
    async fn perform(
        &self,
        tab: i64,
        frame: i64,
        action: &Action,
    ) -> Result<(Outcome, u64), String>;
    /// Like `perform`, for a `type` whose text is a saved secret: the page checks the field
    /// (`field`) at the moment of typing. A browser that cannot check must refuse.
    async fn perform_secret(
        &self,
        tab: i64,
        frame: i64,
        action: &Action,
        field: &SecretField,
    ) -> Result<(Outcome, u64), String> {
        let _ = (tab, frame, action, field);
        Err("this browser cannot type saved secrets".into())
    }
    /// A JPEG of what `tab` shows, for the run's report; a browser that cannot says why.
    async fn capture(&self, tab: i64) -> Result<Vec<u8>, String> {
        let _ = tab;
        Err("this browser takes no pictures".into())
    }
}

/// What a sign-in hook may use while it works: the task's tab and its browser and panel.
pub struct SignInCtx<'a> {
    pub tab: i64,
    pub browser: &'a dyn Browser,
    pub panel: &'a dyn Panel,
    pub stop: &'a AtomicBool,
}

/// What the sign-in hook did on a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignInReport {
    /// What the model (and the run's record) learns: never a secret.
    pub text: String,
    /// It acted on the page, which must be read again before anything is decided.
    pub acted: bool,
}

/// Auto-login (DESIGN.md): signs in on sign-in pages of sites with saved credentials before the
/// model sees them, and puts saved secrets into the model's `{{secret:…}}` placeholders at the
/// moment they are sent. Never hands a secret back to the loop except inside the action it
/// returns for sending.
#[async_trait]
pub trait SignIn: Send + Sync {
    /// Looks at a fresh page before anything is decided on it.
    async fn on_page(&self, obs: &Observation, ctx: &SignInCtx<'_>) -> Option<SignInReport>;
    /// For an action with a `{{secret:…}}` placeholder: the action to send, with the secret in
    /// it, and the field check for the page; `Ok(None)` when it has no placeholder; otherwise
    /// why it may not be sent.
    async fn resolve(
        &self,
        action: &Action,
        obs: &Observation,
        ctx: &SignInCtx<'_>,
    ) -> Result<Option<(Action, SecretField)>, String>;
    /// Puts placeholders back where a page shows a secret typed this task, before anything
    /// (the model, the record) reads the page.
    fn scrub(&self, obs: &mut Observation) {
        let _ = obs;
    }
    /// The same for a text from the page that is not an observation: an action's outcome.
    fn scrub_text(&self, text: &mut String) {
        let _ = text;
    }
}

/// `outcome` with its text scrubbed by `hook` (an address, a reason, a covering element).
fn scrubbed(mut outcome: Outcome, hook: &dyn SignIn) -> Outcome {
    if let Some(text) = outcome.text_mut() {
        hook.scrub_text(text);
    }
    outcome
}

/// What the user is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ask {
    /// A free-text answer.
    Question,
    /// Yes or no to a risky action; with `can_always`, "always" too (remembered for the site).
    Approval { can_always: bool },
}

/// The side panel, as the loop needs it.
#[async_trait]
pub trait Panel: Send + Sync {
    async fn event(&self, step: u32, kind: TaskEventKind);
    /// Asks the user; `None` when no answer came (the task was stopped, the panel closed).
    async fn ask(&self, question: &str, kind: Ask) -> Option<String>;

    /// Asks a free-text question whose answer may be kept as a lesson for the site; the answer
    /// and whether the user asked for it to be kept. With `from_model`, the panel says the
    /// question is the model's. A panel that cannot offer the choice keeps nothing.
    async fn ask_teaching(&self, question: &str, from_model: bool) -> Option<(String, bool)> {
        let _ = from_model;
        self.ask(question, Ask::Question).await.map(|a| (a, false))
    }
}

/// What the task remembers and writes down: the store in the host, nothing in tests that do
/// not care ([`Forgetful`]). Writing is best effort: a full disk must not stop the task.
#[async_trait]
pub trait Memory: Send + Sync {
    /// The task's first page was read: the run is written down from here on.
    async fn begin(&self, url: &str);
    /// What the user taught for the site of `url`, for the prompt.
    async fn lessons(&self, url: &str) -> Vec<String>;
    /// Past runs on the site of `url` that worked for goals like `goal`, written out for the prompt.
    async fn examples(&self, url: &str, goal: &str) -> Vec<String>;
    async fn add_lesson(&self, url: &str, text: &str);
    /// Whether the user chose "always allow" for `kind` (a risk word) on the site of `url`.
    async fn allowed(&self, url: &str, kind: &str) -> bool;
    async fn allow(&self, url: &str, kind: &str);
    async fn step(&self, record: StepRecord);
    /// The picture of the page after step `step`, or why there is none.
    async fn picture(&self, step: u32, picture: Result<Vec<u8>, String>) {
        let _ = (step, picture);
    }
}

/// Remembers nothing.
pub struct Forgetful;

#[async_trait]
impl Memory for Forgetful {
    async fn begin(&self, _: &str) {}
    async fn lessons(&self, _: &str) -> Vec<String> {
        Vec::new()
    }
    async fn examples(&self, _: &str, _: &str) -> Vec<String> {
        Vec::new()
    }
    async fn add_lesson(&self, _: &str, _: &str) {}
    async fn allowed(&self, _: &str, _: &str) -> bool {
        false
    }
    async fn allow(&self, _: &str, _: &str) {}
    async fn step(&self, _: StepRecord) {}
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    pub goal: String,
    pub tab: i64,
    pub max_steps: u32,
    pub plan: PlanMode,
    pub approval: ApprovalPolicy,
    /// The model that decides, as the panel names it ("smollm2-135m-instruct-q4_1, built-in
    /// engine"), where there is one.
    pub model: Option<String>,
    /// Whether the page after each step is pictured for the run's report.
    pub pictures: bool,
}

impl Task {
    /// The model without where it runs, for the panel's progress ("the model" where there is
    /// none named).
    fn model_name(&self) -> &str {
        self.model
            .as_deref()
            .and_then(|m| m.split(", ").next())
            .unwrap_or("the model")
    }
}

/// How a task decides: the strategy chain for every step and, for long goals, the planner.
pub struct Deciders {
    pub strategy: Box<dyn Strategy>,
    pub planner: Option<Box<dyn Planner>>,
    /// The auto-login hook, which runs on each page before the strategy.
    pub sign_in: Option<Box<dyn SignIn>>,
}

/// Steps before the task gives up, unless the user sets another limit.
pub const DEFAULT_MAX_STEPS: u32 = 30;
/// Failed steps in a row before the user is asked for help.
const FAILURES_BEFORE_ASKING: u32 = 3;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finished {
    pub status: TaskStatus,
    pub answer: Option<String>,
    pub steps: u32,
}

/// `click [4] button "Search"`: an action as the history recalls it.
fn recall(action: &Action, obs: &Observation) -> String {
    let mut s = action.kind().to_owned();
    if let Some(t) = action.target() {
        s.push_str(&format!(" [{}]", t.index));
        if let Some(n) = obs.find_indexed(t.index) {
            s.push_str(&format!(" {}", n.tag));
            if let Some(name) = n.name.as_deref().filter(|n| !n.is_empty()) {
                s.push_str(&format!(" {name:?}"));
            }
        }
    }
    match action {
        Action::Type { text, submit, .. } => {
            s.push_str(&format!(" {text:?}"));
            if *submit {
                s.push_str(" and submitted");
            }
        }
        Action::Select { value, .. } => s.push_str(&format!(" {value:?}")),
        Action::Navigate { url } => s.push_str(&format!(" {url}")),
        Action::Scroll { .. } => match action.scroll_direction() {
            Some(d) => s.push_str(&format!(" {d:?}").to_lowercase()),
            None => s.push_str(" into view"),
        },
        Action::PressKey { key, .. } => s.push_str(&format!(" {key}")),
        _ => {}
    }
    s
}

fn summary(obs: &Observation) -> String {
    format!(
        "{} — {} ({} elements)",
        if obs.title.is_empty() {
            "(no title)"
        } else {
            &obs.title
        },
        obs.url,
        obs.indexed().len()
    )
}

/// The frame an action's target lives in (0: the top frame).
fn frame_of(action: &Action, obs: &Observation) -> i64 {
    action
        .target()
        .and_then(|t| obs.find_indexed(t.index))
        .and_then(|n| n.frame_id)
        .unwrap_or(0)
}

/// What one step did, as the run's record keeps it.
struct Record<'a> {
    page: &'a Page,
    action: Option<&'a Action>,
    outcome: Option<&'a Outcome>,
    outcome_text: String,
    strategy: &'a str,
    thought: &'a str,
    decide_ms: Option<u64>,
    act_ms: Option<u64>,
    model_calls: u32,
    prompt_tokens: Option<u64>,
}

impl Record<'_> {
    fn into_step(self) -> StepRecord {
        StepRecord {
            n: self.page.step,
            url: self.page.obs.url.clone(),
            dom_hash: Some(self.page.key.clone()),
            action: self.action.and_then(|a| serde_json::to_value(a).ok()),
            action_summary: self
                .action
                .map(|a| recall(a, &self.page.obs))
                .unwrap_or_default(),
            outcome: self.outcome.and_then(|o| serde_json::to_value(o).ok()),
            outcome_text: self.outcome_text,
            strategy: self.strategy.to_owned(),
            thought: self.thought.to_owned(),
            decide_ms: self.decide_ms,
            act_ms: self.act_ms,
            total_ms: Some(self.page.started.elapsed().as_millis() as u64),
            model_calls: self.model_calls,
            prompt_tokens: self.prompt_tokens,
            recorded_at: 0,
        }
    }
}

fn origin(url: &str) -> String {
    crate::store::origin_of(url).unwrap_or_else(|| url.to_owned())
}

/// The page a step works on.
struct Page {
    step: u32,
    obs: Observation,
    /// Its key for the memory (the page and the last action that worked).
    key: String,
    started: Instant,
}

impl Page {
    /// A record of this step that says `text`, decided by `strategy`; the rest is filled in
    /// with struct-update syntax where known.
    fn record<'a>(&'a self, strategy: &'a str, text: String) -> Record<'a> {
        Record {
            page: self,
            action: None,
            outcome: None,
            outcome_text: text,
            strategy,
            thought: "",
            decide_ms: None,
            act_ms: None,
            model_calls: 0,
            prompt_tokens: None,
        }
    }

    /// A record of `action`, decided (in `decided.ms`) for the reason its thought says.
    fn decided<'a>(
        &'a self,
        decided: &'a Decided,
        action: &'a Action,
        strategy: &'a str,
        text: String,
    ) -> Record<'a> {
        Record {
            action: Some(action),
            thought: decided.decision.thought.as_deref().unwrap_or_default(),
            decide_ms: Some(decided.ms),
            model_calls: decided.decision.calls,
            prompt_tokens: decided.decision.prompt_tokens,
            ..self.record(strategy, text)
        }
    }
}

/// A decision and how long it took.
struct Decided {
    decision: Decision,
    ms: u64,
}

/// Why a step ends before its action is carried out: the next step comes, or the task is over.
enum Flow {
    NextStep,
    End(Finished),
}

fn finished(status: TaskStatus, answer: Option<String>, steps: u32) -> Flow {
    Flow::End(Finished {
        status,
        answer,
        steps,
    })
}

/// A task's running state between its steps.
struct Run<'a> {
    task: &'a Task,
    deciders: &'a Deciders,
    browser: &'a dyn Browser,
    panel: &'a dyn Panel,
    memory: &'a dyn Memory,
    stop: &'a AtomicBool,
    /// The tab it works in: the task follows the tabs it opens.
    tab: i64,
    plan: Vec<Subgoal>,
    /// Origins whose lessons and examples were read.
    sites_read: HashSet<String>,
    history: Vec<PastStep>,
    taken: Vec<Taken>,
    lessons: Vec<String>,
    examples: Vec<String>,
    /// What the strategy should hear of the last step (why it failed, or was refused).
    feedback: Option<String>,
    /// Failed steps in a row.
    failures: u32,
    /// The last action, if it did not work.
    failed: Option<Failed>,
    /// The last action that took effect: part of the next page's key for the memory.
    last_worked: Option<Action>,
    /// Model calls made outside any step (the plan's), counted with the next step recorded.
    unrecorded_calls: u32,
    /// The last step written down whose picture (the page after it) is still to be taken.
    unpictured: Option<u32>,
    /// The last step that typed a saved secret, whose picture is never taken. Once there is
    /// one, a page is pictured only when the scrub finds no trace of a secret on it (a page may
    /// echo what was typed, or turn a field into plain text).
    typed_secret_at: Option<u32>,
    /// When the last picture was taken.
    pictured_at: Option<Instant>,
    /// What the auto-login said of a step's page it did not act on: written down with that
    /// step's own record (a run has one record a step), ahead of its outcome.
    sign_in_said: Option<(u32, String)>,
}

/// Why a step has no picture.
const SECRET_TYPED: &str = "a saved secret was typed in this step";
const SHOWS_SECRET: &str = "the page showed a saved secret";
const TOO_SOON: &str = "the step came sooner than the browser takes pictures (two a second)";
/// Chromium takes at most two pictures of a window a second (`captureVisibleTab`'s quota).
/// Steps that come faster (a replay, the action cache) are not slowed to that pace: such a
/// step has no picture, but the run's last page always has one.
const PICTURE_SPACING: Duration = Duration::from_millis(510);

/// Runs `task` to its end. `stop` is checked between steps and while waiting on the user.
pub async fn run(
    task: &Task,
    deciders: &Deciders,
    browser: &dyn Browser,
    panel: &dyn Panel,
    memory: &dyn Memory,
    stop: &AtomicBool,
) -> Finished {
    panel
        .event(
            0,
            TaskEventKind::Started {
                goal: task.goal.clone(),
                model: task.model.clone(),
            },
        )
        .await;
    let mut run = Run {
        task,
        deciders,
        browser,
        panel,
        memory,
        stop,
        tab: task.tab,
        plan: Vec::new(),
        sites_read: HashSet::new(),
        history: Vec::new(),
        taken: Vec::new(),
        lessons: Vec::new(),
        examples: Vec::new(),
        feedback: None,
        failures: 0,
        failed: None,
        last_worked: None,
        unrecorded_calls: 0,
        unpictured: None,
        typed_secret_at: None,
        pictured_at: None,
        sign_in_said: None,
    };
    (run.plan, run.unrecorded_calls) = make_plan(task, deciders.planner.as_deref(), panel).await;
    for step in 1..=task.max_steps {
        if let Err(Flow::End(end)) = run.step(step).await {
            run.picture_last().await;
            return end;
        }
    }
    run.picture_last().await;
    Finished {
        status: TaskStatus::StepLimit,
        answer: None,
        steps: task.max_steps,
    }
}

impl Run<'_> {
    /// Writes a step down, with any model calls made before it that no step has counted.
    async fn write(&mut self, mut record: Record<'_>) {
        record.model_calls += std::mem::take(&mut self.unrecorded_calls);
        let step = record.page.step;
        if let Some((_, said)) = self.sign_in_said.take_if(|(n, _)| *n == step) {
            record.outcome_text = format!("{said}; then {}", record.outcome_text);
        }
        self.unpictured = Some(record.page.step);
        self.memory.step(record.into_step()).await;
    }

    /// Takes the picture of the page after the last step written down, unless that step typed
    /// a secret or the page shows one (`shows_secret`, from the scrub of its observation).
    /// What to do about the picture after the last step written down: `None` when there is
    /// none to take, else its step and whether to take it now (`Ok`) or why not (`Err`). The
    /// run's `last` picture waits its turn; another that comes too soon is not taken.
    async fn plan_picture(&mut self, last: bool) -> Option<(u32, Result<(), String>)> {
        if !self.task.pictures {
            return None;
        }
        let n = self.unpictured.take()?;
        if self.typed_secret_at == Some(n) {
            return Some((n, Err(SECRET_TYPED.to_owned())));
        }
        let wait = self
            .pictured_at
            .map(|at| PICTURE_SPACING.saturating_sub(at.elapsed()))
            .unwrap_or_default();
        if !wait.is_zero() && !last {
            return Some((n, Err(TOO_SOON.to_owned())));
        }
        tokio::time::sleep(wait).await;
        Some((n, Ok(())))
    }

    /// Writes down the picture after step `n` (or why there is none): a picture taken of a
    /// page the scrub found a secret on is dropped here, never kept.
    async fn keep_picture(
        &self,
        planned: Option<(u32, Result<(), String>)>,
        taken: Option<Result<Vec<u8>, String>>,
        shows_secret: bool,
    ) {
        let Some((n, plan)) = planned else {
            return;
        };
        let kept = match (plan, taken) {
            (Err(why), _) => Err(why),
            (Ok(()), _) if shows_secret => Err(SHOWS_SECRET.to_owned()),
            (Ok(()), Some(taken)) => taken,
            (Ok(()), None) => return,
        };
        self.memory.picture(n, kept).await;
    }

    /// The page read and scrubbed (with whether it showed a secret typed in this run), then
    /// pictured when `planned` says so: the picture is taken once the page was read, so it
    /// shows the page the step saw rather than one still being replaced (a capture during a
    /// navigation fails or shows the page before it), and only when the scrub found no secret.
    async fn observe_and_picture(
        &mut self,
        planned: &Option<(u32, Result<(), String>)>,
    ) -> (
        Result<(Observation, bool), String>,
        Option<Result<Vec<u8>, String>>,
    ) {
        let read = self.browser.observe(self.tab).await.map(|o| self.scrub(o));
        let clean = matches!(read, Ok((_, false)));
        if !matches!(planned, Some((_, Ok(())))) || !clean {
            return (read, None);
        }
        self.pictured_at = Some(Instant::now());
        let taken = self.browser.capture(self.tab).await;
        (read, Some(taken))
    }

    /// The picture after the run's last step. Once a secret was typed, the page is read and
    /// scrubbed too, as a step's would be.
    async fn picture_last(&mut self) {
        let planned = self.plan_picture(true).await;
        if !matches!(planned, Some((_, Ok(())))) {
            return self.keep_picture(planned, None, false).await;
        }
        let (taken, shows_secret) = if self.typed_secrets() {
            let (read, taken) = self.observe_and_picture(&planned).await;
            // Unread, the page cannot be shown to be free of secrets.
            let shows = read.map_or(true, |(_, shows)| shows);
            (taken, shows)
        } else {
            self.pictured_at = Some(Instant::now());
            (Some(self.browser.capture(self.tab).await), false)
        };
        self.keep_picture(planned, taken, shows_secret).await;
    }

    /// Whether a saved secret was typed in this run.
    fn typed_secrets(&self) -> bool {
        self.typed_secret_at.is_some()
    }

    /// `obs` scrubbed of the secrets typed so far, and whether it held any.
    fn scrub(&self, mut obs: Observation) -> (Observation, bool) {
        let Some(hook) = &self.deciders.sign_in else {
            return (obs, false);
        };
        if !self.typed_secrets() {
            hook.scrub(&mut obs);
            return (obs, false);
        }
        let before = obs.clone();
        hook.scrub(&mut obs);
        let changed = obs != before;
        (obs, changed)
    }

    /// One step: observe → (ask for help) → sign in → decide → check → act → learn.
    async fn step(&mut self, step: u32) -> Result<(), Flow> {
        self.go_on(step - 1)?;
        let page = self.observe(step).await?;
        self.ask_for_help(&page).await?;
        self.sign_in(&page).await?;
        let decided = self.decide(&page).await?;
        let action = self.check(&page, &decided).await?;
        self.answer_or_ask(&page, &decided, &action).await?;
        let (outcome, elapsed_ms) = self.act(&page, &action).await;
        self.learn(&page, &decided, action, outcome, elapsed_ms)
            .await;
        Ok(())
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// Ends the task, `steps` steps in, when Stop was pressed.
    fn go_on(&self, steps: u32) -> Result<(), Flow> {
        if self.stopped() {
            return Err(finished(TaskStatus::Stopped, None, steps));
        }
        Ok(())
    }

    fn sign_in_ctx(&self) -> SignInCtx<'_> {
        SignInCtx {
            tab: self.tab,
            browser: self.browser,
            panel: self.panel,
            stop: self.stop,
        }
    }

    /// Reads the page (scrubbed of secrets typed so far), and what was taught for its site.
    async fn observe(&mut self, step: u32) -> Result<Page, Flow> {
        let planned = self.plan_picture(false).await;
        let (read, taken) = self.observe_and_picture(&planned).await;
        let (obs, shows_secret) = read.map_err(|e| {
            finished(
                TaskStatus::Failed,
                Some(format!("could not read the page: {e}")),
                step - 1,
            )
        })?;
        self.keep_picture(planned, taken, shows_secret).await;
        let page = Page {
            step,
            key: cache::page_key(&obs, self.last_worked.as_ref()),
            obs,
            started: Instant::now(),
        };
        let url = &page.obs.url;
        if step == 1 {
            self.memory.begin(url).await;
        }
        // What the user taught for this site, once per site the task reaches.
        if self.sites_read.insert(origin(url)) {
            self.lessons.extend(self.memory.lessons(url).await);
            self.examples
                .extend(self.memory.examples(url, &self.task.goal).await);
        }
        self.panel
            .event(
                step,
                TaskEventKind::Observed {
                    summary: summary(&page.obs),
                },
            )
            .await;
        Ok(page)
    }

    /// Ask-human: after repeated failures, the user's hint joins the prompt as a lesson.
    async fn ask_for_help(&mut self, page: &Page) -> Result<(), Flow> {
        if self.failures < FAILURES_BEFORE_ASKING {
            return Ok(());
        }
        let question = format!(
            "I am stuck on \"{}\": {}. What should I do?",
            self.task.goal,
            self.feedback.as_deref().unwrap_or("my last steps failed")
        );
        match self.panel.ask_teaching(&question, false).await {
            Some((answer, remember)) if !self.stopped() => {
                if remember {
                    self.memory.add_lesson(&page.obs.url, &answer).await;
                }
                self.lessons.push(answer);
                self.failures = 0;
                Ok(())
            }
            _ => Err(finished(TaskStatus::Stopped, None, page.step - 1)),
        }
    }

    /// The auto-login hook's turn; a page it acted on is read again before anything is decided.
    async fn sign_in(&mut self, page: &Page) -> Result<(), Flow> {
        let Some(hook) = &self.deciders.sign_in else {
            return Ok(());
        };
        let Some(report) = hook.on_page(&page.obs, &self.sign_in_ctx()).await else {
            return Ok(());
        };
        if report.acted {
            self.typed_secret_at = Some(page.step);
            self.write(page.record(SIGN_IN, report.text.clone())).await;
        } else {
            // The step goes on to a decision on the same page, recorded under the same number.
            self.sign_in_said = Some((page.step, report.text.clone()));
        }
        note(self.panel, page.step, report.text.clone()).await;
        self.history.push(PastStep {
            action: "the host's auto-login".into(),
            outcome: report.text,
        });
        if !report.acted {
            return Ok(());
        }
        // The page changed under the form.
        self.last_worked = None;
        Err(Flow::NextStep)
    }

    /// The strategy chain's decision; an unusable reply counts as a failed step.
    async fn decide(&mut self, page: &Page) -> Result<Decided, Flow> {
        let deciding = Instant::now();
        let feedback = self.feedback.take();
        let (reporter, heard) = Reporter::channel();
        let step = Step {
            goal: &self.task.goal,
            observation: &page.obs,
            page_key: &page.key,
            history: &self.history,
            lessons: &self.lessons,
            examples: &self.examples,
            plan: &self.plan,
            feedback,
            failed: self.failed.as_ref(),
            progress: Some(&reporter),
        };
        let decided = with_progress(
            self.panel,
            page.step,
            self.task.model_name(),
            heard,
            self.deciders.strategy.decide(&step),
        )
        .await;
        // Stop pressed while the model was thinking: its answer is not acted on.
        self.go_on(page.step - 1)?;
        let ms = deciding.elapsed().as_millis() as u64;
        let decision = match decided {
            Ok(decision) => decision,
            Err(DecideError::Unusable { reason, calls, .. }) => {
                self.failures += 1;
                let text = format!("the model's reply could not be used: {reason}");
                let record = Record {
                    decide_ms: Some(ms),
                    model_calls: calls,
                    ..page.record("llm", text.clone())
                };
                self.write(record).await;
                note(self.panel, page.step, text).await;
                self.feedback = Some(reason);
                return Err(Flow::NextStep);
            }
            Err(e @ (DecideError::Backend(_) | DecideError::Stuck(_))) => {
                return Err(finished(
                    TaskStatus::Failed,
                    Some(e.to_string()),
                    page.step - 1,
                ));
            }
        };
        if let Some(text) = decision.note.clone() {
            note(self.panel, page.step, text).await;
        }
        Ok(Decided { decision, ms })
    }

    /// The guards' verdict on the decided action, and the user's approval where it needs one;
    /// the action to carry out.
    async fn check(&mut self, page: &Page, decided: &Decided) -> Result<Action, Flow> {
        let mut action = decided.decision.action.clone();
        let thought = decided.decision.thought.as_deref().unwrap_or_default();
        match guards::check(&self.task.goal, &action, &page.obs, &self.taken) {
            Verdict::Allow => {}
            // A program's own steps are carried out as given, never completed for it.
            Verdict::Replace { .. } if decided.decision.strategy == given::NAME => {}
            Verdict::Replace {
                action: instead,
                why,
            } => {
                note(self.panel, page.step, why).await;
                action = *instead;
            }
            Verdict::Reask(reason) => {
                return Err(self.sent_back(page, decided, &action, reason, false).await)
            }
            Verdict::Loop(reason) => {
                return Err(self.sent_back(page, decided, &action, reason, true).await)
            }
            Verdict::Approve { kind, why } => {
                if !self.approved(&action, &page.obs, &kind, &why).await {
                    let answer =
                        format!("Stopped: you did not allow {}", recall(&action, &page.obs));
                    let record = page.decided(decided, &action, "guard", answer.clone());
                    self.write(record).await;
                    return Err(finished(TaskStatus::Stopped, Some(answer), page.step));
                }
            }
        }
        // Supervised: every action that does something waits for the user.
        if self.task.approval == ApprovalPolicy::AskEveryAction
            && !matches!(action, Action::Done { .. } | Action::AskUser { .. })
            && !self
                .approved(&action, &page.obs, "", "you asked to approve every step")
                .await
        {
            let answer = format!("Stopped: you did not allow {}", recall(&action, &page.obs));
            return Err(finished(TaskStatus::Stopped, Some(answer), page.step));
        }
        self.panel
            .event(
                page.step,
                TaskEventKind::Decided {
                    action: action.clone(),
                    reason: thought.to_owned(),
                    source: decided.decision.strategy.to_owned(),
                },
            )
            .await;
        Ok(action)
    }

    /// A step the guards sent back: the strategy hears why. A loop counts as a failed step; a
    /// re-ask (a missing answer) does not.
    async fn sent_back(
        &mut self,
        page: &Page,
        decided: &Decided,
        action: &Action,
        reason: String,
        looping: bool,
    ) -> Flow {
        self.failures += u32::from(looping);
        let record = page.decided(decided, action, "guard", reason.clone());
        self.write(record).await;
        note(self.panel, page.step, reason.clone()).await;
        self.feedback = Some(reason);
        Flow::NextStep
    }

    /// `done` ends the task; `ask_user` asks, and the answer becomes a lesson. Neither touches
    /// the page.
    async fn answer_or_ask(
        &mut self,
        page: &Page,
        decided: &Decided,
        action: &Action,
    ) -> Result<(), Flow> {
        let decision = &decided.decision;
        let said = |text: String| page.decided(decided, action, decision.strategy, text);
        match action {
            Action::Done { answer, success } => {
                if let (true, Some(n)) = (*success, decision.subgoal_done) {
                    tick(&mut self.plan, n, page.step, self.panel).await;
                }
                let status = if *success {
                    TaskStatus::Succeeded
                } else {
                    TaskStatus::Failed
                };
                self.write(said(answer.clone())).await;
                Err(finished(status, Some(answer.clone()), page.step))
            }
            Action::AskUser { question } => match self.panel.ask_teaching(question, true).await {
                Some((answer, remember)) if !self.stopped() => {
                    let outcome = format!("the user answered {answer:?}");
                    self.write(said(outcome.clone())).await;
                    self.history.push(PastStep {
                        action: format!("asked the user {question:?}"),
                        outcome,
                    });
                    // Kept for the site only when the user said so: the model's question may
                    // be a page's attempt to learn something from the user.
                    if remember {
                        self.memory.add_lesson(&page.obs.url, &answer).await;
                    }
                    self.lessons.push(answer);
                    Err(Flow::NextStep)
                }
                _ => Err(finished(TaskStatus::Stopped, None, page.step)),
            },
            _ => Ok(()),
        }
    }

    /// Carries `action` out in its frame, with a saved secret put in only here, for sending
    /// (`action` keeps the placeholder for the history, the record and the panel); the outcome,
    /// scrubbed, and how long it took.
    async fn act(&mut self, page: &Page, action: &Action) -> (Outcome, u64) {
        let frame = frame_of(action, &page.obs);
        let secret = match &self.deciders.sign_in {
            Some(hook) => hook.resolve(action, &page.obs, &self.sign_in_ctx()).await,
            None if action_mentions_secret(action) => {
                Err("no saved sign-ins can be used in this task".into())
            }
            None => Ok(None),
        };
        let sent = match secret {
            Ok(None) => self.browser.perform(self.tab, frame, action).await,
            Ok(Some((filled, field))) => {
                self.typed_secret_at = Some(page.step);
                self.browser
                    .perform_secret(self.tab, frame, &filled, &field)
                    .await
            }
            Err(why) => {
                let reason = format!("refused to type a saved secret here: {why}");
                note(self.panel, page.step, reason.clone()).await;
                Ok((Outcome::ValueRejected { reason }, 0))
            }
        };
        let (outcome, elapsed_ms) = sent.unwrap_or_else(|e| (Outcome::Failed { reason: e }, 0));
        // A page may echo what was typed, or move to an address holding it.
        let outcome = match &self.deciders.sign_in {
            Some(hook) => scrubbed(outcome, hook.as_ref()),
            None => outcome,
        };
        self.panel
            .event(
                page.step,
                TaskEventKind::Acted {
                    outcome: outcome.clone(),
                    elapsed_ms,
                },
            )
            .await;
        (outcome, elapsed_ms)
    }

    /// Records what the action did and what the next step should know of it.
    async fn learn(
        &mut self,
        page: &Page,
        decided: &Decided,
        action: Action,
        outcome: Outcome,
        elapsed_ms: u64,
    ) {
        let decision = &decided.decision;
        let record = Record {
            outcome: Some(&outcome),
            act_ms: Some(elapsed_ms),
            ..page.decided(decided, &action, decision.strategy, outcome.to_string())
        };
        self.write(record).await;
        if let Outcome::OpenedTab { tab_id, .. } = &outcome {
            self.tab = *tab_id;
        }
        let recovering = decision.strategy == recovery::NAME;
        if recovering && matches!(action, Action::Wait { .. }) {
            // Recovery waited for the page to settle: the failed action is still to be done.
            if let Some(f) = self.failed.as_mut() {
                f.attempts += 1;
            }
        } else if outcome.took_effect() {
            self.failures = 0;
            self.failed = None;
            self.last_worked = Some(action.clone());
            if let Some(n) = decision.subgoal_done {
                tick(&mut self.plan, n, page.step, self.panel).await;
            }
        } else {
            self.failures += 1;
            self.feedback = Some(format!("your last action did not work: {outcome}"));
            let attempts = match &self.failed {
                Some(f) if recovering => f.attempts + 1,
                _ => 0,
            };
            self.failed = Some(Failed {
                action: action.clone(),
                outcome: outcome.clone(),
                attempts,
                subgoal_done: decision.subgoal_done,
            });
        }
        self.history.push(PastStep {
            action: recall(&action, &page.obs),
            outcome: outcome.to_string(),
        });
        self.taken.push(Taken {
            action,
            url: page.obs.url.clone(),
            page: guards::digest(&page.obs),
        });
    }

    /// Whether the user lets a risky `action` run: remembered "always allow" for its kind on
    /// this site (when the policy honours it), else asked; an "always" answer is remembered.
    async fn approved(&self, action: &Action, obs: &Observation, kind: &str, why: &str) -> bool {
        let can_always = !kind.is_empty() && self.task.approval.honours_site_approvals();
        if can_always && self.memory.allowed(&obs.url, kind).await {
            let text = format!(
                "allowed without asking: you always allow \"{kind}\" on {}",
                origin(&obs.url)
            );
            note(self.panel, 0, text).await;
            return true;
        }
        let question = format!("Allow this step? {}: {why}", recall(action, obs));
        let answer = self
            .panel
            .ask(&question, Ask::Approval { can_always })
            .await
            .map(|a| a.trim().to_lowercase());
        if self.stopped() {
            return false;
        }
        match answer.as_deref() {
            Some("always") if can_always => {
                self.memory.allow(&obs.url, kind).await;
                true
            }
            Some(a) => said_yes(a),
            None => false,
        }
    }
}

async fn note(panel: &dyn Panel, step: u32, text: String) {
    panel.event(step, TaskEventKind::Note { text }).await;
}

/// The strategy name of the steps the auto-login hook took (skills leave them out: a replay
/// signs in through the vault again).
pub const SIGN_IN: &str = "vault";

fn action_mentions_secret(action: &Action) -> bool {
    matches!(action, Action::Type { text, .. } if itinero_shared::vault::mentions_secret(text))
}

/// The sub-goals for a long goal, announced to the panel; none when the goal is short, no
/// planner is set, or planning failed (which is reported, and the task goes on without a plan).
/// Returns the model calls it made too.
async fn make_plan(
    task: &Task,
    planner: Option<&dyn Planner>,
    panel: &dyn Panel,
) -> (Vec<Subgoal>, u32) {
    let Some(planner) = planner.filter(|_| planner::wants_plan(&task.goal, task.plan)) else {
        return (Vec::new(), 0);
    };
    let (reporter, heard) = Reporter::channel();
    let planned = with_progress(
        panel,
        0,
        task.model_name(),
        heard,
        planner.plan(&task.goal, Some(&reporter)),
    )
    .await;
    let calls = match &planned {
        Ok(_) => 1,
        Err(DecideError::Unusable { calls, .. }) => *calls,
        Err(_) => 0,
    };
    let plan = match planned {
        Ok(items) if !items.is_empty() => {
            let subgoals = planner::subgoals(items);
            panel
                .event(
                    0,
                    TaskEventKind::Plan {
                        subgoals: subgoals.clone(),
                    },
                )
                .await;
            subgoals
        }
        Ok(_) => Vec::new(),
        Err(e) => {
            panel
                .event(
                    0,
                    TaskEventKind::Note {
                        text: format!("could not plan the goal ({e}); going on without a plan"),
                    },
                )
                .await;
            Vec::new()
        }
    };
    (plan, calls)
}

/// Awaits `work` (a step's decision, or the plan) while its model calls' progress, heard on
/// `heard`, goes to the panel as events of `step`. What is still queued when the work is done
/// is dropped: the decision that follows says more.
async fn with_progress<T>(
    panel: &dyn Panel,
    step: u32,
    model: &str,
    mut heard: tokio::sync::mpsc::UnboundedReceiver<crate::llm::Progress>,
    work: impl std::future::Future<Output = T>,
) -> T {
    tokio::pin!(work);
    let mut changes = progress::Changes::default();
    loop {
        tokio::select! {
            biased;
            out = &mut work => return out,
            Some(p) = heard.recv() => {
                if let Some(event) = changes.event(p, model) {
                    panel.event(step, event).await;
                }
            }
        }
    }
}

/// Whether an answer to a yes-or-no question (an approval, a proposed skill) is yes.
pub fn said_yes(answer: &str) -> bool {
    matches!(
        answer.trim().to_lowercase().as_str(),
        "yes" | "y" | "allow" | "ok"
    )
}

/// Marks sub-goal `n` (from 1) done and shows the plan again; numbers outside it are ignored.
async fn tick(plan: &mut [Subgoal], n: u32, step: u32, panel: &dyn Panel) {
    let Some(sub) = (n as usize).checked_sub(1).and_then(|i| plan.get_mut(i)) else {
        return;
    };
    if sub.done {
        return;
    }
    sub.done = true;
    panel
        .event(
            step,
            TaskEventKind::Plan {
                subgoals: plan.to_vec(),
            },
        )
        .await;
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::agent::strategy::{Llm, Retry};
    use crate::agent::test_support::{element, page_of};
    use crate::llm::scripted::{Scripted, Step as ScriptStep};
    use itinero_shared::observation::DomNode;

    /// A shop page: a search box, a Go button, and (after searching) a result with a price.
    struct FakeShop {
        searched: Mutex<Option<String>>,
        performed: Mutex<Vec<(i64, Action)>>,
        /// Outcome of every click instead of `Done` (e.g. covered).
        click_outcome: Option<Outcome>,
    }

    #[async_trait]
    impl Browser for FakeShop {
        async fn observe(&self, tab: i64) -> Result<Observation, String> {
            let mut children = vec![
                element(0, "input", Some("search"), None, "Search"),
                element(1, "button", None, None, "Buy now"),
            ];
            if let Some(q) = self.searched.lock().unwrap().as_ref() {
                children.push(DomNode {
                    tag: "#text".into(),
                    text: Some(format!("Results for {q}: Wool socks 12.99 EUR")),
                    ..Default::default()
                });
            }
            Ok(page_of(
                &format!("https://shop.example/tab{tab}"),
                "Shop",
                children,
            ))
        }

        async fn perform(
            &self,
            tab: i64,
            _frame: i64,
            action: &Action,
        ) -> Result<(Outcome, u64), String> {
            self.performed.lock().unwrap().push((tab, action.clone()));
            match action {
                Action::Type {
                    text, submit: true, ..
                } => {
                    *self.searched.lock().unwrap() = Some(text.clone());
                    Ok((Outcome::Done, 5))
                }
                Action::Click { .. } => {
                    Ok((self.click_outcome.clone().unwrap_or(Outcome::Done), 5))
                }
                _ => Ok((Outcome::Done, 5)),
            }
        }
    }

    fn shop() -> FakeShop {
        FakeShop {
            searched: Mutex::default(),
            performed: Mutex::default(),
            click_outcome: None,
        }
    }

    #[derive(Default)]
    struct FakePanel {
        events: Mutex<Vec<(u32, TaskEventKind)>>,
        asked: Mutex<Vec<(String, Ask)>>,
        answers: Mutex<Vec<String>>,
        /// Whether the user ticks "remember this answer" for a free-text question.
        remember: bool,
    }

    #[async_trait]
    impl Panel for FakePanel {
        async fn event(&self, step: u32, kind: TaskEventKind) {
            self.events.lock().unwrap().push((step, kind));
        }

        async fn ask(&self, question: &str, kind: Ask) -> Option<String> {
            self.asked.lock().unwrap().push((question.to_owned(), kind));
            let mut answers = self.answers.lock().unwrap();
            (!answers.is_empty()).then(|| answers.remove(0))
        }

        async fn ask_teaching(&self, question: &str, _: bool) -> Option<(String, bool)> {
            self.ask(question, Ask::Question)
                .await
                .map(|a| (a, self.remember))
        }
    }

    fn task(goal: &str) -> Task {
        Task {
            goal: goal.into(),
            tab: 7,
            max_steps: DEFAULT_MAX_STEPS,
            plan: PlanMode::Off,
            approval: ApprovalPolicy::AskRisky,
            model: None,
            pictures: true,
        }
    }

    fn chain(script: Arc<Scripted>) -> Deciders {
        Deciders {
            strategy: Box::new(Retry {
                inner: Llm::new(script, "qwen2.5:3b"),
                attempts: 2,
            }),
            planner: None,
            sign_in: None,
        }
    }

    #[tokio::test]
    async fn search_then_answer() {
        let script = Arc::new(Scripted::new([
            ScriptStep::reply(
                r#"{"thought": "search", "action": "type", "index": 0, "text": "wool socks", "submit": true}"#,
            ),
            ScriptStep {
                expect: vec![
                    "1. type [0] input \"Search\" \"wool socks\" and submitted → done".into(),
                    "12.99 EUR".into(),
                ],
                reject: vec![],
                reply: r#"{"thought": "found", "action": "done", "answer": "12.99 EUR"}"#.into(),
            },
        ]));
        let (browser, panel) = (shop(), FakePanel::default());
        let end = run(
            &task("What do wool socks cost?"),
            &chain(script),
            &browser,
            &panel,
            &Forgetful,
            &AtomicBool::new(false),
        )
        .await;
        assert_eq!(
            end,
            Finished {
                status: TaskStatus::Succeeded,
                answer: Some("12.99 EUR".into()),
                steps: 2
            }
        );
        let events = panel.events.lock().unwrap();
        let kinds: Vec<&str> = events
            .iter()
            .map(|(_, k)| match k {
                TaskEventKind::Started { .. } => "started",
                TaskEventKind::Observed { .. } => "observed",
                TaskEventKind::Decided { .. } => "decided",
                TaskEventKind::Acted { .. } => "acted",
                TaskEventKind::Note { .. } => "note",
                TaskEventKind::Plan { .. } => "plan",
                TaskEventKind::Progress { .. } => "progress",
            })
            .collect();
        assert_eq!(
            kinds,
            ["started", "observed", "decided", "acted", "observed", "decided"]
        );
    }

    #[tokio::test]
    async fn a_denied_approval_stops_the_task() {
        let script = Arc::new(Scripted::new([ScriptStep::reply(
            r#"{"action": "click", "index": 1}"#,
        )]));
        let (browser, panel) = (shop(), FakePanel::default());
        panel.answers.lock().unwrap().push("no".into());
        let end = run(
            &task("buy socks"),
            &chain(script),
            &browser,
            &panel,
            &Forgetful,
            &AtomicBool::new(false),
        )
        .await;
        assert_eq!(end.status, TaskStatus::Stopped);
        assert!(end
            .answer
            .unwrap()
            .contains("did not allow click [1] button \"Buy now\""));
        assert!(
            browser.performed.lock().unwrap().is_empty(),
            "nothing was clicked"
        );
        let asked = panel.asked.lock().unwrap();
        assert_eq!(asked[0].1, Ask::Approval { can_always: true });
    }

    #[tokio::test]
    async fn three_failures_ask_the_user_and_the_answer_reaches_the_model() {
        let script = Arc::new(Scripted::new([
            ScriptStep::reply(r#"{"action": "click", "index": 0}"#),
            ScriptStep::reply(r#"{"action": "click", "index": 0}"#),
            ScriptStep {
                expect: vec![
                    "your last action did not work: target covered by div#cookie-banner".into(),
                ],
                reject: vec![],
                reply: r#"{"action": "click", "index": 0}"#.into(),
            },
            ScriptStep {
                expect: vec!["- try the search box".into()],
                reject: vec![],
                reply: r#"{"action": "done", "answer": "gave up", "success": false}"#.into(),
            },
        ]));
        let browser = FakeShop {
            click_outcome: Some(Outcome::TargetOccluded {
                by: "div#cookie-banner".into(),
            }),
            ..shop()
        };
        let panel = FakePanel::default();
        panel
            .answers
            .lock()
            .unwrap()
            .push("try the search box".into());
        // Two covered clicks, then the same click a third time is a loop: three failures in a
        // row, so the user is asked before the next decision.
        let end = run(
            &task("open the socks page"),
            &chain(script.clone()),
            &browser,
            &panel,
            &Forgetful,
            &AtomicBool::new(false),
        )
        .await;
        assert_eq!(end.status, TaskStatus::Failed);
        let asked = panel.asked.lock().unwrap();
        assert_eq!(asked.len(), 1, "{asked:?}");
        assert!(asked[0].0.contains("I am stuck"), "{asked:?}");
        assert_eq!(script.remaining(), 0);
        assert_eq!(
            browser.performed.lock().unwrap().len(),
            2,
            "the looping click was not carried out"
        );
    }

    #[tokio::test]
    async fn stop_step_limit_and_dead_backend() {
        let (browser, panel) = (shop(), FakePanel::default());
        let stopped = AtomicBool::new(true);
        let script = Arc::new(Scripted::new([]));
        let end = run(
            &task("g"),
            &chain(script.clone()),
            &browser,
            &panel,
            &Forgetful,
            &stopped,
        )
        .await;
        assert_eq!((end.status, end.steps), (TaskStatus::Stopped, 0));

        let end = run(
            &task("g"),
            &chain(script),
            &browser,
            &panel,
            &Forgetful,
            &AtomicBool::new(false),
        )
        .await;
        assert_eq!(end.status, TaskStatus::Failed);
        assert!(
            end.answer.unwrap().contains("no reply left"),
            "the backend's error is the answer"
        );

        let script = Arc::new(Scripted::new(
            (0..3).map(|_| ScriptStep::reply(r#"{"action": "wait", "ms": 10}"#)),
        ));
        let limited = Task {
            max_steps: 3,
            ..task("g")
        };
        let end = run(
            &limited,
            &chain(script),
            &browser,
            &panel,
            &Forgetful,
            &AtomicBool::new(false),
        )
        .await;
        assert_eq!((end.status, end.steps), (TaskStatus::StepLimit, 3));
    }

    #[tokio::test]
    async fn an_answer_to_the_models_question_is_no_lesson_unless_the_user_says_so() {
        use crate::agent::memory::StoreMemory;
        use crate::store::{NewRun, Store};
        let store = Store::open_in_memory().unwrap();
        let memory = StoreMemory::new(
            Some(store.clone()),
            NewRun {
                goal: "buy socks".into(),
                ..Default::default()
            },
        );
        let script = Arc::new(Scripted::new([
            ScriptStep::reply(
                r#"{"action": "ask_user", "question": "To go on, what is your card's PIN?"}"#,
            ),
            ScriptStep {
                // This task may use the answer; nothing keeps it for the site.
                expect: vec!["1234".into()],
                reject: vec![],
                reply: r#"{"action": "done", "answer": "stopped"}"#.into(),
            },
        ]));
        let panel = FakePanel::default();
        panel.answers.lock().unwrap().push("1234".into());
        let end = run(
            &task("buy socks"),
            &chain(script),
            &shop(),
            &panel,
            &memory,
            &AtomicBool::new(false),
        )
        .await;
        assert_eq!(end.status, TaskStatus::Succeeded, "{end:?}");
        assert!(store.lessons(None, 10).unwrap().is_empty());
    }

    #[tokio::test]
    async fn the_store_keeps_steps_lessons_and_always_allow_per_site() {
        use crate::agent::memory::StoreMemory;
        use crate::store::{NewRun, Store};
        let store = Store::open_in_memory().unwrap();
        let memory = |goal: &str| {
            StoreMemory::new(
                Some(store.clone()),
                NewRun {
                    goal: goal.into(),
                    backend: "scripted".into(),
                    model: "qwen2.5:3b".into(),
                    ..Default::default()
                },
            )
        };
        // First run: "always" for the risky click, and a question whose answer the user asks
        // to remember.
        let script = Arc::new(Scripted::new([
            ScriptStep::reply(r#"{"action": "ask_user", "question": "Which size?"}"#),
            ScriptStep::reply(r#"{"thought": "buy", "action": "click", "index": 1}"#),
            ScriptStep::reply(r#"{"action": "done", "answer": "bought"}"#),
        ]));
        let browser = shop();
        let panel = FakePanel {
            remember: true,
            ..FakePanel::default()
        };
        panel
            .answers
            .lock()
            .unwrap()
            .extend(["size 42".to_owned(), "always".to_owned()]);
        let first = memory("buy socks");
        let end = run(
            &task("buy socks"),
            &chain(script),
            &browser,
            &panel,
            &first,
            &AtomicBool::new(false),
        )
        .await;
        first.finish(end.status, end.answer.clone()).await;
        assert_eq!(end.status, TaskStatus::Succeeded);
        assert_eq!(panel.asked.lock().unwrap().len(), 2);

        // Second run on the same site: no question for the click, and the lesson is in the prompt.
        let script = Arc::new(Scripted::new([
            ScriptStep {
                expect: vec!["What the user said about this site before:\n- size 42".into()],
                reject: vec![],
                reply: r#"{"action": "click", "index": 1}"#.into(),
            },
            ScriptStep::reply(r#"{"action": "done", "answer": "bought again"}"#),
        ]));
        let panel = FakePanel::default();
        let second = memory("buy socks again");
        let end = run(
            &task("buy socks again"),
            &chain(script),
            &browser,
            &panel,
            &second,
            &AtomicBool::new(false),
        )
        .await;
        second.finish(end.status, end.answer.clone()).await;
        assert_eq!(end.status, TaskStatus::Succeeded, "{end:?}");
        assert!(
            panel.asked.lock().unwrap().is_empty(),
            "allowed without asking"
        );

        let runs = store.recent_runs(10).unwrap();
        assert_eq!(runs.len(), 2);
        let detail = store.run_detail(runs[1].id).unwrap().unwrap();
        assert_eq!(detail.run.goal, "buy socks");
        assert_eq!(detail.run.answer.as_deref(), Some("bought"));
        let summaries: Vec<&str> = detail
            .steps
            .iter()
            .map(|s| s.action_summary.as_str())
            .collect();
        assert_eq!(
            summaries,
            ["ask_user", "click [1] button \"Buy now\"", "done"]
        );
        assert_eq!(detail.steps[1].outcome_text, Outcome::Done.to_string());
        assert!(detail
            .steps
            .iter()
            .all(|s| s.dom_hash.as_deref().is_some_and(|h| h.len() == 16)));
        assert_eq!(store.site_approvals().unwrap().len(), 1);
    }

    /// A product page whose "Add to cart" button is re-rendered (index 1, then 5) by the
    /// first click, which therefore misses it.
    #[derive(Default)]
    struct Rerendering {
        clicks: Mutex<Vec<u32>>,
    }

    #[async_trait]
    impl Browser for Rerendering {
        async fn observe(&self, _tab: i64) -> Result<Observation, String> {
            let clicks = self.clicks.lock().unwrap();
            let mut children = vec![element(0, "a", None, None, "Home")];
            match clicks.len() {
                0 => children.push(element(1, "button", None, None, "Add to cart")),
                1 => children.push(element(5, "button", None, None, "Add to cart")),
                _ => children.push(DomNode {
                    tag: "#text".into(),
                    text: Some("Added to your cart.".into()),
                    ..Default::default()
                }),
            }
            Ok(page_of("https://shop.example/p/socks", "Socks", children))
        }

        async fn perform(
            &self,
            _tab: i64,
            _frame: i64,
            action: &Action,
        ) -> Result<(Outcome, u64), String> {
            let Action::Click { target } = action else {
                return Ok((Outcome::Done, 1));
            };
            let mut clicks = self.clicks.lock().unwrap();
            clicks.push(target.index);
            Ok((
                if clicks.len() == 1 {
                    Outcome::TargetDetached
                } else {
                    Outcome::Done
                },
                1,
            ))
        }
    }

    #[tokio::test]
    async fn a_long_goal_is_planned_and_a_missed_click_recovered_without_the_model() {
        let script = Arc::new(Scripted::new([
            ScriptStep {
                expect: vec!["Goal: Put the socks in the cart, then tell me it is done".into()],
                reject: vec![],
                reply: r#"{"subgoals": ["Add the socks to the cart", "Say that it is done"]}"#.into(),
            },
            ScriptStep {
                expect: vec!["1. Add the socks to the cart ← now\n2. Say that it is done\n".into()],
                reject: vec![],
                reply: r#"{"action": "click", "index": 1, "subgoal_done": 1}"#.into(),
            },
            // The recovery's click is no model call: the next reply is for step 3.
            ScriptStep {
                expect: vec![
                    "1. Add the socks to the cart (done)\n2. Say that it is done ← now".into(),
                    "Added to your cart.".into(),
                ],
                reject: vec![],
                reply: r#"{"action": "done", "answer": "The socks are in the cart.", "subgoal_done": 2}"#.into(),
            },
        ]));
        let deciders = Deciders {
            strategy: Box::new(crate::agent::recovery::Recovery {
                inner: Retry {
                    inner: Llm::new(script.clone(), "qwen2.5:3b"),
                    attempts: 2,
                },
                attempts: 2,
            }),
            planner: Some(Box::new(crate::agent::planner::LlmPlanner {
                backend: script.clone(),
                model: "qwen2.5:3b".into(),
                family: crate::agent::prompt::family_of("qwen2.5:3b"),
            })),
            sign_in: None,
        };
        let browser = Rerendering::default();
        let panel = FakePanel::default();
        let goal = Task {
            plan: PlanMode::Auto,
            ..task("Put the socks in the cart, then tell me it is done")
        };
        let end = run(
            &goal,
            &deciders,
            &browser,
            &panel,
            &Forgetful,
            &AtomicBool::new(false),
        )
        .await;
        assert_eq!(end.status, TaskStatus::Succeeded, "{end:?}");
        assert_eq!(end.steps, 3);
        assert_eq!(*browser.clicks.lock().unwrap(), [1, 5]);
        assert_eq!(script.remaining(), 0);
        let events = panel.events.lock().unwrap();
        let plans: Vec<Vec<bool>> = events
            .iter()
            .filter_map(|(_, k)| match k {
                TaskEventKind::Plan { subgoals } => Some(subgoals.iter().map(|s| s.done).collect()),
                _ => None,
            })
            .collect();
        assert_eq!(
            plans,
            [vec![false, false], vec![true, false], vec![true, true]]
        );
        let sources: Vec<&str> = events
            .iter()
            .filter_map(|(_, k)| match k {
                TaskEventKind::Decided { source, .. } => Some(source.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(sources, ["llm", "recovery", "llm"]);
    }

    #[tokio::test]
    async fn the_task_follows_a_tab_it_opens() {
        struct Opener(FakeShop);
        #[async_trait]
        impl Browser for Opener {
            async fn observe(&self, tab: i64) -> Result<Observation, String> {
                self.0.observe(tab).await
            }
            async fn perform(
                &self,
                tab: i64,
                frame: i64,
                action: &Action,
            ) -> Result<(Outcome, u64), String> {
                self.0.perform(tab, frame, action).await?;
                Ok((
                    Outcome::OpenedTab {
                        tab_id: 99,
                        url: "https://shop.example/tab99".into(),
                    },
                    5,
                ))
            }
        }
        let script = Arc::new(Scripted::new([
            ScriptStep::reply(r#"{"action": "hover", "index": 0}"#),
            ScriptStep {
                expect: vec!["https://shop.example/tab99".into()],
                reject: vec![],
                reply: r#"{"action": "done", "answer": "ok"}"#.into(),
            },
        ]));
        let browser = Opener(shop());
        let end = run(
            &task("g"),
            &chain(script),
            &browser,
            &FakePanel::default(),
            &Forgetful,
            &AtomicBool::new(false),
        )
        .await;
        assert_eq!(end.status, TaskStatus::Succeeded);
        assert_eq!(browser.0.performed.lock().unwrap()[0].0, 7);
    }

    /// Scrubs one word, as auto-login scrubs a typed secret in all its forms.
    struct Hides(&'static str);

    #[async_trait]
    impl SignIn for Hides {
        async fn on_page(&self, _: &Observation, _: &SignInCtx<'_>) -> Option<SignInReport> {
            None
        }
        async fn resolve(
            &self,
            _: &Action,
            _: &Observation,
            _: &SignInCtx<'_>,
        ) -> Result<Option<(Action, SecretField)>, String> {
            Ok(None)
        }
        fn scrub_text(&self, text: &mut String) {
            *text = text.replace(self.0, "{{secret:password}}");
        }
    }

    #[test]
    fn every_text_of_an_outcome_is_scrubbed() {
        let hook = Hides("hunter22");
        let opened = Outcome::OpenedTab {
            tab_id: 3,
            url: "https://shop.example/?pw=hunter22".into(),
        };
        assert_eq!(
            scrubbed(opened, &hook),
            Outcome::OpenedTab {
                tab_id: 3,
                url: "https://shop.example/?pw={{secret:password}}".into(),
            }
        );
        let echoed = Outcome::ValueRejected {
            reason: "\"hunter22\" is not allowed".into(),
        };
        assert!(!scrubbed(echoed, &hook).to_string().contains("hunter22"));
        assert_eq!(scrubbed(Outcome::Done, &hook), Outcome::Done);
    }

    /// A sign-in page; once the host signs in, a page that echoes the password, then (after
    /// Continue) the account page. Pictures are "a JPEG of" the address.
    struct Echoes {
        state: Arc<std::sync::atomic::AtomicU8>,
    }

    #[async_trait]
    impl Browser for Echoes {
        async fn observe(&self, _tab: i64) -> Result<Observation, String> {
            let (url, text) = match self.state.load(Ordering::SeqCst) {
                0 => ("https://shop.example/signin", "Sign in"),
                1 => ("https://shop.example/welcome", "Welcome back, hunter22"),
                _ => ("https://shop.example/account", "Your account"),
            };
            let children = vec![
                element(0, "a", None, None, "Help"),
                element(1, "button", None, None, "Continue"),
                DomNode {
                    tag: "#text".into(),
                    text: Some(text.into()),
                    ..Default::default()
                },
            ];
            Ok(page_of(url, "Shop", children))
        }

        async fn perform(
            &self,
            _tab: i64,
            _frame: i64,
            action: &Action,
        ) -> Result<(Outcome, u64), String> {
            if let Action::Click { target } = action {
                if target.index == 1 {
                    self.state.store(2, Ordering::SeqCst);
                }
            }
            Ok((Outcome::Done, 1))
        }

        async fn capture(&self, tab: i64) -> Result<Vec<u8>, String> {
            let page = self.observe(tab).await?;
            Ok(format!("a JPEG of {}", page.url).into_bytes())
        }
    }

    /// Signs in on the first page and scrubs the password it typed.
    struct SignsIn(Arc<std::sync::atomic::AtomicU8>);

    #[async_trait]
    impl SignIn for SignsIn {
        async fn on_page(&self, _: &Observation, _: &SignInCtx<'_>) -> Option<SignInReport> {
            (self.0.load(Ordering::SeqCst) == 0).then(|| {
                self.0.store(1, Ordering::SeqCst);
                SignInReport {
                    text: "the host filled in the saved password".into(),
                    acted: true,
                }
            })
        }
        async fn resolve(
            &self,
            _: &Action,
            _: &Observation,
            _: &SignInCtx<'_>,
        ) -> Result<Option<(Action, SecretField)>, String> {
            Ok(None)
        }
        fn scrub(&self, obs: &mut Observation) {
            fn walk(node: &mut DomNode) {
                if let Some(text) = node.text.as_mut() {
                    *text = text.replace("hunter22", "{{secret:password}}");
                }
                node.children.iter_mut().for_each(walk);
            }
            walk(&mut obs.root);
        }
    }

    /// A step's picture, or why it has none.
    type Shot = (u32, Result<Vec<u8>, String>);

    /// Keeps the steps written down and the pictures it is given.
    #[derive(Default)]
    struct Kept {
        steps: Mutex<Vec<StepRecord>>,
        pictures: Mutex<Vec<Shot>>,
    }

    #[async_trait]
    impl Memory for Kept {
        async fn begin(&self, _: &str) {}
        async fn lessons(&self, _: &str) -> Vec<String> {
            Vec::new()
        }
        async fn examples(&self, _: &str, _: &str) -> Vec<String> {
            Vec::new()
        }
        async fn add_lesson(&self, _: &str, _: &str) {}
        async fn allowed(&self, _: &str, _: &str) -> bool {
            false
        }
        async fn allow(&self, _: &str, _: &str) {}
        async fn step(&self, record: StepRecord) {
            self.steps.lock().unwrap().push(record);
        }
        async fn picture(&self, step: u32, picture: Result<Vec<u8>, String>) {
            self.pictures.lock().unwrap().push((step, picture));
        }
    }

    #[tokio::test]
    async fn each_step_is_pictured_after_it_but_never_a_typed_secret_or_a_page_showing_one() {
        let state = Arc::new(std::sync::atomic::AtomicU8::new(0));
        let script = Arc::new(Scripted::new([
            ScriptStep::reply(r#"{"action": "click", "index": 0}"#),
            ScriptStep::reply(r#"{"action": "click", "index": 1}"#),
            ScriptStep::reply(r#"{"action": "done", "answer": "signed in"}"#),
        ]));
        let deciders = Deciders {
            sign_in: Some(Box::new(SignsIn(state.clone()))),
            ..chain(script)
        };
        let kept = Kept::default();
        let end = run(
            &task("sign in"),
            &deciders,
            &Echoes { state },
            &FakePanel::default(),
            &kept,
            &AtomicBool::new(false),
        )
        .await;
        assert_eq!(end.status, TaskStatus::Succeeded);
        let pictures = kept.pictures.into_inner().unwrap();
        let text = |p: &Result<Vec<u8>, String>| match p {
            Ok(jpeg) => String::from_utf8_lossy(jpeg).into_owned(),
            Err(why) => format!("none: {why}"),
        };
        let got: Vec<(u32, String)> = pictures.iter().map(|(n, p)| (*n, text(p))).collect();
        assert_eq!(
            got,
            [
                (1, format!("none: {SECRET_TYPED}")),
                // Help changed nothing: the page still shows the password.
                (2, format!("none: {SHOWS_SECRET}")),
                (3, "a JPEG of https://shop.example/account".into()),
                (4, "a JPEG of https://shop.example/account".into()),
            ]
        );
    }

    /// Says on the first page that it will not fill the sign-in, and does nothing.
    struct Refuses(AtomicBool);

    #[async_trait]
    impl SignIn for Refuses {
        async fn on_page(&self, _: &Observation, _: &SignInCtx<'_>) -> Option<SignInReport> {
            (!self.0.swap(true, Ordering::SeqCst)).then(|| SignInReport {
                text: "the sign-in was not filled: its form sends with GET".into(),
                acted: false,
            })
        }
        async fn resolve(
            &self,
            _: &Action,
            _: &Observation,
            _: &SignInCtx<'_>,
        ) -> Result<Option<(Action, SecretField)>, String> {
            Ok(None)
        }
    }

    #[tokio::test]
    async fn what_the_sign_in_said_without_acting_is_written_down_with_the_step_it_came_in() {
        let script = Arc::new(Scripted::new([
            ScriptStep::reply(r#"{"action": "click", "index": 0}"#),
            ScriptStep::reply(r#"{"action": "done", "answer": "ok"}"#),
        ]));
        let deciders = Deciders {
            sign_in: Some(Box::new(Refuses(AtomicBool::new(false)))),
            ..chain(script)
        };
        let kept = Kept::default();
        let end = run(
            &task("g"),
            &deciders,
            &shop(),
            &FakePanel::default(),
            &kept,
            &AtomicBool::new(false),
        )
        .await;
        assert_eq!(end.status, TaskStatus::Succeeded, "{end:?}");
        let steps = kept.steps.into_inner().unwrap();
        let written: Vec<(u32, &str, &str)> = steps
            .iter()
            .map(|s| (s.n, s.strategy.as_str(), s.outcome_text.as_str()))
            .collect();
        // One record a step: the model's click keeps its place, the refusal ahead of it.
        assert_eq!(written.len(), 2, "{written:?}");
        assert_eq!((written[0].0, written[0].1), (1, "llm"));
        assert!(
            written[0]
                .2
                .starts_with("the sign-in was not filled: its form sends with GET; then "),
            "{written:?}"
        );
        assert!(steps[0].action.is_some(), "{written:?}");
        assert_eq!(written[1].0, 2);
    }
}
