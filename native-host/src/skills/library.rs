//! What the CLI and the panel both do with the skills library: save a stored run as a skill,
//! import a skill or a playbook, export a skill. One place, so both say the same things.

use itinero_shared::messages::SkillFormat;
use itinero_shared::records::{LessonId, RunId, RunStatus};
use itinero_shared::skills::{Skill, SkillId};
use thiserror::Error;

use super::{capture, export, import, CaptureError, ImportError, ParamError};
use crate::store::{Store, StoreError};

#[derive(Debug, Error)]
pub enum LibraryError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("there is no run {0}; the panel's History lists the runs with their ids")]
    NoRun(RunId),
    #[error("run {run} ended {status}; only a successful run can be saved as a skill")]
    NotSucceeded { run: RunId, status: RunStatus },
    #[error("cannot make a skill of run {run}: {source}")]
    Capture { run: RunId, source: CaptureError },
    #[error(transparent)]
    Import(#[from] ImportError),
    #[error(transparent)]
    Param(#[from] ParamError),
    #[error("a skill needs a name")]
    NoName,
}

/// Saves the succeeded run `run` as the skill `name`.
pub fn capture_run(
    store: &Store,
    run: RunId,
    name: &str,
    description: Option<&str>,
) -> Result<(SkillId, Skill), LibraryError> {
    let name = name.trim();
    if name.is_empty() {
        return Err(LibraryError::NoName);
    }
    let detail = store.run_detail(run)?.ok_or(LibraryError::NoRun(run))?;
    if detail.run.status != RunStatus::Succeeded {
        return Err(LibraryError::NotSucceeded {
            run,
            status: detail.run.status,
        });
    }
    let mut skill = capture(&detail.run.goal, &detail.run.start_url, &detail.steps)
        .map_err(|source| LibraryError::Capture { run, source })?;
    skill.name = name.to_owned();
    if let Some(d) = description.map(str::trim).filter(|d| !d.is_empty()) {
        skill.description = d.to_owned();
    }
    let id = store.save_skill(&skill, Some(run))?;
    Ok((id, skill))
}

/// What an import kept.
#[derive(Debug, Clone, PartialEq)]
pub enum Imported {
    Skill {
        id: SkillId,
        skill: Skill,
    },
    /// A playbook, kept as a hint (a lesson) for its site.
    Playbook {
        title: String,
        origin: String,
        lesson: LessonId,
    },
}

/// Imports a skill's JSON (by content: it starts with `{`), stored under `name` if given, or a
/// Markdown playbook.
pub fn import_text(
    store: &Store,
    text: &str,
    name: Option<&str>,
) -> Result<Imported, LibraryError> {
    if text.trim_start().starts_with('{') {
        let mut skill = import::from_json(text)?;
        if let Some(name) = name.map(str::trim).filter(|n| !n.is_empty()) {
            skill.name = name.to_owned();
        }
        let id = store.save_skill(&skill, None)?;
        Ok(Imported::Skill { id, skill })
    } else {
        let playbook = import::from_markdown(text)?;
        let lesson = store.add_lesson(&playbook.origin, &playbook.text, "playbook", None)?;
        Ok(Imported::Playbook {
            title: playbook.title,
            origin: playbook.origin,
            lesson,
        })
    }
}

/// A file name from the skill's name: `Add to cart` → `add-to-cart`.
fn stem(name: &str) -> String {
    let s: Vec<String> = name
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect();
    if s.is_empty() {
        "skill".to_owned()
    } else {
        s.join("-")
    }
}

/// The skill in `format`, with a file name for it.
pub fn export_text(
    skill: &Skill,
    format: SkillFormat,
    values: &[(String, String)],
) -> Result<(String, String), LibraryError> {
    let stem = stem(&skill.name);
    Ok(match format {
        SkillFormat::Markdown => (format!("{stem}.md"), export::to_markdown(skill)),
        SkillFormat::Json => (format!("{stem}.skill.json"), export::to_json(skill)),
        SkillFormat::Playwright => (
            format!("{stem}.playwright.js"),
            export::to_playwright(skill, values)?,
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_come_from_the_skill_name() {
        assert_eq!(stem("Add to cart!"), "add-to-cart");
        assert_eq!(stem("  ?? "), "skill");
    }
}
