//! Imports: a skill's JSON (checked before it is stored, since it may be hand-edited or come
//! from someone else) and Markdown playbooks, which are not replayable and are kept as hints
//! the model reads on that site.

use std::collections::HashSet;

use itinero_shared::action::Action;
use itinero_shared::skills::{Postcondition, Skill, SKILL_FORMAT};
use thiserror::Error;

use super::params::{placeholders, valid_name};
use crate::store::origin_of;

/// The longest playbook kept: it goes into the model's prompt on its site.
pub const MAX_PLAYBOOK_CHARS: usize = 8000;

#[derive(Debug, Error)]
pub enum ImportError {
    #[error("this is not a skill's JSON: {0}")]
    Json(#[from] serde_json::Error),

    #[error(
        "the skill is in format {found}, newer than this itinero-host reads ({known}); \
         update itinero-host to import it"
    )]
    NewerFormat { found: u64, known: u32 },

    #[error("the skill has no name")]
    NoName,

    #[error("the skill's origin {0:?} is not a site (expected e.g. https://shop.example)")]
    BadOrigin(String),

    #[error("the skill has no steps")]
    NoSteps,

    #[error("{0:?} is not a parameter name: use lowercase letters, digits and _")]
    BadParamName(String),

    #[error("parameter {0:?} is declared twice")]
    DuplicateParam(String),

    #[error("{place} uses {{{name}}}, which is not one of the skill's parameters ({known})")]
    UndeclaredParam {
        place: String,
        name: String,
        known: String,
    },

    #[error(
        "the playbook has no `Site:` line saying where it applies (e.g. `Site: https://shop.example`)"
    )]
    NoSite,

    #[error("the playbook's site {0:?} is not a web address (expected e.g. https://shop.example)")]
    BadSite(String),

    #[error("the playbook is empty")]
    EmptyPlaybook,

    #[error(
        "the playbook is {chars} characters long; at most {MAX_PLAYBOOK_CHARS} are kept (it is \
         given to the model): shorten it"
    )]
    PlaybookTooLong { chars: usize },
}

/// A skill from its JSON, checked: a format this host reads, a name, a site, steps, and every
/// placeholder a declared parameter. The origin is normalised (`https://Shop.Example:443/` →
/// `https://shop.example`).
pub fn from_json(text: &str) -> Result<Skill, ImportError> {
    let value: serde_json::Value = serde_json::from_str(text)?;
    if let Some(found) = value.get("format").and_then(serde_json::Value::as_u64) {
        if found > u64::from(SKILL_FORMAT) {
            return Err(ImportError::NewerFormat {
                found,
                known: SKILL_FORMAT,
            });
        }
    }
    let mut skill: Skill = serde_json::from_value(value)?;
    validate(&skill)?;
    if let Some(origin) = origin_of(&skill.origin) {
        skill.origin = origin;
    }
    Ok(skill)
}

/// Checks what a stored skill must have; see [`from_json`].
pub fn validate(skill: &Skill) -> Result<(), ImportError> {
    if skill.name.trim().is_empty() {
        return Err(ImportError::NoName);
    }
    if origin_of(&skill.origin).is_none() {
        return Err(ImportError::BadOrigin(skill.origin.clone()));
    }
    if skill.steps.is_empty() {
        return Err(ImportError::NoSteps);
    }
    let mut declared = HashSet::new();
    for p in &skill.params {
        if !valid_name(&p.name) {
            return Err(ImportError::BadParamName(p.name.clone()));
        }
        if !declared.insert(p.name.as_str()) {
            return Err(ImportError::DuplicateParam(p.name.clone()));
        }
    }
    let known = || {
        if skill.params.is_empty() {
            "it has none".to_owned()
        } else {
            let names: Vec<&str> = skill.params.iter().map(|p| p.name.as_str()).collect();
            names.join(", ")
        }
    };
    let check = |place: String, text: &str| -> Result<(), ImportError> {
        match placeholders(text).into_iter().find(|n| !declared.contains(n)) {
            Some(name) => Err(ImportError::UndeclaredParam {
                place,
                name: name.to_owned(),
                known: known(),
            }),
            None => Ok(()),
        }
    };
    check("the goal".into(), &skill.goal)?;
    for (i, step) in skill.steps.iter().enumerate() {
        let place = || format!("step {}", i + 1);
        match &step.action {
            Action::Type { text, .. } => check(place(), text)?,
            Action::Select { value, .. } => check(place(), value)?,
            Action::Navigate { url } => check(place(), url)?,
            Action::Done { answer, .. } => check(place(), answer)?,
            Action::AskUser { question } => check(place(), question)?,
            _ => {}
        }
        for expect in &step.expect {
            if let Postcondition::Value { value } = expect {
                check(format!("step {}'s expected value", i + 1), value)?;
            }
        }
        check(format!("step {}'s note", i + 1), &step.note)?;
    }
    Ok(())
}

/// A Markdown playbook, kept as a hint for the model on its site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Playbook {
    /// `scheme://host[:port]` from its `Site:` line.
    pub origin: String,
    /// Its first heading (or first line).
    pub title: String,
    /// The whole playbook, trimmed.
    pub text: String,
}

/// Reads a playbook: ours (`to_markdown`) or one written by hand, as long as it has a
/// `Site: https://…` line (in a list, in bold, or as a link, too).
pub fn from_markdown(text: &str) -> Result<Playbook, ImportError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(ImportError::EmptyPlaybook);
    }
    let chars = text.chars().count();
    if chars > MAX_PLAYBOOK_CHARS {
        return Err(ImportError::PlaybookTooLong { chars });
    }
    let site = text.lines().find_map(site_line).ok_or(ImportError::NoSite)?;
    let origin = origin_of(&site)
        .or_else(|| {
            (!site.contains("://"))
                .then(|| origin_of(&format!("https://{site}")))
                .flatten()
        })
        .ok_or_else(|| ImportError::BadSite(site.clone()))?;
    let title = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("# ").map(str::trim))
        .or_else(|| text.lines().map(str::trim).find(|l| !l.is_empty()))
        .unwrap_or_default()
        .to_owned();
    Ok(Playbook {
        origin,
        title,
        text: text.to_owned(),
    })
}

/// The address on a `Site:` line, with Markdown decoration taken off: `- **Site:** <url>`,
/// `Site: [shop](https://…)`, `` Site: `https://…` ``.
fn site_line(line: &str) -> Option<String> {
    let bare: String = line
        .trim()
        .trim_start_matches(['-', '*', '>', '+'])
        .replace("**", "")
        .replace("__", "");
    let bare = bare.trim();
    let (key, rest) = bare.split_once(':')?;
    if !key.trim().eq_ignore_ascii_case("site") {
        return None;
    }
    let mut value = rest.trim();
    if let Some(start) = value.find("](") {
        value = value[start + 2..].split(')').next().unwrap_or_default();
    }
    let value = value.trim_matches(|c: char| c == '`' || c == '<' || c == '>' || c.is_whitespace());
    (!value.is_empty()).then(|| value.to_owned())
}
