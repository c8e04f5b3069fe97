//! Subcommands for people (as opposed to the stdio protocol the browser speaks).

pub mod act;
pub mod doctor;
pub mod host;
pub mod install;
pub mod models;
pub mod models_bench;
pub mod observe;
pub mod skills;
pub mod tabs;
pub mod task;
pub mod vault;
