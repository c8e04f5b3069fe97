//! Subcommands for people (as opposed to the stdio protocol the browser speaks).

pub mod doctor;
pub mod install;
