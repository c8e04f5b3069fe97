//! The agent: how one task decides and acts, step by step, independent of where the page and
//! the model are.
//!
//! `run.rs` is the step loop and the traits it works through (the browser, the panel, the
//! memory, the sign-in hook). A step's decision comes from a chain of [`strategy::Strategy`]s
//! (`cache.rs`: a remembered step; `recovery.rs`: a target that only moved; `grounded.rs`: what
//! the goal names found on the page by `ground/`, with no model, or picked among by the model
//! in `chooser.rs`; `strategy.rs`: the
//! model, asked again when its reply cannot be used; `vote.rs`: several samples; `replay.rs`: a
//! skill's steps; `given.rs`: the steps a program named itself), is checked by `guards.rs` and, for long goals, follows `planner.rs`'s
//! sub-goals. What the model reads is built by `prompt.rs` (with the page written out by
//! `render.rs`) and what it writes is read by `reply.rs`, `parse.rs`, `validate.rs` and
//! `resolve.rs`; `progress.rs` carries a model call's progress to the panel. `memory.rs` is
//! the store's side of a run (record, lessons, examples, the action cache); `skill_run.rs`
//! chooses and heals skills. The chain is assembled for a task by the session
//! (`session/chain.rs`), which sits above this layer.

pub mod cache;
pub mod chooser;
pub mod given;
pub mod ground;
pub mod grounded;
pub mod guards;
pub mod memory;
pub mod parse;
pub mod planner;
pub mod progress;
pub mod prompt;
pub mod recovery;
pub mod render;
pub mod replay;
pub mod reply;
pub mod resolve;
pub mod run;
pub mod short_prompt;
pub mod skill_run;
pub mod strategy;
#[cfg(test)]
pub(crate) mod test_support;
pub mod validate;
pub mod vote;
