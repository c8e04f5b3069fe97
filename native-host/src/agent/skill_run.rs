//! Running a task as a skill: choosing it (named by the task, or proposed because the typed goal
//! matches a skill's goal), preparing its replay, and healing it after a run in which the model
//! had to take over and that succeeded.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use itinero_shared::messages::SkillRun;
use itinero_shared::records::RunId;
use itinero_shared::skills::{Skill, SkillId};

use super::replay::Script;
use super::run::{said_yes, Ask, Panel};
use crate::skills::{self, params};
use crate::store::Store;

/// A skill chosen for a task, with its parameter values.
#[derive(Debug, Clone)]
pub struct Chosen {
    pub id: SkillId,
    pub skill: Skill,
    pub values: Vec<(String, String)>,
    /// Set by the replay when the model had to take over.
    pub diverged: Arc<AtomicBool>,
}

impl Chosen {
    /// The skill's steps with the values filled in, ready for [`super::replay::Replay`].
    pub fn script(&self) -> Result<Script, params::ParamError> {
        Ok(Script {
            name: self.skill.name.clone(),
            start_url: params::fill(&self.skill.start_url, &self.values)?,
            steps: params::instantiate(&self.skill, &self.values)?,
        })
    }
}

fn load(store: &Store, run: &SkillRun) -> Result<Chosen, String> {
    let stored = store
        .skill(run.id)
        .map_err(|e| format!("cannot read skill {}: {e}", run.id))?
        .ok_or_else(|| format!("there is no skill {} (was it deleted?)", run.id))?;
    params::check_values(&stored.skill, &run.params)
        .map_err(|e| format!("cannot run the skill \"{}\": {e}", stored.skill.name))?;
    Ok(Chosen {
        id: stored.id,
        skill: stored.skill,
        values: run.params.clone(),
        diverged: Arc::default(),
    })
}

/// The skill the task asked for; otherwise one whose goal matches `goal`, if the user agrees
/// when asked. `Err` when the named skill cannot run (the task ends saying why).
pub async fn choose(
    store: Option<&Store>,
    named: Option<&SkillRun>,
    goal: &str,
    panel: &dyn Panel,
) -> Result<Option<Chosen>, String> {
    let Some(store) = store else {
        return match named {
            Some(_) => Err("skills need the store, which could not be opened".into()),
            None => Ok(None),
        };
    };
    if let Some(run) = named {
        return load_off_worker(store, run.clone()).await.map(Some);
    }
    let summaries = match store.call(|s| s.list_skills(None)).await {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(error = %e, "cannot list skills; the task goes on without them");
            return Ok(None);
        }
    };
    let Some((summary, values)) = summaries
        .into_iter()
        .find_map(|s| params::match_goal(&s.goal, goal).map(|v| (s, v)))
    else {
        return Ok(None);
    };
    let shown: Vec<String> = values.iter().map(|(k, v)| format!("{k} = {v:?}")).collect();
    let question = format!(
        "Use the skill \"{}\"? It replays its {} steps without the model{}.",
        summary.name,
        summary.steps,
        if shown.is_empty() {
            String::new()
        } else {
            format!(" ({})", shown.join(", "))
        }
    );
    let agreed = panel
        .ask(&question, Ask::Approval { can_always: false })
        .await
        .is_some_and(|a| said_yes(&a));
    if !agreed {
        return Ok(None);
    }
    let run = SkillRun {
        id: summary.id,
        params: values,
    };
    load_off_worker(store, run).await.map(Some)
}

/// [`load`] on the store's blocking pool.
async fn load_off_worker(store: &Store, run: SkillRun) -> Result<Chosen, String> {
    store
        .call(move |s| Ok(load(s, &run)))
        .await
        .unwrap_or_else(|e| Err(format!("cannot read the skill: {e}")))
}

/// After a successful run that the model had to finish: the skill is captured again from this
/// run, keeping its name, description and parameter names. Returns what to tell the user.
pub fn heal(store: &Store, chosen: &Chosen, run: RunId) -> Option<String> {
    if !chosen.diverged.load(Ordering::SeqCst) {
        return None;
    }
    let healed = (|| -> Result<Skill, String> {
        let detail = store
            .run_detail(run)
            .map_err(|e| e.to_string())?
            .ok_or("the run is gone")?;
        let mut healed = skills::capture(&detail.run.goal, &detail.run.start_url, &detail.steps)
            .map_err(|e| e.to_string())?;
        // The same values under the names the user knows.
        for p in healed.params.clone() {
            if let Some((name, _)) = chosen
                .values
                .iter()
                .find(|(_, v)| v.trim().eq_ignore_ascii_case(p.example.trim()))
            {
                if *name != p.name {
                    params::rename_param(&mut healed, &p.name, name).map_err(|e| e.to_string())?;
                }
            }
        }
        healed.name = chosen.skill.name.clone();
        healed.description = chosen.skill.description.clone();
        store
            .update_skill(chosen.id, &healed, Some(run))
            .map_err(|e| e.to_string())?;
        Ok(healed)
    })();
    Some(match healed {
        Ok(s) => format!(
            "The skill \"{}\" was updated from this run ({} steps).",
            s.name,
            s.steps.len()
        ),
        Err(e) => {
            tracing::warn!(skill = %chosen.skill.name, error = %e, "cannot heal the skill");
            format!(
                "The skill \"{}\" could not be updated: {e}",
                chosen.skill.name
            )
        }
    })
}
