//! The skills library's behaviour: what the Skills page and the "Save as skill" offer ask of
//! the host, and what they do with its replies. The DOM is [`super::skills`]'s.

use std::cell::RefCell;
use std::rc::Rc;

use itinero_shared::envelope::MessageSet;
use itinero_shared::messages::{SkillFormat, SkillRequest, SkillResponse, SkillRun, TaskOptions};
use itinero_shared::records::RunId;
use itinero_shared::skills::{Skill, SkillId, SkillSummary};
use itinero_shared::{ToBrowser, ToHost};
use wasm_bindgen::JsValue;

use super::skills::{self, ParamEdit};
use super::{format, now_ms, request, view, Page, Panel, Pending};

/// What a skills request was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkillPending {
    /// The library; `note`: what to say above it once listed (after a delete).
    List {
        note: Option<&'static str>,
    },
    /// `Get` of the skill being opened.
    Open(SkillId),
    /// A rename or a parameter edit; the reply is the edited skill.
    Edit(SkillId),
    Delete(SkillId),
    Export(SkillId),
    Import,
    /// "Save as skill" on the Run page.
    Save,
}

/// The skill open on the Skills page.
pub struct OpenSkill {
    pub id: SkillId,
    /// `None` while it loads.
    pub skill: Option<Skill>,
}

pub fn wire(panel: &Rc<RefCell<Panel>>) -> Result<(), JsValue> {
    let p = panel.borrow();
    let sv = &p.skills;
    let with = |f: fn(&mut Panel)| {
        let panel = panel.clone();
        move || f(&mut panel.borrow_mut())
    };
    view::on_click(&sv.refresh, with(list))?;
    skills::on_search(sv, with(list))?;
    skills::on_skill_click(sv, {
        let panel = panel.clone();
        move |id| open(&mut panel.borrow_mut(), id)
    })?;
    view::on_click(&sv.back, {
        let panel = panel.clone();
        move || {
            let mut p = panel.borrow_mut();
            let was = p.open_skill.take().map(|o| o.id);
            p.skills.show_list(was);
            list(&mut p);
        }
    })?;
    view::on_click(&sv.import, with(import))?;
    skills::on_submit(&sv.run_form, {
        let panel = panel.clone();
        move || run(&panel)
    })?;
    skills::on_submit(&sv.edit_form, with(rename))?;
    skills::on_param_edit(sv, {
        let panel = panel.clone();
        move |edit| edit_param(&mut panel.borrow_mut(), edit)
    })?;
    skills::on_export(sv, {
        let panel = panel.clone();
        move |format| export(&mut panel.borrow_mut(), format)
    })?;
    view::on_click(&sv.delete, with(delete))?;
    view::on_click(&p.save.open, {
        let panel = panel.clone();
        move || panel.borrow().save.show_form(true)
    })?;
    view::on_click(&p.save.cancel, {
        let panel = panel.clone();
        move || panel.borrow().save.show_form(false)
    })?;
    skills::on_submit(&p.save.form, with(save))?;
    Ok(())
}

/// The library, filtered by the search box.
pub fn list(p: &mut Panel) {
    list_noting(p, None);
}

fn list_noting(p: &mut Panel, note: Option<&'static str>) {
    let search = p.skills.search_text();
    p.skills.list_status(note.unwrap_or("Loading…"), "");
    let msg = ToHost::Skills(SkillRequest::List { search });
    request(p, msg, Pending::Skill(SkillPending::List { note }));
}

/// What the Skills page shows when it is opened: the open skill again, or the library.
pub fn refresh(p: &mut Panel) {
    match p.open_skill.as_ref().map(|o| o.id) {
        Some(id) => open(p, id),
        None => list(p),
    }
}

fn open(p: &mut Panel, id: SkillId) {
    p.open_skill = Some(OpenSkill { id, skill: None });
    p.skills.show_loading();
    let msg = ToHost::Skills(SkillRequest::Get { id });
    request(p, msg, Pending::Skill(SkillPending::Open(id)));
}

fn open_id(p: &Panel) -> Option<SkillId> {
    p.open_skill.as_ref().map(|o| o.id)
}

fn open_skill(p: &Panel) -> Option<(SkillId, Skill)> {
    let open = p.open_skill.as_ref()?;
    Some((open.id, open.skill.clone()?))
}

/// Runs the open skill in this window's tab, from the Run page, with the form's values.
fn run(panel: &Rc<RefCell<Panel>>) {
    let (goal, options) = {
        let p = panel.borrow();
        let Some((id, skill)) = open_skill(&p) else {
            return;
        };
        if p.running.is_some() {
            p.skills.detail_status(
                "A task is running: stop it first (on the Run page).",
                "error",
            );
            return;
        }
        let params = match p.skills.read_run_params() {
            Ok(params) => params,
            Err(why) => return p.skills.detail_status(&why, "error"),
        };
        p.skills.detail_status("", "");
        let goal = skills::fill_goal(&skill.goal, &params);
        let options = TaskOptions {
            skill: Some(SkillRun { id, params }),
            ..Default::default()
        };
        (goal, options)
    };
    super::open_page(panel, Page::Run);
    panel.borrow().view.set_goal(&goal);
    super::start_task(panel, goal, options);
}

fn rename(p: &mut Panel) {
    let Some(id) = open_id(p) else {
        return;
    };
    match p.skills.read_name() {
        Ok((name, description)) => {
            p.skills.detail_status("Saving…", "");
            let msg = ToHost::Skills(SkillRequest::Rename {
                id,
                name,
                description,
            });
            request(p, msg, Pending::Skill(SkillPending::Edit(id)));
        }
        Err(why) => p.skills.detail_status(&why, "error"),
    }
}

fn edit_param(p: &mut Panel, edit: Result<ParamEdit, String>) {
    let Some(id) = open_id(p) else {
        return;
    };
    let request_body = match edit {
        Ok(ParamEdit::Rename { from, to }) => SkillRequest::RenameParam { id, from, to },
        Ok(ParamEdit::Unparameterise { name }) => SkillRequest::Unparameterise { id, name },
        Err(why) => return p.skills.detail_status(&why, "error"),
    };
    p.skills.detail_status("Saving…", "");
    let msg = ToHost::Skills(request_body);
    request(p, msg, Pending::Skill(SkillPending::Edit(id)));
}

fn export(p: &mut Panel, format: SkillFormat) {
    let Some((id, skill)) = open_skill(p) else {
        return;
    };
    // A script needs values: those typed to run it, else the examples it was captured with.
    let typed = p.skills.read_run_params().unwrap_or_default();
    let params = skill
        .params
        .iter()
        .map(|param| {
            let value = typed
                .iter()
                .find(|(n, v)| *n == param.name && !v.is_empty())
                .map_or_else(|| param.example.clone(), |(_, v)| v.clone());
            (param.name.clone(), value)
        })
        .collect();
    p.skills.detail_status("Exporting…", "");
    let msg = ToHost::Skills(SkillRequest::Export { id, format, params });
    request(p, msg, Pending::Skill(SkillPending::Export(id)));
}

fn delete(p: &mut Panel) {
    let Some(id) = open_id(p) else {
        return;
    };
    if !skills::arm_delete(&p.skills.delete) {
        return;
    }
    let _ = p.skills.delete.set_attribute("disabled", "");
    p.skills.detail_status("Deleting…", "");
    let msg = ToHost::Skills(SkillRequest::Delete { id });
    request(p, msg, Pending::Skill(SkillPending::Delete(id)));
}

fn import(p: &mut Panel) {
    let text = p.skills.import_text();
    if text.trim().is_empty() {
        return p.skills.import_status(
            "Paste a skill's JSON or a Markdown playbook first.",
            "error",
        );
    }
    p.skills.import_status("Importing…", "");
    let msg = ToHost::Skills(SkillRequest::Import { text });
    request(p, msg, Pending::Skill(SkillPending::Import));
}

/// After a run succeeded: offer to keep it as a skill.
pub fn offer(p: &mut Panel, run: Option<RunId>, goal: &str) {
    p.finished_run = run;
    let name = run.map(|_| skills::suggested_name(goal));
    p.save.offer(name.as_deref());
}

fn save(p: &mut Panel) {
    let Some(run_id) = p.finished_run else {
        return;
    };
    let name = match p.save.name() {
        Ok(name) => name,
        Err(why) => return p.save.failed(&why),
    };
    p.save.saving();
    let msg = ToHost::Skills(SkillRequest::Save {
        run_id,
        name,
        description: String::new(),
    });
    request(p, msg, Pending::Skill(SkillPending::Save));
}

/// `{query}, {size}`, or "no parameters".
fn param_list(summary: &SkillSummary) -> String {
    if summary.params.is_empty() {
        return "no parameters".into();
    }
    let names: Vec<String> = summary
        .params
        .iter()
        .map(|p| format!("{{{}}}", p.name))
        .collect();
    format!("parameters {}", names.join(", "))
}

pub fn on_reply(p: &mut Panel, what: SkillPending, msg: ToBrowser) {
    let reply = match msg {
        ToBrowser::Skills(reply) => reply,
        ToBrowser::Error(err) => return show_error(p, what, &format::sentence(&err.message)),
        other => {
            let why = format!("The host answered with {}.", other.type_name());
            return show_error(p, what, &why);
        }
    };
    match (what, reply) {
        (SkillPending::List { note }, SkillResponse::List { skills }) => {
            p.skills.show_skills(&skills, now_ms());
            let status = match (note, skills.is_empty(), p.skills.search_text()) {
                (Some(note), _, _) => note,
                (None, true, Some(_)) => "No skill matches.",
                (None, true, None) => {
                    "No skills yet: after a run succeeds, “Save as skill” keeps it here."
                }
                (None, false, _) => "",
            };
            p.skills.list_status(status, "");
        }
        (
            SkillPending::Open(id) | SkillPending::Edit(id),
            SkillResponse::Skill { summary, skill },
        ) => {
            if open_id(p) != Some(id) || p.page != Page::Skills {
                return;
            }
            let fresh = matches!(what, SkillPending::Open(_));
            p.skills.show_detail(&summary, &skill, now_ms(), fresh);
            if !fresh {
                p.skills.detail_status("Saved.", "ok");
            }
            p.open_skill = Some(OpenSkill {
                id,
                skill: Some(skill),
            });
        }
        (SkillPending::Delete(id), SkillResponse::Deleted { .. }) => {
            if open_id(p) == Some(id) {
                p.open_skill = None;
                p.skills.show_list(None);
                view::focus(&p.skills.refresh);
            }
            list_noting(p, Some("Skill deleted."));
        }
        (SkillPending::Export(id), SkillResponse::Exported { file_name, text }) => {
            if open_id(p) == Some(id) {
                p.skills.show_export(&file_name, &text);
                p.skills.detail_status("", "");
            }
        }
        (SkillPending::Import, SkillResponse::Imported { what }) => {
            p.skills.clear_import();
            p.skills
                .import_status(&format::sentence(&format!("imported {what}")), "ok");
            list(p);
        }
        (SkillPending::Save, SkillResponse::Skill { summary, .. }) => {
            let text = format!(
                "Saved as the skill “{}” ({}). Run it from Skills, or type a goal like it.",
                summary.name,
                param_list(&summary)
            );
            p.save.saved(&text);
        }
        (what, other) => {
            let why = format!("The host answered {other:?} to {what:?}.");
            show_error(p, what, &why);
        }
    }
}

/// Shows why a skills request failed where its answer would have gone.
pub fn show_error(p: &mut Panel, what: SkillPending, message: &str) {
    match what {
        SkillPending::List { .. } => p.skills.list_status(message, "error"),
        SkillPending::Open(id) | SkillPending::Edit(id) | SkillPending::Export(id) => {
            if open_id(p) == Some(id) {
                p.skills.enable(true);
                p.skills.detail_status(message, "error");
            }
        }
        SkillPending::Delete(id) => {
            if open_id(p) == Some(id) {
                skills::reset_delete(&p.skills.delete);
                p.skills.detail_status(message, "error");
            }
        }
        SkillPending::Import => p.skills.import_status(message, "error"),
        SkillPending::Save => p.save.failed(message),
    }
}
