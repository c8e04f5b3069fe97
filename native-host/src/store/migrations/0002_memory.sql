-- 2: what makes a repeated task faster: the action cache, skills, full-text search over past
-- goals (few-shot trajectories) and the sites the agent has worked on.

CREATE TABLE action_cache (
    id         INTEGER PRIMARY KEY,
    -- The goal, lowercased with its spacing and end punctuation normalised.
    goal       TEXT    NOT NULL,
    origin     TEXT    NOT NULL,
    -- The URL's path with ids and numbers as `*`, and its query's keys.
    path       TEXT    NOT NULL,
    -- Hash of what can be acted on in the page (see agent/cache.rs).
    dom_hash   TEXT    NOT NULL,
    -- The action, with its target's fingerprint: the index is resolved again on use.
    action     TEXT    NOT NULL CHECK (json_valid(action)),
    hits       INTEGER NOT NULL DEFAULT 0,
    failures   INTEGER NOT NULL DEFAULT 0,
    -- Model time the entry replaced when it was written (the decision's time).
    decide_ms  INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    used_at    INTEGER,
    UNIQUE (goal, origin, path, dom_hash)
) STRICT;

CREATE TABLE skills (
    id          INTEGER PRIMARY KEY,
    name        TEXT    NOT NULL UNIQUE COLLATE NOCASE,
    description TEXT    NOT NULL DEFAULT '',
    origin      TEXT    NOT NULL,
    goal        TEXT    NOT NULL,
    -- The whole skill as shared::skills::Skill JSON (params and steps).
    body        TEXT    NOT NULL CHECK (json_valid(body)),
    -- The run it was captured from (or last healed by).
    source_run  INTEGER REFERENCES runs (id) ON DELETE SET NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
) STRICT;

CREATE INDEX skills_by_origin ON skills (origin);

-- A run that replayed a skill, for the skill's statistics.
ALTER TABLE runs ADD COLUMN skill_id INTEGER REFERENCES skills (id) ON DELETE SET NULL;
CREATE INDEX runs_by_skill ON runs (skill_id, started_at DESC) WHERE skill_id IS NOT NULL;

CREATE TABLE sites (
    origin     TEXT    PRIMARY KEY,
    first_seen INTEGER NOT NULL,
    last_seen  INTEGER NOT NULL,
    runs       INTEGER NOT NULL DEFAULT 0
) STRICT;

INSERT INTO sites (origin, first_seen, last_seen, runs)
    SELECT origin, min(started_at), max(started_at), count(*) FROM runs
    WHERE origin IS NOT NULL GROUP BY origin;

-- Past goals by words (bm25), kept in step with runs by triggers.
CREATE VIRTUAL TABLE runs_fts USING fts5 (
    goal,
    content = 'runs',
    content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2'
);

INSERT INTO runs_fts (rowid, goal) SELECT id, goal FROM runs;

CREATE TRIGGER runs_fts_insert AFTER INSERT ON runs BEGIN
    INSERT INTO runs_fts (rowid, goal) VALUES (new.id, new.goal);
END;

CREATE TRIGGER runs_fts_delete AFTER DELETE ON runs BEGIN
    INSERT INTO runs_fts (runs_fts, rowid, goal) VALUES ('delete', old.id, old.goal);
END;

CREATE TRIGGER runs_fts_update AFTER UPDATE OF goal ON runs BEGIN
    INSERT INTO runs_fts (runs_fts, rowid, goal) VALUES ('delete', old.id, old.goal);
    INSERT INTO runs_fts (rowid, goal) VALUES (new.id, new.goal);
END;
