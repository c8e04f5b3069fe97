//! Skills: successful runs kept as parameterised step lists (see `itinero_shared::skills`).
//!
//! - `capture`: a run's recorded steps → a skill (what worked, values from the goal as
//!   parameters, URL patterns and what each step should lead to).
//! - `params`: placeholders: filling them, matching a typed goal to a skill, renaming and
//!   un-parameterising.
//! - `export`: a Markdown playbook, JSON that round-trips, a Playwright script.
//! - `import`: JSON skills (checked) and Markdown playbooks (kept as hints for the model).
//! - `words`: a step in words, for notes and playbooks.
//!
//! The store keeps skills (`store/skills.rs`); replaying them is the agent's job.

pub mod capture;
pub mod export;
pub mod import;
pub mod library;
pub mod params;
pub mod words;

#[cfg(test)]
pub(crate) mod test_support;

pub use capture::{capture, CaptureError};
pub use export::{to_json, to_markdown, to_playwright};
pub use import::{from_json, from_markdown, ImportError, Playbook};
pub use params::{fill, instantiate, match_goal, rename_param, unparameterise, ParamError};
