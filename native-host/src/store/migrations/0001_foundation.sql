-- 1: runs and their steps, settings, per-site "always allow", lessons.
-- Times are Unix milliseconds. JSON columns are checked with json_valid. No secrets are kept
-- here: the vault gets its own table (and encryption) in a later migration.

CREATE TABLE runs (
    id          INTEGER PRIMARY KEY,
    goal        TEXT    NOT NULL,
    start_url   TEXT    NOT NULL,
    -- scheme://host[:port] of start_url; NULL when it has none (about:blank, file:).
    origin      TEXT,
    tab_id      INTEGER,
    backend     TEXT    NOT NULL,
    model       TEXT    NOT NULL,
    started_at  INTEGER NOT NULL,
    finished_at INTEGER,
    status      TEXT    NOT NULL DEFAULT 'running' CHECK (status IN
                  ('running', 'succeeded', 'failed', 'stopped', 'step_limit', 'interrupted')),
    answer      TEXT,
    steps       INTEGER NOT NULL DEFAULT 0,
    -- The host process that runs it: on open, a running run whose host is gone is interrupted,
    -- while another live host's (a second browser profile's) is left alone.
    host_pid    INTEGER NOT NULL
) STRICT;

CREATE INDEX runs_by_start ON runs (started_at DESC);
CREATE INDEX runs_by_origin ON runs (origin, started_at DESC);
CREATE INDEX runs_running ON runs (host_pid) WHERE status = 'running';

CREATE TABLE steps (
    id             INTEGER PRIMARY KEY,
    run_id         INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    n              INTEGER NOT NULL,
    url            TEXT    NOT NULL,
    dom_hash       TEXT,
    action         TEXT    CHECK (action IS NULL OR json_valid(action)),
    action_summary TEXT    NOT NULL DEFAULT '',
    outcome        TEXT    CHECK (outcome IS NULL OR json_valid(outcome)),
    outcome_text   TEXT    NOT NULL DEFAULT '',
    -- What answered: llm, recovery, vote, cache, skill, human, guard.
    strategy       TEXT    NOT NULL DEFAULT '',
    thought        TEXT    NOT NULL DEFAULT '',
    decide_ms      INTEGER,
    act_ms         INTEGER,
    total_ms       INTEGER,
    recorded_at    INTEGER NOT NULL,
    UNIQUE (run_id, n)
) STRICT;

CREATE TABLE settings (
    key        TEXT    PRIMARY KEY,
    value      TEXT    NOT NULL CHECK (json_valid(value)),
    updated_at INTEGER NOT NULL
) STRICT;

CREATE TABLE site_approvals (
    origin     TEXT    NOT NULL,
    kind       TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (origin, kind)
) STRICT;

CREATE TABLE lessons (
    id         INTEGER PRIMARY KEY,
    origin     TEXT    NOT NULL,
    text       TEXT    NOT NULL,
    source     TEXT    NOT NULL,
    run_id     INTEGER REFERENCES runs (id) ON DELETE SET NULL,
    created_at INTEGER NOT NULL
) STRICT;

CREATE INDEX lessons_by_origin ON lessons (origin, created_at DESC);
CREATE INDEX lessons_by_run ON lessons (run_id) WHERE run_id IS NOT NULL;
