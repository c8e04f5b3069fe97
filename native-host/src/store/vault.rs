//! The vault's tables (migration 3). This file stores and reads what the vault module hands it:
//! sealed blobs it cannot open, and metadata. Sealing and the key are `crate::vault`'s.

use itinero_shared::vault::{AuditEntry, CredentialId, CredentialSummary, KeySource};
use rusqlite::{params, OptionalExtension, Row};

use super::error::{Doing, Result};
use super::{now_ms, Store};

/// How the vault key is had, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VaultMeta {
    pub source: KeySource,
    /// Salt and Argon2id costs (`m_kib`, `t`, `p`) for a passphrase vault.
    pub kdf: Option<(Vec<u8>, u32, u32, u32)>,
    /// A known text sealed with the key.
    pub check: Vec<u8>,
}

/// A credential as stored: its secrets still sealed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SealedCredential {
    pub summary: CredentialSummary,
    pub sealed: Vec<u8>,
}

/// What a new or replaced credential is, sealed.
pub struct NewSealed<'a> {
    pub origin: &'a str,
    pub username: &'a str,
    pub sealed: &'a [u8],
    pub has_totp: bool,
    pub same_site: bool,
    pub allow_http: bool,
}

const COLUMNS: &str = "id, origin, username, has_totp, same_site, allow_http, updated_at, sealed";

fn credential_from_row(row: &Row<'_>) -> rusqlite::Result<SealedCredential> {
    Ok(SealedCredential {
        summary: CredentialSummary {
            id: row.get(0)?,
            origin: row.get(1)?,
            username: row.get(2)?,
            has_totp: row.get(3)?,
            same_site: row.get(4)?,
            allow_http: row.get(5)?,
            updated_at: row.get(6)?,
        },
        sealed: row.get(7)?,
    })
}

fn source_name(source: KeySource) -> &'static str {
    match source {
        KeySource::Keyring => "keyring",
        KeySource::Passphrase => "passphrase",
    }
}

impl Store {
    pub fn vault_meta(&self) -> Result<Option<VaultMeta>> {
        self.conn()
            .query_row(
                "SELECT source, kdf_salt, kdf_m_kib, kdf_t, kdf_p, check_blob FROM vault_meta WHERE id = 1",
                [],
                |r| {
                    let source = match r.get::<_, String>(0)?.as_str() {
                        "keyring" => KeySource::Keyring,
                        _ => KeySource::Passphrase,
                    };
                    let salt: Option<Vec<u8>> = r.get(1)?;
                    let kdf = match salt {
                        Some(salt) => Some((salt, r.get(2)?, r.get(3)?, r.get(4)?)),
                        None => None,
                    };
                    Ok(VaultMeta {
                        source,
                        kdf,
                        check: r.get(5)?,
                    })
                },
            )
            .optional()
            .doing(|| "reading the vault's key settings".to_owned())
    }

    /// Records how the vault key is had; `false` if another process created the vault first.
    pub fn create_vault_meta(&self, meta: &VaultMeta) -> Result<bool> {
        let (salt, m, t, p) = match &meta.kdf {
            Some((salt, m, t, p)) => (Some(salt.as_slice()), Some(*m), Some(*t), Some(*p)),
            None => (None, None, None, None),
        };
        let n = self
            .conn()
            .execute(
                "INSERT OR IGNORE INTO vault_meta (id, source, kdf_salt, kdf_m_kib, kdf_t, kdf_p, check_blob, created_at)
                 VALUES (1, ?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![source_name(meta.source), salt, m, t, p, meta.check, now_ms()],
            )
            .doing(|| "creating the vault".to_owned())?;
        Ok(n == 1)
    }

    /// Saves a credential, replacing the one with the same origin and username.
    pub fn vault_put(&self, c: &NewSealed<'_>) -> Result<CredentialSummary> {
        let doing = || format!("saving the credential for {} on {}", c.username, c.origin);
        let now = now_ms();
        let conn = self.conn();
        conn.execute(
            "INSERT INTO vault (origin, username, sealed, has_totp, same_site, allow_http, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)
             ON CONFLICT (origin, username) DO UPDATE SET sealed = excluded.sealed,
               has_totp = excluded.has_totp, same_site = excluded.same_site,
               allow_http = excluded.allow_http, updated_at = excluded.updated_at",
            params![c.origin, c.username, c.sealed, c.has_totp, c.same_site, c.allow_http, now],
        )
        .doing(doing)?;
        conn.query_row(
            &format!("SELECT {COLUMNS} FROM vault WHERE origin = ?1 AND username = ?2"),
            params![c.origin, c.username],
            credential_from_row,
        )
        .map(|c| c.summary)
        .doing(doing)
    }

    /// Every credential, by origin then username.
    pub fn vault_list(&self) -> Result<Vec<SealedCredential>> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare(&format!(
                "SELECT {COLUMNS} FROM vault ORDER BY origin, username"
            ))
            .doing(|| "listing the vault".to_owned())?;
        let rows = stmt
            .query_map([], credential_from_row)
            .doing(|| "listing the vault".to_owned())?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .doing(|| "listing the vault".to_owned())
    }

    pub fn vault_get(&self, id: CredentialId) -> Result<Option<SealedCredential>> {
        self.conn()
            .query_row(
                &format!("SELECT {COLUMNS} FROM vault WHERE id = ?1"),
                params![id],
                credential_from_row,
            )
            .optional()
            .doing(|| format!("reading credential {id}"))
    }

    pub fn vault_remove(&self, id: CredentialId) -> Result<bool> {
        let n = self
            .conn()
            .execute("DELETE FROM vault WHERE id = ?1", params![id])
            .doing(|| format!("removing credential {id}"))?;
        Ok(n == 1)
    }

    /// Whether the user let itinero sign in on `origin` by itself.
    pub fn vault_consented(&self, origin: &str) -> Result<bool> {
        self.conn()
            .query_row(
                "SELECT 1 FROM vault_consent WHERE origin = ?1",
                params![origin],
                |_| Ok(()),
            )
            .optional()
            .map(|r| r.is_some())
            .doing(|| format!("reading the sign-in consent for {origin}"))
    }

    pub fn vault_consent(&self, origin: &str) -> Result<()> {
        self.conn()
            .execute(
                "INSERT OR REPLACE INTO vault_consent (origin, granted_at) VALUES (?1, ?2)",
                params![origin, now_ms()],
            )
            .map(|_| ())
            .doing(|| format!("keeping the sign-in consent for {origin}"))
    }

    pub fn vault_audit_add(&self, entry: &AuditEntry) -> Result<()> {
        self.conn()
            .execute(
                "INSERT INTO vault_audit (at, origin, username, page_url, what, detail)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    entry.at,
                    entry.origin,
                    entry.username,
                    entry.page_url,
                    entry.what,
                    entry.detail
                ],
            )
            .map(|_| ())
            .doing(|| "writing the vault's audit list".to_owned())
    }

    /// The latest `limit` audit entries, newest first.
    pub fn vault_audit(&self, limit: u32) -> Result<Vec<AuditEntry>> {
        let conn = self.conn();
        let doing = || "reading the vault's audit list".to_owned();
        let mut stmt = conn
            .prepare(
                "SELECT at, origin, username, page_url, what, detail FROM vault_audit
                 ORDER BY at DESC, id DESC LIMIT ?1",
            )
            .doing(doing)?;
        let rows = stmt
            .query_map(params![limit], |r| {
                Ok(AuditEntry {
                    at: r.get(0)?,
                    origin: r.get(1)?,
                    username: r.get(2)?,
                    page_url: r.get(3)?,
                    what: r.get(4)?,
                    detail: r.get(5)?,
                })
            })
            .doing(doing)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().doing(doing)
    }
}
