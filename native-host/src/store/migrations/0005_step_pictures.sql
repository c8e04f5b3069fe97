-- How the page looked after each step: a JPEG, or why none was kept (a secret was typed, the
-- tab was not in view, the run's allowance was used up). Deleted with its run.
CREATE TABLE step_pictures (
    run_id   INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    n        INTEGER NOT NULL,
    jpeg     BLOB,
    withheld TEXT,
    taken_at INTEGER NOT NULL,
    PRIMARY KEY (run_id, n),
    CHECK ((jpeg IS NULL) <> (withheld IS NULL))
) STRICT;
