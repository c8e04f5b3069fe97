//! The picture of the page after each step of a run, for its report.
//!
//! Pictures live in the store beside their steps, so a run's are deleted with it in the same
//! statement (`ON DELETE CASCADE`) and a host killed mid-write leaves no file behind. A run
//! keeps at most [`RUN_ALLOWANCE`] bytes of them; past that, a step's picture is recorded as
//! withheld, so the report says why it has none.

use itinero_shared::records::{RunId, StepPicture};
use rusqlite::{params, OptionalExtension};

use super::error::{Doing, Result, StoreError};
use super::{now_ms, Store};

/// The largest picture kept: under the 1 MiB frame to the browser once in base64.
pub const MAX_PICTURE_BYTES: u32 = 600 * 1024;
/// What one run's pictures may take together: about fifty steps of a full-screen page.
pub const RUN_ALLOWANCE: u64 = 16 * 1024 * 1024;

/// Why a picture was not kept when the run's allowance is spent.
pub const OVER_ALLOWANCE: &str = "the run's pictures reached their size limit";

impl Store {
    /// Keeps `jpeg` as the picture after step `n` of `run`, or records it as withheld when it
    /// would take the run's pictures past `allowance` bytes; whether it was kept.
    pub fn keep_picture(&self, run: RunId, n: u32, jpeg: &[u8], allowance: u64) -> Result<bool> {
        let doing = || format!("keeping the picture after step {n} of run {run}");
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .doing(doing)?;
        let used: i64 = tx
            .query_row(
                "SELECT COALESCE(SUM(length(jpeg)), 0) FROM step_pictures
                 WHERE run_id = ?1 AND n <> ?2",
                params![run.0, n],
                |r| r.get(0),
            )
            .doing(doing)?;
        let fits = u64::try_from(used).unwrap_or(u64::MAX) + jpeg.len() as u64 <= allowance;
        let (jpeg, withheld) = if fits {
            (Some(jpeg), None)
        } else {
            (None, Some(OVER_ALLOWANCE))
        };
        upsert(&tx, run, n, jpeg, withheld)?;
        tx.commit().doing(doing)?;
        Ok(fits)
    }

    /// Records that step `n` of `run` has no picture, and why.
    pub fn withhold_picture(&self, run: RunId, n: u32, why: &str) -> Result<()> {
        upsert(&self.conn(), run, n, None, Some(why))
    }

    /// The JPEG kept after step `n` of `run`, if there is one.
    pub fn picture(&self, run: RunId, n: u32) -> Result<Option<Vec<u8>>> {
        self.conn()
            .query_row(
                "SELECT jpeg FROM step_pictures WHERE run_id = ?1 AND n = ?2 AND jpeg IS NOT NULL",
                params![run.0, n],
                |r| r.get(0),
            )
            .optional()
            .doing(|| format!("reading the picture after step {n} of run {run}"))
    }

    /// What `run` kept of each step's picture, by step.
    pub fn pictures(&self, run: RunId) -> Result<Vec<StepPicture>> {
        pictures_of(&self.conn(), run)
    }
}

pub(crate) fn pictures_of(conn: &rusqlite::Connection, run: RunId) -> Result<Vec<StepPicture>> {
    let doing = || format!("listing the pictures of run {run}");
    let mut stmt = conn
        .prepare_cached(
            "SELECT n, COALESCE(length(jpeg), 0), withheld FROM step_pictures
             WHERE run_id = ?1 ORDER BY n",
        )
        .doing(doing)?;
    let rows = stmt
        .query_map([run.0], |r| {
            Ok(StepPicture {
                n: r.get(0)?,
                bytes: r.get(1)?,
                withheld: r.get(2)?,
            })
        })
        .and_then(|rows| rows.collect())
        .doing(doing);
    rows
}

fn upsert(
    conn: &rusqlite::Connection,
    run: RunId,
    n: u32,
    jpeg: Option<&[u8]>,
    withheld: Option<&str>,
) -> Result<()> {
    let doing = || format!("recording the picture after step {n} of run {run}");
    let written = conn.execute(
        "INSERT INTO step_pictures (run_id, n, jpeg, withheld, taken_at)
         SELECT ?1, ?2, ?3, ?4, ?5 WHERE EXISTS (SELECT 1 FROM runs WHERE id = ?1)
         ON CONFLICT (run_id, n) DO UPDATE
             SET jpeg = excluded.jpeg, withheld = excluded.withheld, taken_at = excluded.taken_at",
        params![run.0, n, jpeg, withheld, now_ms()],
    );
    if written.doing(doing)? == 0 {
        return Err(StoreError::NoSuchRun(run));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::NewRun;

    fn run(store: &Store) -> RunId {
        store
            .begin_run(&NewRun {
                goal: "buy socks".into(),
                start_url: "https://shop.example/".into(),
                ..Default::default()
            })
            .unwrap()
    }

    #[test]
    fn pictures_are_kept_listed_and_deleted_with_their_run() {
        let store = Store::open_in_memory().unwrap();
        let id = run(&store);
        assert!(store
            .keep_picture(id, 1, b"\xff\xd8one", RUN_ALLOWANCE)
            .unwrap());
        store
            .withhold_picture(id, 2, "a saved secret was typed")
            .unwrap();
        assert_eq!(
            store.pictures(id).unwrap(),
            vec![
                StepPicture {
                    n: 1,
                    bytes: 5,
                    withheld: None
                },
                StepPicture {
                    n: 2,
                    bytes: 0,
                    withheld: Some("a saved secret was typed".into())
                },
            ]
        );
        assert_eq!(store.picture(id, 1).unwrap().unwrap(), b"\xff\xd8one");
        assert_eq!(store.picture(id, 2).unwrap(), None);
        let detail = store.run_detail(id).unwrap().unwrap();
        assert_eq!(detail.pictures.len(), 2);
        assert!(store.delete_run(id).unwrap());
        let left: i64 = store
            .conn()
            .query_row("SELECT COUNT(*) FROM step_pictures", [], |r| r.get(0))
            .unwrap();
        assert_eq!(left, 0);
    }

    #[test]
    fn a_run_past_its_allowance_keeps_no_more_and_says_why() {
        let store = Store::open_in_memory().unwrap();
        let id = run(&store);
        let jpeg = vec![7u8; 400];
        assert!(store.keep_picture(id, 1, &jpeg, 1000).unwrap());
        assert!(store.keep_picture(id, 2, &jpeg, 1000).unwrap());
        assert!(!store.keep_picture(id, 3, &jpeg, 1000).unwrap());
        // Taken again, a step's own picture does not count against itself.
        assert!(store.keep_picture(id, 2, &jpeg, 1000).unwrap());
        let third = &store.pictures(id).unwrap()[2];
        assert_eq!(third.withheld.as_deref(), Some(OVER_ALLOWANCE));
        assert!(!third.is_kept());
    }

    #[test]
    fn a_picture_of_a_run_that_does_not_exist_is_an_error() {
        let store = Store::open_in_memory().unwrap();
        assert!(store
            .keep_picture(RunId(99), 1, b"x", RUN_ALLOWANCE)
            .is_err());
        assert!(store.withhold_picture(RunId(99), 1, "why").is_err());
    }
}
