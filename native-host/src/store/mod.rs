//! The host's memory: one SQLite file in the data directory (`itinero.sqlite3`, created mode
//! 0600) with the run history (runs and their steps), the settings, per-site "always allow" for
//! risky actions, the lessons users taught the agent, the action cache, the skills library and
//! the vault's sealed credentials.
//!
//! - [`Store`] is a cheap-to-clone handle on one connection behind a mutex. Its methods are
//!   synchronous and short (a few statements each); async code calls them through
//!   [`Store::call`], which runs them on tokio's blocking pool, so a slow disk or another host's
//!   write never holds up one of the runtime's two workers.
//! - The file is opened in WAL mode (readers never wait for the writer; a killed process
//!   leaves a consistent database), with foreign keys on and a busy timeout, since several
//!   hosts (one per browser profile) can share it.
//! - The schema comes from numbered migrations (`migrate.rs`, SQL in `migrations/`).
//! - Every write that belongs together is one transaction (a step and its run's step count).
//! - Secrets are never written here in the clear: credentials and model servers' API keys are
//!   in the vault's tables (`vault.rs`, `api_keys.rs`), sealed by `crate::vault` with a key the
//!   store never sees.
//!
//! One file per job: `runs.rs` (history), `settings.rs`, `approvals.rs`, `lessons.rs`,
//! `cache.rs` (the action cache's table), `trajectories.rs` (past runs as examples for the
//! model), `skills.rs` (the skills library and its statistics), `vault.rs` (sealed credentials,
//! sign-in consent, the audit list), `api_keys.rs` (the vault's sealed API keys of model
//! servers); `migrate.rs` (schema), `host_process.rs` (is a run's host
//! alive), `site.rs` (origins), `slot.rs` (the store or why there is none), `error.rs`.
//! The panel's requests for what the store keeps are answered by the session
//! (`session/panel_requests.rs`).

mod api_keys;
mod approvals;
mod cache;
mod error;
mod host_process;
mod lessons;
mod migrate;
mod pictures;
mod runs;
mod settings;
mod site;
mod skills;
mod slot;
mod stats;
mod trajectories;
mod vault;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::Connection;

pub use cache::{CacheEntry, CacheKey, CacheStats};
use error::Doing;
pub use error::{Result, StoreError};
pub use migrate::latest_version;
pub use pictures::{MAX_PICTURE_BYTES, OVER_ALLOWANCE, RUN_ALLOWANCE};
pub use runs::NewRun;
pub use site::origin_of;
pub use skills::StoredSkill;
pub use slot::StoreSlot;
pub use stats::{
    busiest_sites, civil_from_days as civil_date, days_ago, summarise, Period, RunFacts,
};
pub use trajectories::Trajectory;
pub use vault::{NewSealed, SealedCredential, VaultMeta};

pub use crate::paths::STORE_FILE_NAME as FILE_NAME;

/// How long a statement waits for another host's write to finish before it fails.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// A handle on the store; clones share one connection.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    conn: Mutex<Connection>,
    /// The file, or `:memory:`; named in errors.
    name: String,
    /// Runs found `running` from a host that is gone, marked interrupted when this handle opened.
    interrupted_at_open: usize,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("name", &self.inner.name)
            .finish_non_exhaustive()
    }
}

impl Store {
    /// Opens (creating it and its directory if missing) the store at `path`, brings its schema
    /// up to date, and marks the runs of hosts that died mid-run as interrupted.
    pub fn open(path: &Path) -> Result<Store> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::CreateDir {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        let name = path.display().to_string();
        let open_failed = |source| StoreError::Open {
            path: name.clone(),
            source,
        };
        create_private(path).map_err(|source| StoreError::CreateFile {
            path: path.to_path_buf(),
            source,
        })?;
        let conn = Connection::open(path).map_err(open_failed)?;
        Self::init(conn, name)
    }

    /// The store's file; `None` for a store in memory.
    pub fn path(&self) -> Option<&Path> {
        (self.inner.name != ":memory:").then(|| Path::new(&self.inner.name))
    }

    /// The store at its usual place: [`FILE_NAME`] in the host's data directory.
    pub fn open_default() -> anyhow::Result<Store> {
        let path = default_path()?;
        Ok(Store::open(&path)?)
    }

    /// A store that lives in memory and ends with its last handle (tests; sessions that keep
    /// nothing).
    pub fn open_in_memory() -> Result<Store> {
        let conn = Connection::open_in_memory().map_err(|source| StoreError::Open {
            path: ":memory:".into(),
            source,
        })?;
        Self::init(conn, ":memory:".into())
    }

    fn init(mut conn: Connection, name: String) -> Result<Store> {
        let failed = |source| StoreError::Open {
            path: name.clone(),
            source,
        };
        conn.busy_timeout(BUSY_TIMEOUT).map_err(failed)?;
        check_sound(&conn, &name)?;
        // WAL: a reader never waits for a writer, and a process killed mid-write leaves the
        // last committed state. NORMAL sync is durable against a killed process; only a power
        // cut can lose the latest commits, never consistency.
        let _mode: String = conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .map_err(failed)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(failed)?;
        conn.pragma_update(None, "foreign_keys", true)
            .map_err(failed)?;
        migrate::migrate(&mut conn, &name)?;
        let interrupted_at_open = runs::interrupt_orphans(&conn)?;
        if interrupted_at_open > 0 {
            tracing::warn!(
                runs = interrupted_at_open,
                store = %name,
                "runs left running by a host that ended are marked interrupted"
            );
        }
        Ok(Store {
            inner: Arc::new(Inner {
                conn: Mutex::new(conn),
                name,
                interrupted_at_open,
            }),
        })
    }

    /// How many runs [`Store::open`] found `running` from a host that is gone and marked
    /// interrupted.
    pub fn interrupted_at_open(&self) -> usize {
        self.inner.interrupted_at_open
    }

    /// The file this store lives in, or `:memory:`.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// Runs `f` on tokio's blocking pool, so a store call in async code never stalls the
    /// runtime's workers while another host holds the write lock.
    pub async fn call<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Store) -> Result<T> + Send + 'static,
    {
        let store = self.clone();
        tokio::task::spawn_blocking(move || f(&store))
            .await
            .unwrap_or_else(|join| Err(StoreError::CallFailed(join.to_string())))
    }

    /// `PRAGMA integrity_check`: `Ok(())` or SQLite's list of problems.
    pub fn integrity_check(&self) -> Result<Result<(), String>> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare("PRAGMA integrity_check")
            .doing(|| "checking the store's integrity".into())?;
        let lines: Vec<String> = stmt
            .query_map([], |r| r.get(0))
            .and_then(|rows| rows.collect())
            .doing(|| "checking the store's integrity".into())?;
        Ok(if lines == ["ok"] {
            Ok(())
        } else {
            Err(lines.join("; "))
        })
    }

    /// The connection. A panic while it was held left no transaction open (a dropped
    /// transaction rolls back), so a poisoned lock is safe to take over.
    fn conn(&self) -> MutexGuard<'_, Connection> {
        self.inner
            .conn
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Where the store lives: [`FILE_NAME`] in the data directory (`ITINERO_DATA_DIR` moves it).
pub fn default_path() -> anyhow::Result<PathBuf> {
    crate::paths::store_file()
}

/// Creates the file readable by its owner only, if it does not exist: it holds the user's
/// goals, answers and the pages they visited. SQLite gives its `-wal` and `-shm` files the
/// same permissions.
fn create_private(path: &Path) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path).map(drop)
}

/// Unix milliseconds now.
pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Refuses a damaged file at once, with the way out, rather than opening it and failing every
/// query after. `quick_check` reads every page (milliseconds for a store of this size) but not
/// the indexes' contents, which `integrity_check` would.
fn check_sound(conn: &Connection, name: &str) -> Result<()> {
    let damaged = |detail: String| StoreError::Damaged {
        path: name.to_owned(),
        detail,
    };
    let found: Vec<String> = conn
        .prepare("PRAGMA quick_check(3)")
        .and_then(|mut stmt| {
            stmt.query_map([], |row| row.get::<_, String>(0))?
                .collect::<rusqlite::Result<Vec<String>>>()
        })
        .map_err(|e| damaged(e.to_string()))?;
    match found.as_slice() {
        [ok] if ok == "ok" => Ok(()),
        problems => Err(damaged(problems.join("; "))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_creates_the_directory_and_a_private_file_in_wal_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b").join(FILE_NAME);
        let store = Store::open(&path).unwrap();
        assert!(path.exists());
        assert_eq!(store.name(), path.display().to_string());
        assert_eq!(store.interrupted_at_open(), 0);
        let conn = store.conn();
        let mode: String = conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        let fk: bool = conn
            .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
            .unwrap();
        assert!(fk);
        let version = migrate::user_version(&conn).unwrap();
        assert_eq!(version, latest_version());
        drop(conn);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert_eq!(store.integrity_check().unwrap(), Ok(()));
    }

    #[test]
    fn reopening_keeps_what_was_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let store = Store::open(&path).unwrap();
        store
            .add_lesson("https://a.example/x", "sizes run small", "ask_human", None)
            .unwrap();
        drop(store);
        let again = Store::open(&path).unwrap();
        assert_eq!(again.lessons(None, 10).unwrap().len(), 1);
    }

    #[test]
    fn a_file_that_is_not_a_database_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        std::fs::write(
            &path,
            b"this is not sqlite, just some text that is long enough",
        )
        .unwrap();
        let err = Store::open(&path).unwrap_err();
        let text = err.to_string();
        assert!(text.contains(&path.display().to_string()), "{text}");
        assert!(text.contains("not a database"), "{text}");
    }

    #[test]
    fn a_store_damaged_by_hand_is_refused_at_open_with_the_way_out() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let store = Store::open(&path).unwrap();
        for i in 0..400 {
            store
                .add_lesson(
                    &format!("https://a{i}.example/x"),
                    &"a lesson long enough to fill pages ".repeat(4),
                    "ask_human",
                    None,
                )
                .unwrap();
        }
        drop(store);
        let mut bytes = std::fs::read(&path).unwrap();
        let page = 4096;
        assert!(bytes.len() > 8 * page, "{} bytes", bytes.len());
        for b in &mut bytes[5 * page..5 * page + 600] {
            *b = 0xA5;
        }
        std::fs::write(&path, bytes).unwrap();
        let err = Store::open(&path).unwrap_err();
        assert!(matches!(err, StoreError::Damaged { .. }), "{err}");
        let text = err.to_string();
        assert!(
            text.contains("Move it aside") && text.contains(".damaged"),
            "{text}"
        );
    }

    #[test]
    fn a_directory_that_cannot_be_created_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("file");
        std::fs::write(&blocker, b"x").unwrap();
        let err = Store::open(&blocker.join("sub").join(FILE_NAME)).unwrap_err();
        assert!(matches!(err, StoreError::CreateDir { .. }), "{err}");
        assert!(err.to_string().contains("sub"), "{err}");
    }

    #[tokio::test]
    async fn call_runs_on_the_blocking_pool() {
        let store = Store::open_in_memory().unwrap();
        let n = store
            .call(|s| s.recent_runs(10).map(|r| r.len()))
            .await
            .unwrap();
        assert_eq!(n, 0);
    }

    #[test]
    fn fts5_is_built_in_for_the_memory_work() {
        let store = Store::open_in_memory().unwrap();
        let conn = store.conn();
        conn.execute_batch(
            "CREATE VIRTUAL TABLE t USING fts5(goal);
             INSERT INTO t VALUES ('find wool socks'), ('pay the bill');",
        )
        .unwrap();
        let hit: String = conn
            .query_row(
                "SELECT goal FROM t WHERE t MATCH 'socks' ORDER BY bm25(t)",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(hit, "find wool socks");
    }

    #[test]
    fn the_default_path_is_in_the_data_directory() {
        let path = default_path().unwrap();
        assert_eq!(path.file_name().unwrap(), FILE_NAME);
        assert_eq!(path.parent().unwrap(), crate::paths::data_dir().unwrap());
    }
}
