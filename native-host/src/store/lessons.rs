//! Lessons: what the user taught the agent about a site (an answer to its question, a
//! correction), given to the model on later runs on that site, and listed in the panel where
//! the user can delete them.

use itinero_shared::records::{Lesson, LessonId, RunId};
use rusqlite::{params, OptionalExtension, Row};

use super::error::{Doing, Result, StoreError};
use super::site::{origin_of, require_origin};
use super::{now_ms, Store};

const LESSON_COLUMNS: &str = "id, origin, text, source, run_id, created_at";

fn lesson_from_row(row: &Row<'_>) -> rusqlite::Result<Lesson> {
    Ok(Lesson {
        id: LessonId(row.get(0)?),
        origin: row.get(1)?,
        text: row.get(2)?,
        source: row.get(3)?,
        run_id: row.get::<_, Option<i64>>(4)?.map(RunId),
        created_at: row.get(5)?,
    })
}

impl Store {
    /// Keeps a lesson for the site of `url_or_origin`; `source` says where it came from (e.g.
    /// `ask_human`), `run` the run it was learnt in. The same text for the same site is kept
    /// once: its existing id is returned.
    pub fn add_lesson(
        &self,
        url_or_origin: &str,
        text: &str,
        source: &str,
        run: Option<RunId>,
    ) -> Result<LessonId> {
        let origin = require_origin(url_or_origin)?;
        let text = text.trim();
        if text.is_empty() {
            return Err(StoreError::Invalid("a lesson needs some text".into()));
        }
        let doing = || format!("keeping a lesson for {origin}");
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .doing(doing)?;
        let existing: Option<i64> = tx
            .query_row(
                "SELECT id FROM lessons WHERE origin = ?1 AND text = ?2",
                params![origin, text],
                |r| r.get(0),
            )
            .optional()
            .doing(doing)?;
        let id = match existing {
            Some(id) => id,
            None => {
                tx.execute(
                    "INSERT INTO lessons (origin, text, source, run_id, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![origin, text, source, run.map(|r| r.0), now_ms()],
                )
                .doing(doing)?;
                tx.last_insert_rowid()
            }
        };
        tx.commit().doing(doing)?;
        Ok(LessonId(id))
    }

    /// The newest `limit` lessons for the site of `url`, for the prompt. A page without an
    /// origin has none.
    pub fn lessons_for(&self, url: &str, limit: u32) -> Result<Vec<Lesson>> {
        match origin_of(url) {
            Some(origin) => self.query_lessons(Some(&origin), limit),
            None => Ok(Vec::new()),
        }
    }

    /// The newest `limit` lessons, of one site (`url_or_origin`) or of all.
    pub fn lessons(&self, url_or_origin: Option<&str>, limit: u32) -> Result<Vec<Lesson>> {
        let origin = url_or_origin.map(require_origin).transpose()?;
        self.query_lessons(origin.as_deref(), limit)
    }

    fn query_lessons(&self, origin: Option<&str>, limit: u32) -> Result<Vec<Lesson>> {
        let doing = || match origin {
            Some(o) => format!("reading the lessons for {o}"),
            None => "reading the lessons".to_owned(),
        };
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(&format!(
                "SELECT {LESSON_COLUMNS} FROM lessons
                 WHERE ?1 IS NULL OR origin = ?1
                 ORDER BY created_at DESC, id DESC LIMIT ?2"
            ))
            .doing(doing)?;
        let lessons = stmt
            .query_map(params![origin, limit], lesson_from_row)
            .and_then(|rows| rows.collect())
            .doing(doing);
        lessons
    }

    /// Deletes a lesson; whether it existed.
    pub fn delete_lesson(&self, id: LessonId) -> Result<bool> {
        let n = self
            .conn()
            .execute("DELETE FROM lessons WHERE id = ?1", [id.0])
            .doing(|| format!("deleting lesson {id}"))?;
        Ok(n > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lessons_belong_to_their_site_newest_first() {
        let store = Store::open_in_memory().unwrap();
        let a = store
            .add_lesson(
                "https://shop.example/p/1",
                "sizes run small",
                "ask_human",
                None,
            )
            .unwrap();
        let b = store
            .add_lesson(
                "https://shop.example",
                "  the cart is top right ",
                "ask_human",
                None,
            )
            .unwrap();
        let c = store
            .add_lesson("https://bank.example/", "never transfer", "user", None)
            .unwrap();
        let shop = store.lessons_for("https://shop.example/cart", 10).unwrap();
        let ids: Vec<_> = shop.iter().map(|l| l.id).collect();
        assert_eq!(ids, [b, a]);
        assert_eq!(shop[0].text, "the cart is top right");
        assert_eq!(shop[0].origin, "https://shop.example");
        assert_eq!(shop[0].source, "ask_human");
        assert_eq!(
            store.lessons_for("https://shop.example", 1).unwrap().len(),
            1
        );
        assert!(store.lessons_for("about:blank", 10).unwrap().is_empty());
        assert!(store
            .lessons_for("http://shop.example", 10)
            .unwrap()
            .is_empty());
        let all: Vec<_> = store
            .lessons(None, 10)
            .unwrap()
            .iter()
            .map(|l| l.id)
            .collect();
        assert_eq!(all, [c, b, a]);
        assert_eq!(
            store.lessons(Some("https://bank.example"), 10).unwrap()[0].id,
            c
        );
        assert!(matches!(
            store.lessons(Some("bank"), 10),
            Err(StoreError::NotAnOrigin(_))
        ));
    }

    #[test]
    fn the_same_lesson_is_kept_once_and_empty_ones_not_at_all() {
        let store = Store::open_in_memory().unwrap();
        let run = store
            .begin_run(&super::super::NewRun {
                goal: "g".into(),
                start_url: "https://shop.example".into(),
                ..Default::default()
            })
            .unwrap();
        let a = store
            .add_lesson("https://shop.example", "size M", "ask_human", Some(run))
            .unwrap();
        let again = store
            .add_lesson("https://shop.example/x", "size M ", "ask_human", None)
            .unwrap();
        assert_eq!(a, again);
        let list = store.lessons(None, 10).unwrap();
        assert_eq!(list.len(), 1);
        assert_eq!(list[0].run_id, Some(run));
        assert!(store
            .add_lesson("https://shop.example", " ", "x", None)
            .is_err());
        assert!(store.add_lesson("nowhere", "text", "x", None).is_err());
    }

    #[test]
    fn deleting_a_lesson() {
        let store = Store::open_in_memory().unwrap();
        let a = store
            .add_lesson("https://shop.example", "one", "ask_human", None)
            .unwrap();
        let b = store
            .add_lesson("https://shop.example", "two", "ask_human", None)
            .unwrap();
        assert!(store.delete_lesson(a).unwrap());
        assert!(!store.delete_lesson(a).unwrap());
        let left: Vec<_> = store
            .lessons(None, 10)
            .unwrap()
            .iter()
            .map(|l| l.id)
            .collect();
        assert_eq!(left, [b]);
    }
}
