//! Numbered schema migrations, kept in `PRAGMA user_version`.
//!
//! Hand-written rather than `rusqlite_migration`: that crate's releases for rusqlite 0.40 need
//! Rust 1.95 (this crate's minimum is 1.87), and what it would save is this one loop. Each
//! migration is a SQL file under `migrations/`, applied in its own `BEGIN IMMEDIATE`
//! transaction together with the version bump, so a migration is applied entirely or not at
//! all, and two hosts opening the store at once (two browser profiles) do not both apply it.
//!
//! `0001_foundation.sql` holds the runs, steps, settings, approvals and lessons;
//! `0002_memory.sql` the action cache, skills, sites and FTS5 over goals; `0003_vault.sql` the
//! vault; `0004_step_calls.sql` what each step cost in model calls and prompt tokens;
//! `0005_step_pictures.sql` the picture after each step; `0006_vault_api_keys.sql` the sealed
//! API keys of OpenAI-compatible servers.
//! A released migration is never edited, only followed by a new one: a store that a user's
//! host has already migrated would never see the edit. A store from a newer host (a version
//! above the last file) is refused untouched.

use rusqlite::{Connection, TransactionBehavior};

use super::error::{Result, StoreError};

/// One schema change: the version the store has after it, and its SQL.
pub(crate) struct Migration {
    pub version: u32,
    pub name: &'static str,
    pub sql: &'static str,
}

/// Every migration, in order; versions count up from 1.
pub(crate) const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "runs, steps, settings, site approvals, lessons",
        sql: include_str!("migrations/0001_foundation.sql"),
    },
    Migration {
        version: 2,
        name: "action cache, skills, sites, full-text search over goals",
        sql: include_str!("migrations/0002_memory.sql"),
    },
    Migration {
        version: 3,
        name: "the vault: sealed credentials, consent, audit",
        sql: include_str!("migrations/0003_vault.sql"),
    },
    Migration {
        version: 4,
        name: "model calls and prompt tokens of each step",
        sql: include_str!("migrations/0004_step_calls.sql"),
    },
    Migration {
        version: 5,
        name: "the picture of the page after each step",
        sql: include_str!("migrations/0005_step_pictures.sql"),
    },
    Migration {
        version: 6,
        name: "the vault: sealed API keys of OpenAI-compatible servers",
        sql: include_str!("migrations/0006_vault_api_keys.sql"),
    },
];

/// The schema version this build writes.
pub fn latest_version() -> u32 {
    MIGRATIONS.last().map_or(0, |m| m.version)
}

pub(crate) fn user_version(conn: &Connection) -> rusqlite::Result<u32> {
    conn.query_row("PRAGMA user_version", [], |row| row.get(0))
}

/// Brings the store at `path` (named in errors) up to the latest version; returns how many
/// migrations were applied. A store from a newer host is refused, not touched.
pub(crate) fn migrate(conn: &mut Connection, path: &str) -> Result<usize> {
    apply(conn, path, MIGRATIONS)
}

pub(crate) fn apply(conn: &mut Connection, path: &str, migrations: &[Migration]) -> Result<usize> {
    let known = migrations.last().map_or(0, |m| m.version);
    // The usual case, an up-to-date store, needs no write lock.
    let current = user_version(conn).map_err(|source| StoreError::Open {
        path: path.to_owned(),
        source,
    })?;
    if current == known {
        return Ok(0);
    }
    let mut applied = 0;
    for m in migrations {
        let failed = |source| StoreError::Migrate {
            path: path.to_owned(),
            version: m.version,
            name: m.name,
            source,
        };
        // Immediate: take the write lock before reading the version, so a second host waits
        // here (busy timeout) and then sees the migration done.
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(failed)?;
        let found = user_version(&tx).map_err(failed)?;
        if found > known {
            return Err(StoreError::TooNew {
                path: path.to_owned(),
                found,
                known,
            });
        }
        if found >= m.version {
            continue;
        }
        tx.execute_batch(m.sql).map_err(failed)?;
        tx.pragma_update(None, "user_version", m.version)
            .map_err(failed)?;
        tx.commit().map_err(failed)?;
        applied += 1;
    }
    Ok(applied)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tables(conn: &Connection) -> Vec<String> {
        let mut stmt = conn
            .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
            .unwrap();
        stmt.query_map([], |r| r.get(0))
            .unwrap()
            .map(|r| r.unwrap())
            .collect()
    }

    #[test]
    fn versions_count_up_from_one() {
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert_eq!(m.version as usize, i + 1, "{}", m.name);
        }
        assert_eq!(latest_version() as usize, MIGRATIONS.len());
    }

    #[test]
    fn applying_twice_changes_nothing() {
        let mut conn = Connection::open_in_memory().unwrap();
        assert_eq!(migrate(&mut conn, "mem").unwrap(), MIGRATIONS.len());
        assert_eq!(user_version(&conn).unwrap(), latest_version());
        let schema = |c: &Connection| -> Vec<String> {
            let mut stmt = c
                .prepare("SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL ORDER BY name")
                .unwrap();
            stmt.query_map([], |r| r.get(0))
                .unwrap()
                .map(|r| r.unwrap())
                .collect()
        };
        let before = schema(&conn);
        assert_eq!(migrate(&mut conn, "mem").unwrap(), 0);
        assert_eq!(schema(&conn), before);
        assert_eq!(
            tables(&conn),
            [
                "action_cache",
                "lessons",
                "runs",
                "runs_fts",
                "runs_fts_config",
                "runs_fts_data",
                "runs_fts_docsize",
                "runs_fts_idx",
                "settings",
                "site_approvals",
                "sites",
                "skills",
                "step_pictures",
                "steps",
                "vault",
                "vault_api_keys",
                "vault_audit",
                "vault_consent",
                "vault_meta"
            ]
        );
    }

    #[test]
    fn a_newer_store_is_refused_untouched() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "user_version", latest_version() + 1)
            .unwrap();
        let err = migrate(&mut conn, "/x/itinero.sqlite3").unwrap_err();
        assert!(matches!(err, StoreError::TooNew { found, .. } if found == latest_version() + 1));
        assert!(err.to_string().contains("update this one"), "{err}");
        assert!(tables(&conn).is_empty());
    }

    #[test]
    fn a_failing_migration_leaves_the_previous_version_whole() {
        let mut conn = Connection::open_in_memory().unwrap();
        let list = [
            Migration {
                version: 1,
                name: "one",
                sql: "CREATE TABLE a (x INTEGER);",
            },
            Migration {
                version: 2,
                name: "two",
                sql: "CREATE TABLE b (x INTEGER); CREATE TABLE a (y INTEGER);",
            },
        ];
        let err = apply(&mut conn, "mem", &list).unwrap_err();
        assert!(
            matches!(err, StoreError::Migrate { version: 2, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("version 2 (two)"), "{err}");
        assert_eq!(user_version(&conn).unwrap(), 1);
        assert_eq!(tables(&conn), ["a"]);
        // Fixed, it applies from where it stopped.
        let fixed = [
            Migration { ..list[0] },
            Migration {
                sql: "CREATE TABLE b (x INTEGER);",
                ..list[1]
            },
        ];
        assert_eq!(apply(&mut conn, "mem", &fixed).unwrap(), 1);
        assert_eq!(tables(&conn), ["a", "b"]);
    }
}
