//! The store's errors. Each says what the store was doing, so a line in the host's log or an
//! error in the panel is enough to act on.

use std::path::PathBuf;

use itinero_shared::records::RunId;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum StoreError {
    #[error("cannot create the store's directory {path}: {source}")]
    CreateDir {
        path: PathBuf,
        source: std::io::Error,
    },

    #[error("cannot create the store {path}: {source}")]
    CreateFile {
        path: PathBuf,
        source: std::io::Error,
    },

    #[error("cannot open the store {path}: {source}")]
    Open {
        path: String,
        source: rusqlite::Error,
    },

    #[error(
        "the store {path} is damaged ({detail}). Move it aside (`mv {path} {path}.damaged`) and \
         start the browser again: itinero then makes a new, empty store; the old file keeps its \
         runs, skills and sealed sign-ins for a recovery tool"
    )]
    Damaged { path: String, detail: String },

    #[error(
        "the store {path} has schema version {found}, newer than this itinero-host knows \
         ({known}); it was written by a newer itinero-host: update this one"
    )]
    TooNew {
        path: String,
        found: u32,
        known: u32,
    },

    #[error("cannot update the store {path} to schema version {version} ({name}): {source}")]
    Migrate {
        path: String,
        version: u32,
        name: &'static str,
        source: rusqlite::Error,
    },

    /// A statement failed; `doing` says what it was for ("recording step 3 of run 7").
    #[error("{doing}: {source}")]
    Sql {
        doing: String,
        source: rusqlite::Error,
    },

    #[error("there is no run {0}")]
    NoSuchRun(RunId),

    #[error("run {run} kept no picture after step {n}")]
    NoSuchPicture { run: RunId, n: u32 },

    #[error("step {n} of run {run} is already recorded")]
    StepExists { run: RunId, n: u32 },

    #[error(
        "there is already a skill named {0:?}; choose another name or delete that skill first"
    )]
    SkillNameTaken(String),

    #[error("there is no skill {0}")]
    NoSuchSkill(itinero_shared::skills::SkillId),

    #[error("{0:?} is not a web address or origin (expected e.g. https://shop.example)")]
    NotAnOrigin(String),

    /// A request the store cannot take: a value out of range, an empty text.
    #[error("{0}")]
    Invalid(String),

    /// A call on the blocking pool panicked or was cancelled.
    #[error("the store call did not finish: {0}")]
    CallFailed(String),

    #[error("stored {what} cannot be read: {source}")]
    Corrupt {
        what: String,
        source: serde_json::Error,
    },
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// Adds what the store was doing to a SQLite error.
pub(crate) trait Doing<T> {
    fn doing(self, what: impl FnOnce() -> String) -> Result<T>;
}

impl<T> Doing<T> for rusqlite::Result<T> {
    fn doing(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|source| StoreError::Sql {
            doing: what(),
            source,
        })
    }
}
