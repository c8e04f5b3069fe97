//! Subcommands for people (as opposed to the stdio protocol the browser speaks), one file each.
//!
//! Those that need the browser or the running host's memory (`tabs`, `observe`, `act`, `run`,
//! `skills run`, `vault unlock|lock`) reach it through the control socket (`host.rs` picks the
//! host); the others work on files and on the store directly, so they need no browser.

pub mod act;
pub mod doctor;
pub mod host;
pub mod install;
pub mod models;
pub mod models_bench;
pub mod models_pull;
pub mod observe;
pub mod skills;
pub mod tabs;
pub mod task;
pub mod vault;
