//! The side panel: connection state and five pages. *Run*: the goal box, the running task,
//! the activity log, and "Save as skill" after a success. *History*: the runs the host
//! recorded, each with its steps. *Skills*: the skills library (search, run with parameters,
//! rename, edit parameters, export, import, delete). *Vault*: the sign-ins the host keeps
//! sealed (unlock, add, show on request, delete, import, the audit list). *Settings*: the
//! host's settings (with an OpenAI-compatible server's API key, kept in the vault), and what
//! it remembers per site ("always allow", lessons).
//!
//! The document skeleton is static HTML (`sidepanel.html`); this module owns
//! the behaviour. It talks only to the background, never to the host directly,
//! so any number of panels share the one host connection. A task is started in
//! the panel's window's active tab; its events, questions and result all come
//! back under the id of the `StartTask` that began it. Every other request is answered
//! once, under its own id: `pending` says what the answer is for.

mod api_key;
mod credentials;
mod format;
mod history;
mod library;
mod nav;
mod settings;
mod skills;
mod stats;
mod vault;
mod view;

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::{Rc, Weak};

use itinero_shared::envelope::{Envelope, MessageSet};
use itinero_shared::messages::{
    DeleteLesson, DeleteRun, GetRun, GetSettings, GetStats, GetStepPicture, ListLessons,
    ListModels, ListRuns, ListSiteApprovals, RevokeSiteApproval, SetSettings, StartTask, StatsBy,
    StatsReport, StopTask, TaskEventKind, TaskOptions, TaskStatus, UserReply,
};
use itinero_shared::records::{BackendChoice, RunId};
use itinero_shared::{Action, ToBrowser, ToHost};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use crate::chrome::{self, field, Port};
use crate::panel_protocol::{ConnectionState, FromPanel, ToPanel, PANEL_PORT};
use api_key::ApiKeyPending;
use credentials::VaultPending;
use history::HistoryView;
use library::{OpenSkill, SkillPending};
use nav::{NavView, Page};
use settings::SettingsView;
use skills::{SaveOffer, SkillsView};
use stats::StatsView;
use vault::VaultView;
use view::View;

/// How many runs the History page lists.
const RUNS_LISTED: u32 = 50;
/// How many lessons the Settings page lists.
const LESSONS_LISTED: u32 = 200;

/// The task this panel started and is showing.
struct Running {
    /// The panel's id of its `StartTask`: every message of the task comes back with it.
    request_id: u64,
    /// Known from the task's first message.
    task_id: Option<u64>,
    /// The question on screen: (task, question).
    question: Option<(u64, u64)>,
    /// What it was asked to do (the name "Save as skill" offers comes from it).
    goal: String,
}

/// What a request to the host other than a task was for; its one reply is handled accordingly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pending {
    LoadSettings,
    SaveSettings,
    /// The list of runs; `deleted`: after a run was deleted (the page says so).
    Runs {
        deleted: bool,
    },
    Run(RunId),
    Stats,
    /// The picture after a step of the open run.
    Picture(RunId, u32),
    DeleteRun(RunId),
    Lessons,
    DeleteLesson,
    Approvals,
    Revoke,
    /// The settings' backend's models, for the model field.
    Models,
    Skill(SkillPending),
    Vault(VaultPending),
    /// The Settings page's API key for an OpenAI-compatible server.
    ApiKey(ApiKeyPending),
}

struct Panel {
    port: Option<Port>,
    view: View,
    nav: NavView,
    history: HistoryView,
    stats: StatsView,
    /// The statistics last received, drawn again for another site.
    stats_report: Option<StatsReport>,
    settings: SettingsView,
    skills: SkillsView,
    save: SaveOffer,
    vault: VaultView,
    next_id: u64,
    running: Option<Running>,
    /// A question on screen from a task another program started (an MCP client): (task,
    /// question). Its approvals are the user's to give here, never the program's.
    outside_question: Option<(u64, u64)>,
    page: Page,
    /// Requests waiting for their reply, by id.
    pending: HashMap<u64, Pending>,
    /// The run whose detail is open on the History page (or on its way).
    open_run: Option<RunId>,
    /// The settings form was edited since it was loaded or saved: reopening the page keeps
    /// the edits rather than loading over them.
    settings_edited: bool,
    /// The backend whose models the model field offers (`None`: the saved settings' backend).
    models_backend: Option<BackendChoice>,
    /// Whether the host was connected at the last status.
    connected: bool,
    /// The skill open on the Skills page (or on its way).
    open_skill: Option<OpenSkill>,
    /// The last task's run, while "Save as skill" is offered for it.
    finished_run: Option<RunId>,
    /// The saved sign-ins as last listed (Edit fills the form from them); never a secret.
    credentials: Vec<itinero_shared::vault::CredentialSummary>,
    /// The panel itself, for work that finishes later (hiding a revealed password).
    me: Weak<RefCell<Panel>>,
}

pub fn start() -> Result<(), JsValue> {
    let view = View::find()?;
    let document = view::document()?;
    let panel = Rc::new(RefCell::new(Panel {
        port: None,
        view,
        nav: NavView::find(&document)?,
        history: HistoryView::find(&document)?,
        stats: StatsView::find(&document)?,
        stats_report: None,
        settings: SettingsView::find(&document)?,
        skills: SkillsView::find(&document)?,
        save: SaveOffer::find(&document)?,
        vault: VaultView::find(&document)?,
        next_id: 1,
        running: None,
        outside_question: None,
        page: Page::Run,
        pending: HashMap::new(),
        open_run: None,
        settings_edited: false,
        models_backend: None,
        connected: false,
        open_skill: None,
        finished_run: None,
        credentials: Vec::new(),
        me: Weak::new(),
    }));
    panel.borrow_mut().me = Rc::downgrade(&panel);
    wire_pages(&panel)?;
    library::wire(&panel)?;
    credentials::wire(&panel)?;
    api_key::wire(&panel)?;
    let p = panel.borrow();
    view::on_run(&p.view, {
        let panel = panel.clone();
        move || run_goal(&panel)
    })?;
    view::on_reconnect(&p.view, {
        let panel = panel.clone();
        move || {
            if let Some(port) = &panel.borrow().port {
                let _ = port.post_message(&chrome::to_js(&FromPanel::Reconnect));
            }
        }
    })?;
    view::on_click(&p.view.stop, {
        let panel = panel.clone();
        move || stop(&panel)
    })?;
    view::on_click(&p.view.ask_allow, {
        let panel = panel.clone();
        move || answer(&panel, "yes".into())
    })?;
    view::on_click(&p.view.ask_always, {
        let panel = panel.clone();
        move || answer(&panel, "always".into())
    })?;
    view::on_click(&p.view.ask_deny, {
        let panel = panel.clone();
        move || answer(&panel, "no".into())
    })?;
    let send_answer = {
        let panel = panel.clone();
        move || {
            let text = panel.borrow().view.ask_input.value();
            if !text.trim().is_empty() {
                answer(&panel, text);
            }
        }
    };
    let send_answer = Rc::new(send_answer);
    view::on_click(&p.view.ask_send, {
        let f = send_answer.clone();
        move || f()
    })?;
    view::on_enter(p.view.ask_input.unchecked_ref(), move || send_answer())?;
    view::on_click(&p.view.answer_copy, {
        let panel = panel.clone();
        move || copy_answer(&panel)
    })?;
    drop(p);
    connect(&panel);
    Ok(())
}

fn connect(panel: &Rc<RefCell<Panel>>) {
    let port = chrome::connect(&chrome::to_js(&serde_json::json!({ "name": PANEL_PORT })));
    {
        let p = panel.clone();
        chrome::listen(&port.on_message(), move |msg| on_message(&p, msg));
        let p = panel.clone();
        chrome::listen(&port.on_disconnect(), move |_| {
            // The service worker was stopped or reloaded; a new connect wakes it again.
            // What it was carrying for this panel is lost with it.
            {
                let mut panel = p.borrow_mut();
                panel.port = None;
                panel.connected = false;
                let lost: Vec<Pending> = panel.pending.drain().map(|(_, what)| what).collect();
                for what in lost {
                    show_error(
                        &mut panel,
                        what,
                        "The connection to the background was lost; try again.",
                    );
                }
            }
            p.borrow().view.show_background_lost();
            let p2 = p.clone();
            gloo_timers::callback::Timeout::new(300, move || connect(&p2)).forget();
        });
    }
    panel.borrow_mut().port = Some(port);
}

/// Sends a host message; returns its id, or why it could not be sent.
fn post(p: &mut Panel, msg: ToHost) -> Result<u64, String> {
    let id = p.next_id;
    p.next_id += 1;
    let value: serde_json::Value =
        serde_json::from_slice(&Envelope::new(id, msg).to_json()).unwrap_or_default();
    let Some(port) = p.port.clone() else {
        return Err("Not connected to the background; retrying.".into());
    };
    port.post_message(&chrome::to_js(&FromPanel::ToHost { envelope: value }))
        .map(|()| id)
        .map_err(|e| format!("Could not send: {e:?}"))
}

/// Sends a host message; returns its id, or logs why it could not be sent.
fn send(p: &mut Panel, msg: ToHost) -> Option<u64> {
    post(p, msg).map_err(|why| p.view.log("error", &why)).ok()
}

/// Sends a request whose one reply is for `what`; a request that cannot be sent is answered
/// at once with why.
fn request(p: &mut Panel, msg: ToHost, what: Pending) {
    match post(p, msg) {
        Ok(id) => {
            p.pending.insert(id, what);
        }
        Err(why) => show_error(p, what, &why),
    }
}

// ---- pages ----

fn wire_pages(panel: &Rc<RefCell<Panel>>) -> Result<(), JsValue> {
    let p = panel.borrow();
    p.nav.on_open({
        let panel = panel.clone();
        move |page| open_page(&panel, page)
    })?;
    view::on_click(&p.history.refresh, {
        let panel = panel.clone();
        move || list_runs(&mut panel.borrow_mut(), false)
    })?;
    stats::on_site_change(&p.stats, {
        let panel = panel.clone();
        move || {
            let p = panel.borrow();
            if let Some(report) = &p.stats_report {
                p.stats.show(report);
            }
        }
    })?;
    history::on_run_click(&p.history, {
        let panel = panel.clone();
        move |id| open_run(&mut panel.borrow_mut(), id)
    })?;
    view::on_click(&p.history.back, {
        let panel = panel.clone();
        move || {
            let mut p = panel.borrow_mut();
            let was = p.open_run.take();
            p.history.show_list(was);
        }
    })?;
    view::on_click(&p.history.delete, {
        let panel = panel.clone();
        move || delete_run(&mut panel.borrow_mut())
    })?;
    settings::on_submit(&p.settings, {
        let panel = panel.clone();
        move || save_settings(&mut panel.borrow_mut())
    })?;
    settings::on_edit(&p.settings, {
        let panel = panel.clone();
        move || {
            let mut p = panel.borrow_mut();
            p.settings_edited = true;
            p.settings.update();
            p.settings.status("", "");
            // Another backend chosen: offer its models.
            let chosen = p.settings.chosen_backend();
            if chosen
                != p.models_backend
                    .unwrap_or_else(|| p.settings.loaded_backend())
            {
                p.models_backend = Some(chosen);
                p.settings.show_models(&[]);
                let list = ListModels {
                    backend: Some(chosen),
                    openai_url: p.settings.chosen_openai_url(),
                };
                request(&mut p, ToHost::ListModels(list), Pending::Models);
            }
        }
    })?;
    settings::on_entry_button(&p.settings.approvals, {
        let panel = panel.clone();
        move |li| {
            let mut p = panel.borrow_mut();
            if let Some((origin, kind)) = settings::approval_of(&li) {
                let msg = ToHost::RevokeSiteApproval(RevokeSiteApproval { origin, kind });
                request(&mut p, msg, Pending::Revoke);
            }
        }
    })?;
    settings::on_entry_button(&p.settings.lessons, {
        let panel = panel.clone();
        move |li| {
            let mut p = panel.borrow_mut();
            if let Some(lesson_id) = settings::lesson_of(&li) {
                let msg = ToHost::DeleteLesson(DeleteLesson { lesson_id });
                request(&mut p, msg, Pending::DeleteLesson);
            }
        }
    })?;
    Ok(())
}

/// Shows `page`; History and Settings ask the host for what they show each time they open.
fn open_page(panel: &Rc<RefCell<Panel>>, page: Page) {
    let mut p = panel.borrow_mut();
    p.page = page;
    p.nav.select(page);
    refresh_page(&mut p);
}

fn refresh_page(p: &mut Panel) {
    match p.page {
        Page::Run => {}
        Page::Skills => library::refresh(p),
        Page::Vault => credentials::refresh(p),
        Page::History => {
            let was = p.open_run.take();
            p.history.show_list(was);
            list_runs(p, false);
        }
        Page::Settings => {
            if !p.settings_edited {
                p.settings.enable(false);
                p.settings.status("Loading…", "");
                request(
                    p,
                    ToHost::GetSettings(GetSettings {}),
                    Pending::LoadSettings,
                );
            }
            request(
                p,
                ToHost::ListSiteApprovals(ListSiteApprovals {}),
                Pending::Approvals,
            );
            list_lessons(p);
            api_key::refresh(p);
            p.models_backend = None;
            request(
                p,
                ToHost::ListModels(ListModels::default()),
                Pending::Models,
            );
        }
    }
}

fn list_runs(p: &mut Panel, deleted: bool) {
    if !deleted {
        p.history.list_status("Loading…", "");
    }
    let msg = ToHost::ListRuns(ListRuns { limit: RUNS_LISTED });
    request(p, msg, Pending::Runs { deleted });
    request(
        p,
        ToHost::GetStats(GetStats {
            days: GetStats::DEFAULT_DAYS,
            by: StatsBy::Week,
        }),
        Pending::Stats,
    );
}

fn list_lessons(p: &mut Panel) {
    let msg = ToHost::ListLessons(ListLessons {
        origin: None,
        limit: LESSONS_LISTED,
    });
    request(p, msg, Pending::Lessons);
}

fn open_run(p: &mut Panel, run_id: RunId) {
    p.open_run = Some(run_id);
    p.history.show_loading();
    request(p, ToHost::GetRun(GetRun { run_id }), Pending::Run(run_id));
}

fn delete_run(p: &mut Panel) {
    let Some(run_id) = p.open_run else {
        return;
    };
    let _ = p.history.delete.set_attribute("disabled", "");
    p.history.detail_status("Deleting…", "");
    request(
        p,
        ToHost::DeleteRun(DeleteRun { run_id }),
        Pending::DeleteRun(run_id),
    );
}

fn save_settings(p: &mut Panel) {
    match p.settings.read() {
        Ok(settings) => {
            p.settings.status("Saving…", "");
            request(
                p,
                ToHost::SetSettings(SetSettings { settings }),
                Pending::SaveSettings,
            );
        }
        Err(why) => p.settings.status(&why, "error"),
    }
}

fn now_ms() -> i64 {
    js_sys::Date::now() as i64
}

/// The reply to a page's request.
fn on_reply(p: &mut Panel, what: Pending, msg: ToBrowser) {
    match (what, msg) {
        (Pending::LoadSettings, ToBrowser::Settings(s)) => {
            if !p.settings_edited {
                p.settings.fill(&s);
            }
            p.settings.enable(true);
            p.settings.status("", "");
        }
        (Pending::SaveSettings, ToBrowser::Settings(s)) => {
            p.settings.fill(&s);
            p.settings_edited = false;
            p.settings.enable(true);
            p.settings.status("Saved", "ok");
        }
        (Pending::Runs { deleted }, ToBrowser::Runs(list)) => {
            p.history.show_runs(&list.runs, now_ms());
            let status = match (deleted, list.runs.is_empty()) {
                (true, _) => "Run deleted.",
                (false, true) => "No runs yet: the goals you run appear here.",
                (false, false) => "",
            };
            p.history.list_status(status, "");
        }
        (Pending::Run(id), ToBrowser::RunDetail(detail)) => {
            if p.open_run == Some(id) && p.page == Page::History {
                p.history.show_detail(&detail, now_ms());
                // Each picture comes in a reply of its own: together they would pass the
                // frame limit.
                for picture in detail.pictures.iter().filter(|pic| pic.is_kept()) {
                    request(
                        p,
                        ToHost::GetStepPicture(GetStepPicture {
                            run_id: id,
                            n: picture.n,
                        }),
                        Pending::Picture(id, picture.n),
                    );
                }
            }
        }
        (Pending::Stats, ToBrowser::Stats(report)) => {
            p.stats.fill_sites(&report);
            p.stats.show(&report);
            p.stats_report = Some(report);
        }
        (Pending::Picture(id, n), ToBrowser::StepPicture(picture)) => {
            if p.open_run == Some(id) {
                p.history.show_picture(n, &picture.jpeg_base64);
            }
        }
        (Pending::DeleteRun(id), ToBrowser::Deleted(_)) => {
            if p.open_run == Some(id) {
                p.open_run = None;
                p.history.show_list(None);
                view::focus(&p.history.refresh);
            }
            list_runs(p, true);
        }
        (Pending::Lessons, ToBrowser::Lessons(list)) => p.settings.show_lessons(&list.lessons),
        (Pending::DeleteLesson, ToBrowser::Deleted(_)) => list_lessons(p),
        (Pending::Approvals, ToBrowser::SiteApprovals(list)) => {
            p.settings.show_approvals(&list.approvals)
        }
        (Pending::Revoke, ToBrowser::Deleted(_)) => request(
            p,
            ToHost::ListSiteApprovals(ListSiteApprovals {}),
            Pending::Approvals,
        ),
        (Pending::Models, ToBrowser::Models(list)) => p.settings.show_models(&list.models),
        (Pending::Skill(what), msg) => library::on_reply(p, what, msg),
        (Pending::Vault(what), msg) => credentials::on_reply(p, what, msg),
        (Pending::ApiKey(what), msg) => api_key::on_reply(p, what, msg),
        (what, ToBrowser::Error(err)) => show_error(p, what, &format::sentence(&err.message)),
        (what, other) => show_error(
            p,
            what,
            &format!("The host answered with {}.", other.type_name()),
        ),
    }
}

/// Shows why a page's request failed where its answer would have gone.
fn show_error(p: &mut Panel, what: Pending, message: &str) {
    match what {
        // The form stays disabled: there is nothing to edit.
        Pending::LoadSettings => p.settings.status(message, "error"),
        Pending::SaveSettings => {
            p.settings.enable(true);
            p.settings.status(message, "error");
        }
        Pending::Runs { .. } => p.history.list_status(message, "error"),
        Pending::Run(id) => {
            if p.open_run == Some(id) {
                p.history.detail_status(message, "error");
            }
        }
        Pending::Stats => p.stats.status(message, "error"),
        Pending::Picture(id, n) => {
            if p.open_run == Some(id) {
                p.history.picture_missing(n, message);
            }
        }
        Pending::DeleteRun(_) => {
            let _ = p.history.delete.remove_attribute("disabled");
            p.history.detail_status(message, "error");
        }
        Pending::Lessons | Pending::DeleteLesson => {
            settings::enable_entries(&p.settings.lessons);
            p.settings.lessons_status(message, "error");
        }
        Pending::Approvals | Pending::Revoke => {
            settings::enable_entries(&p.settings.approvals);
            p.settings.approvals_status(message, "error");
        }
        Pending::Models => p.settings.models_unavailable(message),
        Pending::Skill(what) => library::show_error(p, what, message),
        Pending::Vault(what) => credentials::show_error(p, what, message),
        Pending::ApiKey(what) => api_key::show_error(p, what, message),
    }
}

fn run_goal(panel: &Rc<RefCell<Panel>>) {
    let goal = {
        let p = panel.borrow();
        if p.running.is_some() {
            p.view.log("hint", "A task is running: stop it first.");
            return;
        }
        let goal = p.view.goal_text();
        if goal.trim().is_empty() {
            p.view.log("hint", "Type a goal first.");
            return;
        }
        goal
    };
    start_task(panel, goal, TaskOptions::default());
}

/// Starts `goal` in this window's tab (a skill when `options` names one).
fn start_task(panel: &Rc<RefCell<Panel>>, goal: String, options: TaskOptions) {
    let panel = panel.clone();
    wasm_bindgen_futures::spawn_local(async move {
        let tab = active_tab().await;
        let mut p = panel.borrow_mut();
        let Some(tab_id) = tab else {
            p.view.log(
                "error",
                "No tab to work in: open a web page in this window first.",
            );
            return;
        };
        let start = ToHost::StartTask(StartTask {
            goal: goal.trim().to_owned(),
            tab_id,
            options,
        });
        if let Some(request_id) = send(&mut p, start) {
            p.running = Some(Running {
                request_id,
                task_id: None,
                question: None,
                goal: goal.trim().to_owned(),
            });
            library::offer(&mut p, None, "");
            p.view.show_running(true);
            p.view.log("sent", &format!("→ {}", goal.trim()));
        }
    });
}

/// The tab to work in: the active tab of the panel's window, or, when the panel itself is open
/// as a tab there, the web page used most recently.
async fn active_tab() -> Option<i64> {
    let query = chrome::to_js(&serde_json::json!({ "currentWindow": true }));
    let tabs = JsFuture::from(chrome::tabs_query(&query).ok()?)
        .await
        .ok()?;
    let pages: Vec<JsValue> = js_sys::Array::from(&tabs)
        .iter()
        .filter(|t| {
            let url = field(t, "url").as_string().unwrap_or_default();
            !url.starts_with("chrome-extension://") && field(t, "id").as_f64().is_some()
        })
        .collect();
    let active = pages
        .iter()
        .find(|t| field(t, "active").as_bool() == Some(true));
    let recent = || {
        pages.iter().max_by(|a, b| {
            let at = |t: &JsValue| field(t, "lastAccessed").as_f64().unwrap_or(0.0);
            at(a).total_cmp(&at(b))
        })
    };
    let tab = active.or_else(recent)?;
    field(tab, "id").as_f64().map(|id| id as i64)
}

fn stop(panel: &Rc<RefCell<Panel>>) {
    let mut p = panel.borrow_mut();
    let Some(task_id) = p.running.as_ref().and_then(|r| r.task_id) else {
        return;
    };
    if send(&mut p, ToHost::StopTask(StopTask { task_id })).is_some() {
        p.view.log("sent", "Stopping…");
    }
}

fn answer(panel: &Rc<RefCell<Panel>>, reply: String) {
    let mut p = panel.borrow_mut();
    let asked = p.running.as_mut().and_then(|r| r.question.take());
    let Some((task_id, question_id)) = asked.or_else(|| p.outside_question.take()) else {
        return;
    };
    let remember = p.view.remember_answer();
    p.view.hide_question();
    p.view.log("sent", &format!("You: {reply}"));
    send(
        &mut p,
        ToHost::UserReply(UserReply {
            task_id,
            question_id,
            reply,
            remember,
        }),
    );
}

fn copy_answer(panel: &Rc<RefCell<Panel>>) {
    let text = panel.borrow().view.answer_text();
    if let Some(clipboard) = web_sys::window().map(|w| w.navigator().clipboard()) {
        let _ = clipboard.write_text(&text);
    }
}

/// `type [3] "wool socks"`: an action in a line of the log.
fn describe(action: &Action) -> String {
    let value = serde_json::to_value(action).unwrap_or_default();
    let mut s = action.kind().replace('_', " ");
    if let Some(t) = action.target() {
        s.push_str(&format!(" [{}]", t.index));
        if let Some(name) = t.fingerprint.name.as_deref().filter(|n| !n.is_empty()) {
            s.push_str(&format!(" {name:?}"));
        }
    }
    for key in ["text", "value", "url", "key", "direction", "question"] {
        if let Some(v) = value[key].as_str() {
            s.push_str(&format!(" {v:?}"));
        }
    }
    s
}

fn on_task_message(p: &mut Panel, msg: ToBrowser) {
    // A wait's bar lasts until the next thing the task says.
    if !matches!(
        &msg,
        ToBrowser::TaskEvent(e) if matches!(e.kind, TaskEventKind::Progress { .. })
    ) {
        p.view.hide_progress();
    }
    match msg {
        ToBrowser::TaskEvent(e) => {
            if let Some(r) = p.running.as_mut() {
                r.task_id.get_or_insert(e.task_id);
            }
            let step = e.step;
            match e.kind {
                TaskEventKind::Started { goal, model } => {
                    p.view.log("step", &format!("Started: {goal}"));
                    if let Some(model) = model {
                        p.view.log("note", &format!("Model: {model}"));
                    }
                }
                TaskEventKind::Observed { summary } => {
                    p.view.log("step", &format!("{step}. Saw {summary}"))
                }
                TaskEventKind::Decided {
                    action,
                    reason,
                    source,
                } => {
                    let why = if reason.is_empty() {
                        String::new()
                    } else {
                        format!(" — {reason}")
                    };
                    p.view.log(
                        "decided",
                        &format!("{step}. {}{why} ({source})", describe(&action)),
                    );
                }
                TaskEventKind::Acted {
                    outcome,
                    elapsed_ms,
                } => {
                    p.view
                        .log("step", &format!("{step}. {outcome} ({elapsed_ms} ms)"));
                }
                TaskEventKind::Note { text } => p.view.log("note", &text),
                TaskEventKind::Plan { subgoals } => {
                    if let Some(done) = subgoals.iter().rposition(|s| s.done) {
                        p.view.log(
                            "note",
                            &format!(
                                "{step}. Finished sub-goal {}: {}",
                                done + 1,
                                subgoals[done].text
                            ),
                        );
                    } else {
                        p.view
                            .log("note", &format!("Planned {} sub-goals", subgoals.len()));
                    }
                    p.view.show_plan(&subgoals);
                }
                TaskEventKind::Progress { label, done, total } => {
                    p.view.show_progress(&label, done, total)
                }
            }
        }
        ToBrowser::AskUser(q) => {
            if let Some(r) = p.running.as_mut() {
                r.task_id.get_or_insert(q.task_id);
                r.question = Some((q.task_id, q.question_id));
            }
            p.view.show_question(
                &q.question,
                q.kind == "approval",
                q.can_always,
                q.from_model,
            );
            p.view.log("note", &format!("Asks: {}", q.question));
        }
        ToBrowser::TaskFinished(f) => {
            let goal = p.running.take().map(|r| r.goal).unwrap_or_default();
            let saved = f.run_id.filter(|_| f.status == TaskStatus::Succeeded);
            library::offer(p, saved, &goal);
            p.view.show_running(false);
            p.view.hide_question();
            let status = match f.status {
                TaskStatus::Succeeded => "succeeded",
                TaskStatus::Failed => "failed",
                TaskStatus::Stopped => "stopped",
                TaskStatus::StepLimit => "step_limit",
            };
            let heading = f.status.heading();
            let answer = f.answer.unwrap_or_default();
            p.view.show_answer(status, heading, &answer);
            p.view.log("reply", &format!("{heading}: {answer}"));
            // The run is in the history now: a list on screen shows it.
            if p.page == Page::History && p.open_run.is_none() {
                list_runs(p, false);
            }
        }
        ToBrowser::Error(err) => {
            // A task's request answered with an error (the host went away mid-run, or refused
            // the task): the run is over, and the result box says why rather than the log alone.
            let was_running = p.running.take().is_some();
            p.view.show_running(false);
            p.view.hide_question();
            p.view.log(
                "error",
                &format!("Host error ({:?}): {}", err.code, err.message),
            );
            if was_running {
                p.view.show_answer(
                    "failed",
                    "Failed",
                    &format!("The task ended: {}", err.message),
                );
            }
        }
        other => p
            .view
            .log("info", &format!("Host sent {}", other.type_name())),
    }
}

fn on_message(panel: &Rc<RefCell<Panel>>, msg: JsValue) {
    let parsed: ToPanel = match serde_wasm_bindgen::from_value(msg) {
        Ok(m) => m,
        Err(e) => {
            chrome::log(&format!("itinero panel: unreadable message: {e}"));
            return;
        }
    };
    let mut p = panel.borrow_mut();
    match parsed {
        ToPanel::Status { status } => {
            p.view.show_status(&status);
            let connected = status.state == ConnectionState::Connected;
            let reconnected = connected && !p.connected;
            p.connected = connected;
            // A page that could not load while the host was away loads now.
            if reconnected {
                refresh_page(&mut p);
            }
        }
        ToPanel::Host { envelope } => {
            let bytes = serde_json::to_vec(&envelope).unwrap_or_default();
            let env = match Envelope::<ToBrowser>::from_json(&bytes) {
                Ok(env) => env,
                Err((_, e)) => {
                    p.view
                        .log("error", &format!("Unreadable reply from the host: {e}"));
                    return;
                }
            };
            if let Some(what) = p.pending.remove(&env.id) {
                return on_reply(&mut p, what, env.msg);
            }
            let ours = p.running.as_ref().is_some_and(|r| r.request_id == env.id);
            match env.msg {
                msg if ours => on_task_message(&mut p, msg),
                // Acknowledgements of Stop and of answers: shown for the running task, so the
                // user sees the host has them; the task's own stream says what follows.
                ToBrowser::TaskEvent(e) => {
                    let running = p.running.as_ref().and_then(|r| r.task_id);
                    if let (TaskEventKind::Note { text }, true) =
                        (e.kind, running == Some(e.task_id))
                    {
                        p.view.log("note", &text);
                    }
                }
                ToBrowser::AskUser(q) if q.started_by.is_some() => {
                    let by = q.started_by.clone().unwrap_or_default();
                    p.outside_question = Some((q.task_id, q.question_id));
                    let shown = format!("A task {by} started asks: {}", q.question);
                    p.view
                        .show_question(&shown, q.kind == "approval", q.can_always, q.from_model);
                    p.view.log("note", &shown);
                }
                ToBrowser::Error(err) => p.view.log(
                    "error",
                    &format!("Host error ({:?}): {}", err.code, err.message),
                ),
                other => p
                    .view
                    .log("info", &format!("Host sent {}", other.type_name())),
            }
        }
    }
}
