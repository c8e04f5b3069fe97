//! The action cache's table: what worked on a page for a goal, looked up by exact key.
//!
//! The key is computed by the agent (`agent/cache.rs`); here it is four columns under one
//! unique index, so a lookup is one index probe whatever the table's size.

use rusqlite::{params, OptionalExtension};

use super::error::Doing;
use super::{now_ms, Result, Store};

/// Failed uses (the target was gone, or the action did not work) after which an entry is dropped.
pub const MAX_FAILURES: i64 = 3;

/// Where an action is remembered: normalised goal, origin, path pattern, page hash.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CacheKey {
    pub goal: String,
    pub origin: String,
    pub path: String,
    pub page: String,
}

/// A remembered action (the `Action` as JSON) and the model time it took to decide.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheEntry {
    pub action: serde_json::Value,
    pub decide_ms: u64,
    pub hits: u64,
}

/// Size and use of the cache, for the panel and benchmarks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    pub entries: u64,
    pub hits: u64,
    pub failures: u64,
    /// Model time saved by hits, as the entries' decide times estimate it.
    pub saved_ms: u64,
}

impl Store {
    pub fn cache_lookup(&self, key: &CacheKey) -> Result<Option<CacheEntry>> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(
                "SELECT action, decide_ms, hits FROM action_cache
                 WHERE goal = ?1 AND origin = ?2 AND path = ?3 AND dom_hash = ?4",
            )
            .doing(|| "looking up the action cache".into())?;
        let row: Option<(String, i64, i64)> = stmt
            .query_row(params![key.goal, key.origin, key.path, key.page], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .optional()
            .doing(|| "looking up the action cache".into())?;
        let Some((action, decide_ms, hits)) = row else {
            return Ok(None);
        };
        let action =
            serde_json::from_str(&action).map_err(|source| super::StoreError::Corrupt {
                what: "a cached action".into(),
                source,
            })?;
        Ok(Some(CacheEntry {
            action,
            decide_ms: decide_ms.max(0) as u64,
            hits: hits.max(0) as u64,
        }))
    }

    /// Remembers what worked in a successful run, all in one transaction: a run's entries are
    /// kept together or not at all. An entry for the same key is replaced, its count reset.
    pub fn cache_put(&self, entries: &[(CacheKey, CacheEntry)]) -> Result<()> {
        let doing = || format!("remembering {} cached actions", entries.len());
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .doing(doing)?;
        {
            let mut stmt = tx
                .prepare_cached(
                    "INSERT INTO action_cache (goal, origin, path, dom_hash, action, decide_ms,
                                               created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                     ON CONFLICT (goal, origin, path, dom_hash) DO UPDATE SET
                       action = excluded.action, decide_ms = excluded.decide_ms,
                       failures = 0, created_at = excluded.created_at",
                )
                .doing(doing)?;
            let now = now_ms();
            for (key, entry) in entries {
                stmt.execute(params![
                    key.goal,
                    key.origin,
                    key.path,
                    key.page,
                    entry.action.to_string(),
                    entry.decide_ms as i64,
                    now
                ])
                .doing(doing)?;
            }
        }
        tx.commit().doing(doing)
    }

    /// A cached action was used and worked.
    pub fn cache_hit(&self, key: &CacheKey) -> Result<()> {
        self.conn()
            .execute(
                "UPDATE action_cache SET hits = hits + 1, used_at = ?5
                 WHERE goal = ?1 AND origin = ?2 AND path = ?3 AND dom_hash = ?4",
                params![key.goal, key.origin, key.path, key.page, now_ms()],
            )
            .doing(|| "counting a cache hit".into())?;
        Ok(())
    }

    /// A cached action could not be used or did not work; after [`MAX_FAILURES`] it is dropped.
    /// Returns whether it was.
    pub fn cache_failed(&self, key: &CacheKey) -> Result<bool> {
        let doing = || "counting a failed cache hit".to_owned();
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .doing(doing)?;
        tx.execute(
            "UPDATE action_cache SET failures = failures + 1, used_at = ?5
             WHERE goal = ?1 AND origin = ?2 AND path = ?3 AND dom_hash = ?4",
            params![key.goal, key.origin, key.path, key.page, now_ms()],
        )
        .doing(doing)?;
        let dropped = tx
            .execute(
                "DELETE FROM action_cache
                 WHERE goal = ?1 AND origin = ?2 AND path = ?3 AND dom_hash = ?4
                   AND failures >= ?5",
                params![key.goal, key.origin, key.path, key.page, MAX_FAILURES],
            )
            .doing(doing)?;
        tx.commit().doing(doing)?;
        Ok(dropped > 0)
    }

    /// Whether anything is cached for this normalised goal (the planner is then not asked).
    pub fn cache_knows_goal(&self, goal: &str) -> Result<bool> {
        self.conn()
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM action_cache WHERE goal = ?1)",
                [goal],
                |r| r.get(0),
            )
            .doing(|| "looking up the action cache".into())
    }

    pub fn cache_stats(&self) -> Result<CacheStats> {
        self.conn()
            .query_row(
                "SELECT count(*), coalesce(sum(hits), 0), coalesce(sum(failures), 0),
                        coalesce(sum(hits * decide_ms), 0)
                 FROM action_cache",
                [],
                |r| {
                    Ok(CacheStats {
                        entries: r.get::<_, i64>(0)? as u64,
                        hits: r.get::<_, i64>(1)? as u64,
                        failures: r.get::<_, i64>(2)? as u64,
                        saved_ms: r.get::<_, i64>(3)? as u64,
                    })
                },
            )
            .doing(|| "counting the action cache".into())
    }

    /// Forgets every cached action; returns how many there were.
    pub fn cache_clear(&self) -> Result<usize> {
        self.conn()
            .execute("DELETE FROM action_cache", [])
            .doing(|| "clearing the action cache".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(page: &str) -> CacheKey {
        CacheKey {
            goal: "search for socks".into(),
            origin: "https://shop.test".into(),
            path: "https://shop.test/shop".into(),
            page: page.into(),
        }
    }

    fn entry(n: u32) -> CacheEntry {
        CacheEntry {
            action: serde_json::json!({"kind": "click", "n": n}),
            decide_ms: 900,
            hits: 0,
        }
    }

    #[test]
    fn entries_are_found_by_their_whole_key_and_replaced_by_a_later_run() {
        let store = Store::open_in_memory().unwrap();
        store
            .cache_put(&[(key("a"), entry(1)), (key("b"), entry(2))])
            .unwrap();
        assert_eq!(store.cache_lookup(&key("a")).unwrap(), Some(entry(1)));
        assert_eq!(store.cache_lookup(&key("c")).unwrap(), None);
        let mut other_goal = key("a");
        other_goal.goal = "search for hats".into();
        assert_eq!(store.cache_lookup(&other_goal).unwrap(), None);
        assert!(store.cache_knows_goal("search for socks").unwrap());
        assert!(!store.cache_knows_goal("search for hats").unwrap());
        store.cache_put(&[(key("a"), entry(3))]).unwrap();
        assert_eq!(store.cache_lookup(&key("a")).unwrap(), Some(entry(3)));
        store.cache_hit(&key("a")).unwrap();
        let stats = store.cache_stats().unwrap();
        assert_eq!((stats.entries, stats.hits, stats.saved_ms), (2, 1, 900));
    }

    #[test]
    fn an_entry_that_keeps_failing_is_dropped() {
        let store = Store::open_in_memory().unwrap();
        store.cache_put(&[(key("a"), entry(1))]).unwrap();
        assert!(!store.cache_failed(&key("a")).unwrap());
        assert!(!store.cache_failed(&key("a")).unwrap());
        assert!(store.cache_failed(&key("a")).unwrap());
        assert_eq!(store.cache_lookup(&key("a")).unwrap(), None);
        // Failing an entry that is not there is not an error.
        assert!(!store.cache_failed(&key("a")).unwrap());
        assert_eq!(store.cache_clear().unwrap(), 0);
    }
}
