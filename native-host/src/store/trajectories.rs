//! Trajectory memory: past successful runs on a site whose goals share words with a new goal
//! (FTS5, ranked by bm25), told to the model as short examples of what worked.

use rusqlite::params;

use super::error::Doing;
use super::site::origin_of;
use super::{Result, Store};
use itinero_shared::records::RunId;

/// A past run as an example: its goal, its steps in words, its answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trajectory {
    pub run: RunId,
    pub goal: String,
    /// `click button "Add to cart" → done`, in order; failed and refused steps left out.
    pub steps: Vec<String>,
    pub answer: Option<String>,
}

/// The goal's words as an FTS5 query matching any of them; `None` when it has none.
fn any_word(goal: &str) -> Option<String> {
    let mut words: Vec<String> = goal
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 2)
        .map(|w| format!("\"{}\"", w.to_lowercase()))
        .collect();
    words.sort();
    words.dedup();
    (!words.is_empty()).then(|| words.join(" OR "))
}

/// `click [4] button "Search"` → `click button "Search"`: indices meant something on that page only.
fn without_indices(summary: &str) -> String {
    let mut out = String::with_capacity(summary.len());
    let mut rest = summary;
    while let Some(open) = rest.find('[') {
        let after = &rest[open + 1..];
        match after.find(']') {
            Some(close) if close > 0 && after[..close].chars().all(|c| c.is_ascii_digit()) => {
                out.push_str(rest[..open].trim_end());
                rest = &after[close + 1..];
            }
            _ => {
                out.push_str(&rest[..=open]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

impl Store {
    /// Up to `limit` succeeded runs on the site of `url` whose goals are nearest `goal`.
    pub fn similar_runs(&self, url: &str, goal: &str, limit: u32) -> Result<Vec<Trajectory>> {
        let (Some(origin), Some(query)) = (origin_of(url), any_word(goal)) else {
            return Ok(Vec::new());
        };
        let doing = || format!("finding past runs like {goal:?}");
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(
                "SELECT r.id, r.goal, r.answer FROM runs_fts
                 JOIN runs r ON r.id = runs_fts.rowid
                 WHERE runs_fts MATCH ?1 AND r.origin = ?2 AND r.status = 'succeeded'
                 ORDER BY bm25(runs_fts), r.started_at DESC
                 LIMIT ?3",
            )
            .doing(doing)?;
        let runs: Vec<(i64, String, Option<String>)> = stmt
            .query_map(params![query, origin, limit], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .and_then(|rows| rows.collect())
            .doing(doing)?;
        let mut steps = conn
            .prepare_cached(
                "SELECT action_summary, outcome_text FROM steps
                 WHERE run_id = ?1 AND action_summary != '' AND strategy != 'guard'
                   AND (outcome IS NULL OR json_extract(outcome, '$.kind')
                        IN ('done', 'navigated', 'opened_tab', 'never_settled'))
                   AND json_extract(action, '$.kind') NOT IN ('wait', 'done')
                 ORDER BY n",
            )
            .doing(doing)?;
        runs.into_iter()
            .map(|(id, goal, answer)| {
                let lines: Vec<String> = steps
                    .query_map([id], |r| {
                        let (action, outcome): (String, String) = (r.get(0)?, r.get(1)?);
                        Ok(format!("{} → {outcome}", without_indices(&action)))
                    })
                    .and_then(|rows| rows.collect())
                    .doing(doing)?;
                Ok(Trajectory {
                    run: RunId(id),
                    goal,
                    steps: lines,
                    answer,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::NewRun;
    use itinero_shared::records::{RunStatus, StepRecord};

    fn run(store: &Store, goal: &str, url: &str, status: RunStatus) -> RunId {
        let id = store
            .begin_run(&NewRun {
                goal: goal.into(),
                start_url: url.into(),
                tab_id: None,
                backend: "scripted".into(),
                model: "m".into(),
            })
            .unwrap();
        let steps = [
            (
                r#"{"kind":"click"}"#,
                r#"{"kind":"navigated","url":"x"}"#,
                "click [3] a \"Socks\"",
                "navigated to x",
            ),
            (
                r#"{"kind":"click"}"#,
                r#"{"kind":"target_detached"}"#,
                "click [9] button \"Gone\"",
                "target detached",
            ),
            (
                r#"{"kind":"wait"}"#,
                r#"{"kind":"done"}"#,
                "wait 500 ms",
                "done",
            ),
            (
                r#"{"kind":"click"}"#,
                r#"{"kind":"done"}"#,
                "click [12] button \"Add to cart\"",
                "done",
            ),
        ];
        for (n, (action, outcome, summary, text)) in steps.iter().enumerate() {
            store
                .record_step(
                    id,
                    &StepRecord {
                        n: n as u32 + 1,
                        url: url.into(),
                        action: Some(serde_json::from_str(action).unwrap()),
                        action_summary: (*summary).into(),
                        outcome: Some(serde_json::from_str(outcome).unwrap()),
                        outcome_text: (*text).into(),
                        strategy: "llm".into(),
                        ..Default::default()
                    },
                )
                .unwrap();
        }
        store.finish_run(id, status, Some("Added.")).unwrap();
        id
    }

    #[test]
    fn succeeded_runs_on_the_site_with_shared_words_come_back_best_first() {
        let store = Store::open_in_memory().unwrap();
        let shop = "https://shop.test/shop/";
        let wool = run(
            &store,
            "Add wool socks to the cart",
            shop,
            RunStatus::Succeeded,
        );
        let hats = run(&store, "Find the cheapest hat", shop, RunStatus::Succeeded);
        run(
            &store,
            "Add wool socks to the cart",
            shop,
            RunStatus::Failed,
        );
        run(
            &store,
            "Add wool socks to the cart",
            "https://other.test/",
            RunStatus::Succeeded,
        );
        let found = store
            .similar_runs(
                "https://shop.test/shop/cart",
                "Add cotton socks to my cart",
                3,
            )
            .unwrap();
        assert_eq!(found.iter().map(|t| t.run).collect::<Vec<_>>(), [wool]);
        assert_eq!(
            found[0].steps,
            [
                "click a \"Socks\" → navigated to x",
                "click button \"Add to cart\" → done"
            ]
        );
        assert_eq!(found[0].answer.as_deref(), Some("Added."));
        let found = store.similar_runs(shop, "cheapest hat?", 3).unwrap();
        assert_eq!(found[0].run, hats);
        // Quotes and operators in a goal are words, not query syntax.
        assert!(store
            .similar_runs(shop, "\"NOT\" OR (", 3)
            .unwrap()
            .is_empty());
        assert!(store
            .similar_runs("about:blank", "socks", 3)
            .unwrap()
            .is_empty());
        // A deleted run is no longer an example.
        store.delete_run(wool).unwrap();
        assert!(store
            .similar_runs(shop, "wool socks", 3)
            .unwrap()
            .is_empty());
    }

    #[test]
    fn indices_are_taken_out_of_step_summaries() {
        assert_eq!(
            without_indices("type [4] input \"Search\" \"a [b] [12x]\""),
            "type input \"Search\" \"a [b] [12x]\""
        );
    }
}
