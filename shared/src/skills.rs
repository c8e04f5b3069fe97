//! Skills: successful runs kept as parameterised step lists that replay without a model.
//!
//! A skill crosses the boundary whole (the panel shows, edits and exports it) and is stored as
//! this JSON, so every field has a default that lets an older or hand-written skill still read.
//! Targets are kept as fingerprints, never as indices: an index means nothing on a later visit.

use serde::{Deserialize, Serialize};

use crate::action::{Action, Fingerprint};

/// A skill's id in the store.
pub type SkillId = i64;

/// The current version of the skill JSON; `import` refuses newer ones by name.
pub const SKILL_FORMAT: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Skill {
    #[serde(default = "format")]
    pub format: u32,
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// `scheme://host[:port]` the skill works on; replay never leaves it unless a step navigates.
    pub origin: String,
    /// The goal with its parameters in braces: `Search for {query} and add it to the cart`.
    /// A typed goal that matches it (parameters taken from it) proposes the skill.
    pub goal: String,
    /// Where the run started; replay navigates here first when the tab is elsewhere.
    pub start_url: String,
    #[serde(default)]
    pub params: Vec<Param>,
    pub steps: Vec<SkillStep>,
}

fn format() -> u32 {
    SKILL_FORMAT
}

/// A value the skill takes: typed during the run, found in the goal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Param {
    /// Used as `{name}` in the goal and in typed text; letters, digits and `_`.
    pub name: String,
    /// The value it had when the skill was captured, shown as an example.
    #[serde(default)]
    pub example: String,
}

/// One recorded action with what must hold before and after it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillStep {
    /// The action; text may hold `{param}` placeholders (and `{{secret:…}}` vault references,
    /// never a secret's value). A target's index is meaningless: its fingerprint is resolved.
    pub action: Action,
    /// The page the step expects to act on, as a URL pattern (`*` for ids and numbers).
    pub url: String,
    /// What was seen after the step; replay checks it before going on.
    #[serde(default)]
    pub expect: Vec<Postcondition>,
    /// The step in words, for playbooks and the panel, e.g. `click button "Add to cart"`.
    #[serde(default)]
    pub note: String,
}

/// Something observed after a step that a replay must see too.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[allow(clippy::large_enum_variant)] // a few per step, cloned rarely: not worth a box in the JSON's type
pub enum Postcondition {
    /// The page moved to a URL matching the pattern.
    Url { pattern: String },
    /// An element like this one is on the page.
    Appeared { fingerprint: Box<Fingerprint> },
    /// The target now holds this value (placeholders allowed).
    Value { value: String },
}

/// A skill as the library lists it, with its statistics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillSummary {
    pub id: SkillId,
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub origin: String,
    pub goal: String,
    #[serde(default)]
    pub params: Vec<Param>,
    pub steps: u32,
    #[serde(default)]
    pub stats: SkillStats,
    /// Unix milliseconds.
    pub updated_at: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SkillStats {
    pub runs: u32,
    pub succeeded: u32,
    /// Unix milliseconds of the last run's start.
    #[serde(default)]
    pub last_run: Option<i64>,
    /// Mean wall time of finished runs.
    #[serde(default)]
    pub average_ms: Option<u64>,
}
