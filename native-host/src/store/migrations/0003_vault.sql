-- The vault: credentials for auto-login, their secrets sealed with the vault key (AEAD), the
-- sites the user let itinero sign in to, and the audit list of every fill and refusal.

-- One row: how the vault key is had. `source` 'keyring' (a random key kept in the OS secret
-- store) or 'passphrase' (Argon2id of the user's passphrase with this salt and these costs).
-- `check_blob` is a known text sealed with the key: opening it proves a passphrase right.
CREATE TABLE vault_meta (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    source      TEXT    NOT NULL CHECK (source IN ('keyring', 'passphrase')),
    kdf_salt    BLOB,
    kdf_m_kib   INTEGER,
    kdf_t       INTEGER,
    kdf_p       INTEGER,
    check_blob  BLOB    NOT NULL,
    created_at  INTEGER NOT NULL
);

-- Origin and username stay readable (matching a page, listing); `sealed` holds the password,
-- the TOTP seed and the notes, bound to this origin and username by the AEAD's associated data.
CREATE TABLE vault (
    id          INTEGER PRIMARY KEY,
    origin      TEXT    NOT NULL,
    username    TEXT    NOT NULL,
    sealed      BLOB    NOT NULL,
    has_totp    INTEGER NOT NULL DEFAULT 0,
    -- Also sign in on other origins of the same registrable domain (public suffix list).
    same_site   INTEGER NOT NULL DEFAULT 0,
    -- Also fill on http:// when the saved origin is https://.
    allow_http  INTEGER NOT NULL DEFAULT 0,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    UNIQUE (origin, username)
);

-- The user's one-time consent to sign in automatically on a site.
CREATE TABLE vault_consent (
    origin      TEXT    PRIMARY KEY,
    granted_at  INTEGER NOT NULL
);

-- Every fill and every refusal, for the user to read. Never a secret.
CREATE TABLE vault_audit (
    id          INTEGER PRIMARY KEY,
    at          INTEGER NOT NULL,
    origin      TEXT    NOT NULL,
    username    TEXT    NOT NULL DEFAULT '',
    page_url    TEXT    NOT NULL DEFAULT '',
    what        TEXT    NOT NULL,
    detail      TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX vault_audit_at ON vault_audit (at);
