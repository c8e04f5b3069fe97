//! The panel's skill requests, answered from the store (on its blocking pool, like the other
//! store requests). Running a skill is not here: it is a task (`TaskOptions::skill`).

use itinero_shared::messages::{SkillRequest, SkillResponse};
use itinero_shared::skills::{Skill, SkillId, SkillSummary};

use crate::skills::library::{self, Imported, LibraryError};
use crate::skills::params;
use crate::store::{Store, StoreError};

fn invalid(e: impl std::fmt::Display) -> StoreError {
    StoreError::Invalid(e.to_string())
}

impl From<LibraryError> for StoreError {
    fn from(e: LibraryError) -> Self {
        match e {
            LibraryError::Store(e) => e,
            other => invalid(other),
        }
    }
}

fn summary(store: &Store, id: SkillId) -> Result<SkillSummary, StoreError> {
    store.skill_summary(id)?.ok_or(StoreError::NoSuchSkill(id))
}

fn whole(store: &Store, id: SkillId) -> Result<SkillResponse, StoreError> {
    let skill = store.skill(id)?.ok_or(StoreError::NoSuchSkill(id))?.skill;
    Ok(SkillResponse::Skill {
        summary: summary(store, id)?,
        skill,
    })
}

/// Applies `edit` to the stored skill and saves it.
fn edit(
    store: &Store,
    id: SkillId,
    edit: impl FnOnce(&mut Skill) -> Result<(), StoreError>,
) -> Result<SkillResponse, StoreError> {
    let mut skill = store.skill(id)?.ok_or(StoreError::NoSuchSkill(id))?.skill;
    edit(&mut skill)?;
    store.update_skill(id, &skill, None)?;
    whole(store, id)
}

pub fn reply(store: &Store, request: SkillRequest) -> Result<SkillResponse, StoreError> {
    Ok(match request {
        SkillRequest::List { search } => SkillResponse::List {
            skills: store.list_skills(search.as_deref().filter(|s| !s.trim().is_empty()))?,
        },
        SkillRequest::Get { id } => whole(store, id)?,
        SkillRequest::Save {
            run_id,
            name,
            description,
        } => {
            let (id, _) = library::capture_run(store, run_id, &name, Some(&description))?;
            whole(store, id)?
        }
        SkillRequest::Rename {
            id,
            name,
            description,
        } => edit(store, id, |s| {
            let name = name.trim();
            if name.is_empty() {
                return Err(invalid("a skill needs a name"));
            }
            s.name = name.to_owned();
            s.description = description.trim().to_owned();
            Ok(())
        })?,
        SkillRequest::RenameParam { id, from, to } => edit(store, id, |s| {
            params::rename_param(s, &from, &to).map_err(invalid)
        })?,
        SkillRequest::Unparameterise { id, name } => edit(store, id, |s| {
            params::unparameterise(s, &name).map_err(invalid)
        })?,
        SkillRequest::Delete { id } => SkillResponse::Deleted {
            existed: store.delete_skill(id)?,
        },
        SkillRequest::Export { id, format, params } => {
            let skill = store.skill(id)?.ok_or(StoreError::NoSuchSkill(id))?.skill;
            let (file_name, text) = library::export_text(&skill, format, &params)?;
            SkillResponse::Exported { file_name, text }
        }
        SkillRequest::Import { text } => SkillResponse::Imported {
            what: match library::import_text(store, &text, None)? {
                Imported::Skill { skill, .. } => format!(
                    "the skill \"{}\" ({} steps on {})",
                    skill.name,
                    skill.steps.len(),
                    skill.origin
                ),
                Imported::Playbook { title, origin, .. } => {
                    format!("the playbook \"{title}\", as a hint for {origin}")
                }
            },
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills::{export, test_support::shop_skill};
    use itinero_shared::messages::SkillFormat;

    #[test]
    fn the_panel_lists_renames_exports_and_deletes_a_skill() {
        let store = Store::open_in_memory().unwrap();
        let json = export::to_json(&shop_skill());
        let SkillResponse::Imported { what } =
            reply(&store, SkillRequest::Import { text: json }).unwrap()
        else {
            panic!()
        };
        assert!(what.starts_with("the skill"), "{what}");
        let SkillResponse::List { skills } =
            reply(&store, SkillRequest::List { search: None }).unwrap()
        else {
            panic!()
        };
        let id = skills[0].id;
        let renamed = reply(
            &store,
            SkillRequest::Rename {
                id,
                name: "Buy socks".into(),
                description: "d".into(),
            },
        )
        .unwrap();
        assert!(
            matches!(renamed, SkillResponse::Skill { ref summary, .. } if summary.name == "Buy socks")
        );
        let err = reply(
            &store,
            SkillRequest::Rename {
                id,
                name: " ".into(),
                description: String::new(),
            },
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "a skill needs a name");
        let SkillResponse::Exported { file_name, text } = reply(
            &store,
            SkillRequest::Export {
                id,
                format: SkillFormat::Markdown,
                params: vec![],
            },
        )
        .unwrap() else {
            panic!()
        };
        assert_eq!(file_name, "buy-socks.md");
        assert!(text.contains("Buy socks"), "{text}");
        assert!(matches!(
            reply(&store, SkillRequest::Delete { id }).unwrap(),
            SkillResponse::Deleted { existed: true }
        ));
        assert!(matches!(
            reply(&store, SkillRequest::Get { id }),
            Err(StoreError::NoSuchSkill(_))
        ));
    }
}
