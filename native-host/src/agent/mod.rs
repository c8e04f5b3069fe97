//! The agent: from a model's reply to an action the browser can carry out.
//!
//! So far: the reply format the model is taught (`reply`), reading it out of whatever a model
//! writes (`parse`), and checking it against the page it was decided on (`validate`). The loop,
//! the prompt and the guards come next (issue 4).

pub mod parse;
pub mod prompt;
pub mod reply;
pub mod validate;
