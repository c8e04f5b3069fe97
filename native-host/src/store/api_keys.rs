//! The sealed API keys of OpenAI-compatible servers (migration 6), one per server origin. Like
//! `vault.rs`, this keeps blobs it cannot open: sealing and the key are `crate::vault`'s.

use rusqlite::{params, OptionalExtension};

use super::error::{Doing, Result};
use super::{now_ms, Store};

impl Store {
    /// Keeps `sealed` as the key of `server` (an origin), replacing the one it had.
    pub fn vault_api_key_put(&self, server: &str, sealed: &[u8]) -> Result<()> {
        self.conn()
            .execute(
                "INSERT INTO vault_api_keys (server, sealed, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?3)
                 ON CONFLICT (server) DO UPDATE SET sealed = excluded.sealed,
                   updated_at = excluded.updated_at",
                params![server, sealed, now_ms()],
            )
            .map(|_| ())
            .doing(|| format!("saving the API key for {server}"))
    }

    /// The sealed key of `server`, if one is kept.
    pub fn vault_api_key(&self, server: &str) -> Result<Option<Vec<u8>>> {
        self.conn()
            .query_row(
                "SELECT sealed FROM vault_api_keys WHERE server = ?1",
                params![server],
                |r| r.get(0),
            )
            .optional()
            .doing(|| format!("reading the API key for {server}"))
    }

    /// Whether `server` had a key, now removed.
    pub fn vault_api_key_remove(&self, server: &str) -> Result<bool> {
        let n = self
            .conn()
            .execute(
                "DELETE FROM vault_api_keys WHERE server = ?1",
                params![server],
            )
            .doing(|| format!("removing the API key for {server}"))?;
        Ok(n == 1)
    }

    /// The servers that have a key, in order.
    pub fn vault_api_key_servers(&self) -> Result<Vec<String>> {
        let conn = self.conn();
        let doing = || "listing the servers with an API key".to_owned();
        let mut stmt = conn
            .prepare("SELECT server FROM vault_api_keys ORDER BY server")
            .doing(doing)?;
        let rows = stmt.query_map([], |r| r.get(0)).doing(doing)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().doing(doing)
    }
}

#[cfg(test)]
mod tests {
    use crate::store::Store;

    #[test]
    fn a_servers_key_is_replaced_listed_and_removed() {
        let store = Store::open_in_memory().unwrap();
        assert!(store.vault_api_key_servers().unwrap().is_empty());
        store
            .vault_api_key_put("https://b.example", b"one")
            .unwrap();
        store
            .vault_api_key_put("http://127.0.0.1:8080", b"two")
            .unwrap();
        store
            .vault_api_key_put("https://b.example", b"three")
            .unwrap();
        assert_eq!(
            store.vault_api_key_servers().unwrap(),
            ["http://127.0.0.1:8080", "https://b.example"]
        );
        assert_eq!(
            store.vault_api_key("https://b.example").unwrap().as_deref(),
            Some(&b"three"[..])
        );
        assert!(store.vault_api_key_remove("https://b.example").unwrap());
        assert!(!store.vault_api_key_remove("https://b.example").unwrap());
        assert_eq!(store.vault_api_key("https://b.example").unwrap(), None);
    }
}
