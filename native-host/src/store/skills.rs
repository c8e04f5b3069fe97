//! The skills library: each skill stored whole as its JSON, with the columns the library
//! searches and sorts on (name, origin, goal) beside it, and statistics taken from the runs
//! that replayed it (`runs.skill_id`), so they are never out of step with the history.

use itinero_shared::records::RunId;
use itinero_shared::skills::{Skill, SkillId, SkillStats, SkillSummary};
use rusqlite::{params, Connection, OptionalExtension, Row};

use super::error::{Doing, Result, StoreError};
use super::{now_ms, Store};

/// A skill as stored, with where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredSkill {
    pub id: SkillId,
    pub skill: Skill,
    /// The run it was captured from, or last healed by.
    pub source_run: Option<RunId>,
    /// Unix milliseconds.
    pub created_at: i64,
    pub updated_at: i64,
}

const SKILL_COLUMNS: &str = "id, body, source_run, created_at, updated_at";

/// A row still holding its JSON, so a bad body is reported rather than a panic.
struct RawSkill {
    id: SkillId,
    body: String,
    source_run: Option<i64>,
    created_at: i64,
    updated_at: i64,
}

fn raw_from_row(row: &Row<'_>) -> rusqlite::Result<RawSkill> {
    Ok(RawSkill {
        id: row.get(0)?,
        body: row.get(1)?,
        source_run: row.get(2)?,
        created_at: row.get(3)?,
        updated_at: row.get(4)?,
    })
}

fn parse_body(id: SkillId, body: &str) -> Result<Skill> {
    serde_json::from_str(body).map_err(|source| StoreError::Corrupt {
        what: format!("skill {id}"),
        source,
    })
}

impl RawSkill {
    fn parse(self) -> Result<StoredSkill> {
        Ok(StoredSkill {
            skill: parse_body(self.id, &self.body)?,
            id: self.id,
            source_run: self.source_run.map(RunId),
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

/// The skill's JSON for the `body` column, after the checks every stored skill passes.
fn body_of(skill: &Skill) -> Result<String> {
    if skill.name.trim().is_empty() {
        return Err(StoreError::Invalid("a skill needs a name".into()));
    }
    if skill.steps.is_empty() {
        return Err(StoreError::Invalid(format!(
            "skill {:?} has no steps",
            skill.name
        )));
    }
    serde_json::to_string(skill).map_err(|source| StoreError::Corrupt {
        what: format!("skill {:?}", skill.name),
        source,
    })
}

/// A write refused by `skills.name`'s uniqueness is the name being taken; a `source_run` that
/// does not exist is named too.
fn write_failed(
    e: rusqlite::Error,
    skill: &Skill,
    source_run: Option<RunId>,
    doing: impl FnOnce() -> String,
) -> StoreError {
    if let rusqlite::Error::SqliteFailure(f, _) = &e {
        match f.extended_code {
            rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE => {
                return StoreError::SkillNameTaken(skill.name.clone())
            }
            rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY => {
                if let Some(run) = source_run {
                    return StoreError::NoSuchRun(run);
                }
            }
            _ => {}
        }
    }
    StoreError::Sql {
        doing: doing(),
        source: e,
    }
}

/// `%text%` for LIKE, with LIKE's own wildcards in the text taken literally (escape `\`).
fn like_pattern(text: &str) -> String {
    let mut out = String::from("%");
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('%');
    out
}

impl Store {
    /// Stores a new skill; `source_run` is the run it was captured from. A name already used
    /// (ignoring case) is [`StoreError::SkillNameTaken`].
    pub fn save_skill(&self, skill: &Skill, source_run: Option<RunId>) -> Result<SkillId> {
        let body = body_of(skill)?;
        let doing = || format!("saving skill {:?}", skill.name);
        let now = now_ms();
        let conn = self.conn();
        conn.execute(
            "INSERT INTO skills (name, description, origin, goal, body, source_run, created_at,
                                 updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)",
            params![
                skill.name.trim(),
                skill.description,
                skill.origin,
                skill.goal,
                body,
                source_run.map(|r| r.0),
                now
            ],
        )
        .map_err(|e| write_failed(e, skill, source_run, doing))?;
        Ok(conn.last_insert_rowid())
    }

    /// Replaces skill `id` (a rename, edited parameters, a healed step). `source_run`, when
    /// given, becomes the run it was last healed by; `None` keeps the one it had.
    pub fn update_skill(
        &self,
        id: SkillId,
        skill: &Skill,
        source_run: Option<RunId>,
    ) -> Result<()> {
        let body = body_of(skill)?;
        let doing = || format!("updating skill {id} ({:?})", skill.name);
        let changed = self
            .conn()
            .execute(
                "UPDATE skills SET name = ?2, description = ?3, origin = ?4, goal = ?5, body = ?6,
                     source_run = COALESCE(?7, source_run), updated_at = ?8
                 WHERE id = ?1",
                params![
                    id,
                    skill.name.trim(),
                    skill.description,
                    skill.origin,
                    skill.goal,
                    body,
                    source_run.map(|r| r.0),
                    now_ms()
                ],
            )
            .map_err(|e| write_failed(e, skill, source_run, doing))?;
        if changed == 0 {
            return Err(StoreError::NoSuchSkill(id));
        }
        Ok(())
    }

    /// Skill `id`, if it exists.
    pub fn skill(&self, id: SkillId) -> Result<Option<StoredSkill>> {
        let raw = self
            .conn()
            .query_row(
                &format!("SELECT {SKILL_COLUMNS} FROM skills WHERE id = ?1"),
                [id],
                raw_from_row,
            )
            .optional()
            .doing(|| format!("reading skill {id}"))?;
        raw.map(RawSkill::parse).transpose()
    }

    /// The skill called `name` (ignoring case, as names are unique), if there is one.
    pub fn skill_by_name(&self, name: &str) -> Result<Option<StoredSkill>> {
        let raw = self
            .conn()
            .query_row(
                &format!("SELECT {SKILL_COLUMNS} FROM skills WHERE name = ?1"),
                [name.trim()],
                raw_from_row,
            )
            .optional()
            .doing(|| format!("reading skill {name:?}"))?;
        raw.map(RawSkill::parse).transpose()
    }

    /// The library, by name, with each skill's statistics; `search` keeps the skills whose
    /// name, description, goal or site contain it (ignoring case).
    pub fn list_skills(&self, search: Option<&str>) -> Result<Vec<SkillSummary>> {
        let search = search.map(str::trim).filter(|s| !s.is_empty());
        let doing = || match search {
            Some(s) => format!("searching the skills for {s:?}"),
            None => "listing the skills".to_owned(),
        };
        let rows = summary_rows(&self.conn(), search.map(like_pattern), None).doing(doing)?;
        rows.into_iter().map(summary).collect()
    }

    /// One skill as the library lists it, with its statistics.
    pub fn skill_summary(&self, id: SkillId) -> Result<Option<SkillSummary>> {
        let rows =
            summary_rows(&self.conn(), None, Some(id)).doing(|| format!("reading skill {id}"))?;
        rows.into_iter().next().map(summary).transpose()
    }

    /// Deletes a skill; whether it existed. Runs that replayed it stay in the history.
    pub fn delete_skill(&self, id: SkillId) -> Result<bool> {
        let n = self
            .conn()
            .execute("DELETE FROM skills WHERE id = ?1", [id])
            .doing(|| format!("deleting skill {id}"))?;
        Ok(n > 0)
    }

    /// Marks `run` as a replay of `skill`, for the skill's statistics.
    pub fn set_run_skill(&self, run: RunId, skill: SkillId) -> Result<()> {
        let changed = self
            .conn()
            .execute(
                "UPDATE runs SET skill_id = ?2 WHERE id = ?1",
                params![run.0, skill],
            )
            .map_err(|e| match &e {
                rusqlite::Error::SqliteFailure(f, _)
                    if f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY =>
                {
                    StoreError::NoSuchSkill(skill)
                }
                _ => StoreError::Sql {
                    doing: format!("recording run {run} as a replay of skill {skill}"),
                    source: e,
                },
            })?;
        if changed == 0 {
            return Err(StoreError::NoSuchRun(run));
        }
        Ok(())
    }
}

/// A skill's id, body, update time and statistics.
type SummaryRow = (SkillId, String, i64, SkillStats);

/// The library's rows, bodies still JSON.
fn summary(row: SummaryRow) -> Result<SkillSummary> {
    let (id, body, updated_at, stats) = row;
    let skill = parse_body(id, &body)?;
    Ok(SkillSummary {
        id,
        name: skill.name,
        description: skill.description,
        origin: skill.origin,
        goal: skill.goal,
        params: skill.params,
        steps: u32::try_from(skill.steps.len()).unwrap_or(u32::MAX),
        stats,
        updated_at,
    })
}

/// Summary rows of the skills matching `like` (all when `None`), or of skill `id` alone.
fn summary_rows(
    conn: &Connection,
    like: Option<String>,
    id: Option<SkillId>,
) -> rusqlite::Result<Vec<SummaryRow>> {
    // Finished runs only: a run the host died in (interrupted) has no real wall time.
    let mut stmt = conn.prepare_cached(
        "SELECT s.id, s.body, s.updated_at,
                COUNT(r.id),
                COUNT(CASE WHEN r.status = 'succeeded' THEN 1 END),
                MAX(r.started_at),
                AVG(CASE WHEN r.finished_at IS NOT NULL
                          AND r.status NOT IN ('running', 'interrupted')
                         THEN r.finished_at - r.started_at END)
         FROM skills s LEFT JOIN runs r ON r.skill_id = s.id
         WHERE (?2 IS NULL OR s.id = ?2)
           AND (?1 IS NULL
                OR s.name LIKE ?1 ESCAPE '\\' OR s.description LIKE ?1 ESCAPE '\\'
                OR s.goal LIKE ?1 ESCAPE '\\' OR s.origin LIKE ?1 ESCAPE '\\')
         GROUP BY s.id
         ORDER BY s.name COLLATE NOCASE, s.id",
    )?;
    let rows = stmt.query_map(rusqlite::params![like, id], |row| {
        Ok((
            row.get::<_, SkillId>(0)?,
            row.get::<_, String>(1)?,
            row.get::<_, i64>(2)?,
            SkillStats {
                runs: row.get(3)?,
                succeeded: row.get(4)?,
                last_run: row.get(5)?,
                average_ms: row
                    .get::<_, Option<f64>>(6)?
                    .map(|ms| ms.max(0.0).round() as u64),
            },
        ))
    })?;
    rows.collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::NewRun;
    use itinero_shared::action::Action;
    use itinero_shared::records::RunStatus;
    use itinero_shared::skills::{Param, SkillStep, SKILL_FORMAT};

    fn skill(name: &str, goal: &str) -> Skill {
        Skill {
            format: SKILL_FORMAT,
            name: name.into(),
            description: format!("{goal}, the usual way"),
            origin: "https://shop.example".into(),
            goal: goal.into(),
            start_url: "https://shop.example/shop/".into(),
            params: vec![Param {
                name: "query".into(),
                example: "socks".into(),
            }],
            steps: vec![SkillStep {
                action: Action::Navigate {
                    url: "https://shop.example/shop/search?q={query}".into(),
                },
                url: "https://shop.example/shop/".into(),
                expect: vec![],
                note: "go to the results".into(),
            }],
        }
    }

    fn run(store: &Store, goal: &str) -> RunId {
        store
            .begin_run(&NewRun {
                goal: goal.into(),
                start_url: "https://shop.example/shop/".into(),
                ..NewRun::default()
            })
            .unwrap()
    }

    /// A store in a real file, as the host and the CLI open it.
    fn file_store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join(crate::store::FILE_NAME)).unwrap();
        (dir, store)
    }

    #[test]
    fn a_skill_is_saved_read_back_by_id_and_by_name_and_survives_reopening() {
        let (dir, store) = file_store();
        let source = run(&store, "Search for socks");
        let before = now_ms();
        let s = skill("Find socks", "Search for {query}");
        let id = store.save_skill(&s, Some(source)).unwrap();
        let stored = store.skill(id).unwrap().unwrap();
        assert_eq!(stored.id, id);
        assert_eq!(stored.skill, s);
        assert_eq!(stored.source_run, Some(source));
        assert!(stored.created_at >= before);
        assert_eq!(stored.created_at, stored.updated_at);
        assert_eq!(store.skill_by_name("FIND SOCKS ").unwrap().unwrap().id, id);
        assert_eq!(store.skill_by_name("Find shoes").unwrap(), None);
        assert_eq!(store.skill(id + 1).unwrap(), None);
        drop(store);
        let again = Store::open(&dir.path().join(crate::store::FILE_NAME)).unwrap();
        assert_eq!(again.skill(id).unwrap().unwrap().skill, s);
    }

    #[test]
    fn a_taken_name_is_refused_by_saying_so() {
        let (_dir, store) = file_store();
        store.save_skill(&skill("Find socks", "g"), None).unwrap();
        let err = store
            .save_skill(&skill("find SOCKS", "other"), None)
            .unwrap_err();
        assert!(
            matches!(&err, StoreError::SkillNameTaken(n) if n == "find SOCKS"),
            "{err}"
        );
        assert!(err.to_string().contains("already a skill named"), "{err}");
        let other = store.save_skill(&skill("Find hats", "g"), None).unwrap();
        let err = store
            .update_skill(other, &skill("Find socks", "g"), None)
            .unwrap_err();
        assert!(matches!(err, StoreError::SkillNameTaken(_)), "{err}");
        assert!(matches!(
            store.save_skill(&skill(" ", "g"), None),
            Err(StoreError::Invalid(_))
        ));
        let mut empty = skill("Empty", "g");
        empty.steps.clear();
        assert!(matches!(
            store.save_skill(&empty, None),
            Err(StoreError::Invalid(_))
        ));
        assert!(matches!(
            store.save_skill(&skill("Orphan", "g"), Some(RunId(404))),
            Err(StoreError::NoSuchRun(RunId(404)))
        ));
    }

    #[test]
    fn updating_replaces_the_skill_and_keeps_its_source_unless_healed() {
        let (_dir, store) = file_store();
        let captured = run(&store, "g");
        let id = store
            .save_skill(&skill("Find socks", "g"), Some(captured))
            .unwrap();
        let mut renamed = skill("Find any product", "Search the shop for {query}");
        renamed.params[0].name = "query".into();
        store.update_skill(id, &renamed, None).unwrap();
        let stored = store.skill(id).unwrap().unwrap();
        assert_eq!(stored.skill, renamed);
        assert_eq!(stored.source_run, Some(captured));
        assert!(stored.updated_at >= stored.created_at);
        assert_eq!(store.skill_by_name("Find socks").unwrap(), None);
        let healed = run(&store, "g");
        store.update_skill(id, &renamed, Some(healed)).unwrap();
        assert_eq!(store.skill(id).unwrap().unwrap().source_run, Some(healed));
        assert!(matches!(
            store.update_skill(id + 9, &renamed, None),
            Err(StoreError::NoSuchSkill(_))
        ));
    }

    #[test]
    fn the_library_lists_by_name_with_statistics_from_the_runs_that_replayed_each_skill() {
        let (_dir, store) = file_store();
        let socks = store
            .save_skill(&skill("socks", "Search for {query}"), None)
            .unwrap();
        let hats = store.save_skill(&skill("Hats", "Buy a hat"), None).unwrap();
        let runs: Vec<RunId> = (0..4)
            .map(|i| run(&store, &format!("replay {i}")))
            .collect();
        for r in &runs {
            store.set_run_skill(*r, socks).unwrap();
        }
        store
            .finish_run(runs[0], RunStatus::Succeeded, None)
            .unwrap();
        store
            .finish_run(runs[1], RunStatus::Succeeded, None)
            .unwrap();
        store.finish_run(runs[2], RunStatus::Failed, None).unwrap();
        // runs[3] is still going: counted, not timed.
        let conn = store.conn();
        for (r, start, end) in [
            (runs[0], 1_000, 3_000),
            (runs[1], 5_000, 9_000),
            (runs[2], 10_000, 10_600),
        ] {
            conn.execute(
                "UPDATE runs SET started_at = ?2, finished_at = ?3 WHERE id = ?1",
                params![r.0, start, end],
            )
            .unwrap();
        }
        conn.execute(
            "UPDATE runs SET started_at = 20000 WHERE id = ?1",
            [runs[3].0],
        )
        .unwrap();
        drop(conn);

        let list = store.list_skills(None).unwrap();
        let names: Vec<&str> = list.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["Hats", "socks"]);
        let hat = &list[0];
        assert_eq!(hat.id, hats);
        assert_eq!(hat.stats, SkillStats::default());
        let sock = &list[1];
        assert_eq!(sock.goal, "Search for {query}");
        assert_eq!(sock.origin, "https://shop.example");
        assert_eq!(sock.params.len(), 1);
        assert_eq!(sock.steps, 1);
        assert_eq!(
            sock.stats,
            SkillStats {
                runs: 4,
                succeeded: 2,
                last_run: Some(20_000),
                // (2000 + 4000 + 600) / 3
                average_ms: Some(2_200),
            }
        );
        // One skill alone reads the same, statistics included.
        assert_eq!(store.skill_summary(sock.id).unwrap().as_ref(), Some(sock));
        assert_eq!(store.skill_summary(sock.id + hat.id + 1).unwrap(), None);
    }

    #[test]
    fn searching_the_library_matches_name_goal_description_and_site_literally() {
        let (_dir, store) = file_store();
        store
            .save_skill(&skill("Find socks", "Search for {query}"), None)
            .unwrap();
        store
            .save_skill(&skill("100% cotton", "Buy a shirt"), None)
            .unwrap();
        let names = |q: &str| -> Vec<String> {
            store
                .list_skills(Some(q))
                .unwrap()
                .into_iter()
                .map(|s| s.name)
                .collect()
        };
        assert_eq!(names("SOCKS"), ["Find socks"]);
        assert_eq!(names("a shirt"), ["100% cotton"]);
        assert_eq!(names("usual way").len(), 2);
        assert_eq!(names("shop.example").len(), 2);
        // LIKE's wildcards are literal in a search.
        assert_eq!(names("0%"), ["100% cotton"]);
        assert!(names("_ind").is_empty());
        assert_eq!(names("  ").len(), 2);
    }

    #[test]
    fn deleting_a_skill_keeps_the_runs_that_replayed_it() {
        let (_dir, store) = file_store();
        let id = store.save_skill(&skill("Find socks", "g"), None).unwrap();
        let r = run(&store, "g");
        store.set_run_skill(r, id).unwrap();
        assert!(store.delete_skill(id).unwrap());
        assert!(!store.delete_skill(id).unwrap());
        assert!(store.run(r).unwrap().is_some());
        let skill_id: Option<i64> = store
            .conn()
            .query_row("SELECT skill_id FROM runs WHERE id = ?1", [r.0], |row| {
                row.get(0)
            })
            .unwrap();
        assert_eq!(skill_id, None);
        assert!(matches!(
            store.set_run_skill(r, id),
            Err(StoreError::NoSuchSkill(_))
        ));
        assert!(matches!(
            store.set_run_skill(RunId(77), id),
            Err(StoreError::NoSuchRun(_))
        ));
    }

    #[test]
    fn a_corrupt_body_is_reported_not_a_panic() {
        let (_dir, store) = file_store();
        let id = store.save_skill(&skill("Find socks", "g"), None).unwrap();
        store
            .conn()
            .execute(
                "UPDATE skills SET body = '{\"name\": 1}' WHERE id = ?1",
                [id],
            )
            .unwrap();
        let err = store.skill(id).unwrap_err();
        assert!(err.to_string().contains(&format!("skill {id}")), "{err}");
        assert!(store.list_skills(None).is_err());
    }
}
