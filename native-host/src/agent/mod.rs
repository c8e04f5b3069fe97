//! The agent: from a model's reply to an action the browser can carry out.
//!
//! So far: the reply format the model is taught (`reply`), the prompt (`prompt`), reading a reply
//! out of whatever a model writes (`parse`), checking it against the page it was decided on
//! (`validate`), and the strategy chain that puts them together (`strategy`: the model, and asking
//! again with the reason). The loop, the guards and the other decorators come next (issue 4).

pub mod cache;
pub mod guards;
pub mod memory;
pub mod parse;
pub mod planner;
pub mod prompt;
pub mod recovery;
pub mod render;
pub mod replay;
pub mod reply;
pub mod resolve;
pub mod run;
pub mod skill_run;
pub mod strategy;
#[cfg(test)]
pub(crate) mod test_support;
pub mod validate;
pub mod vote;
