//! The API keys of OpenAI-compatible model servers, kept in the vault beside the sign-ins: one
//! per server *origin* (`http://127.0.0.1:8080` for `http://127.0.0.1:8080/v1/`), so the address
//! typed with or without `/v1` or a trailing slash finds the same key, and a key is sent only to
//! the scheme, host and port it was saved for. Each is sealed with the vault key and bound to
//! its origin by the associated data, so a blob copied onto another server does not open.
//!
//! Saving and using a key need the vault unlocked; listing which servers have one and removing
//! one do not. A key never leaves the host except as the `Authorization` header of a request to
//! its own server (`llm::openai`): not in a reply to the panel, a log line, a prompt, a run or
//! an audit entry, which names the server only.

use zeroize::Zeroizing;

use super::{crypto, Result, Vault, VaultError};
use crate::store::origin_of;

/// The longest key accepted: hosted services' keys are under 200 characters.
const MAX_KEY_LEN: usize = 4096;

/// The associated data a server's key is sealed with.
fn context(server: &str) -> Vec<u8> {
    format!("itinero vault api key v1\0{server}").into_bytes()
}

/// The origin a server's key is kept for: that of `server`, an http(s) address.
pub fn server_origin(server: &str) -> Result<String> {
    match origin_of(server) {
        Some(o) if o.starts_with("https://") || o.starts_with("http://") => Ok(o),
        _ => Err(VaultError::Invalid(format!(
            "{:?} is not a server address (e.g. http://127.0.0.1:8080/v1)",
            server.trim()
        ))),
    }
}

/// `key` as it is sent: without the spaces and line breaks a paste brings along, and refused
/// when what is left cannot be a header's value.
fn cleaned(key: &str) -> Result<&str> {
    let key = key.trim();
    if key.is_empty() {
        return Err(VaultError::Invalid("the API key is empty".into()));
    }
    if key.chars().count() > MAX_KEY_LEN {
        return Err(VaultError::Invalid(format!(
            "an API key has at most {MAX_KEY_LEN} characters"
        )));
    }
    if !key.chars().all(|c| c.is_ascii_graphic()) {
        return Err(VaultError::Invalid(
            "an API key is printable ASCII without spaces or line breaks".into(),
        ));
    }
    Ok(key)
}

impl Vault {
    /// Seals `key` as the API key of the server at `server`, replacing the one it had; returns
    /// the origin it is kept for.
    pub fn set_api_key(&self, server: &str, key: &str) -> Result<String> {
        let origin = server_origin(server)?;
        let key = cleaned(key)?;
        let vault_key = self.key()?;
        let sealed = crypto::seal(&vault_key, key.as_bytes(), &context(&origin));
        self.store.vault_api_key_put(&origin, &sealed)?;
        self.audit(&origin, "", "", "API key saved", "")?;
        Ok(origin)
    }

    /// Forgets the API key of the server at `server` (the vault may be locked); returns the
    /// origin and whether it had one.
    pub fn remove_api_key(&self, server: &str) -> Result<(String, bool)> {
        let origin = server_origin(server)?;
        let existed = self.store.vault_api_key_remove(&origin)?;
        if existed {
            self.audit(&origin, "", "", "API key removed", "")?;
        }
        Ok((origin, existed))
    }

    /// The API key of the server at `server`: `None` when none is saved, [`VaultError::Locked`]
    /// when one is but the vault is locked.
    pub fn api_key(&self, server: &str) -> Result<Option<Zeroizing<String>>> {
        let origin = server_origin(server)?;
        let Some(sealed) = self.store.vault_api_key(&origin)? else {
            return Ok(None);
        };
        let key = self.key()?;
        let plain = crypto::open(&key, &sealed, &context(&origin))
            .map_err(|e| VaultError::Damaged(format!("the API key for {origin}: {e}")))?;
        let text = std::str::from_utf8(&plain)
            .map_err(|_| VaultError::Damaged(format!("the API key for {origin} is not text")))?;
        Ok(Some(Zeroizing::new(text.to_owned())))
    }

    /// The origins of the servers with a saved key (works while locked).
    pub fn api_key_servers(&self) -> Result<Vec<String>> {
        Ok(self.store.vault_api_key_servers()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;
    use crate::vault::crypto::KdfParams;
    use crate::vault::key_store::NoKeyring;
    use itinero_shared::vault::VaultState;

    const KEY: &str = "sk-test-5f1d0c2a9b8e7d6c";

    fn vault(store: &Store) -> Vault {
        Vault::new(store.clone(), Box::new(NoKeyring("headless".into()))).with_kdf(KdfParams::FAST)
    }

    #[test]
    fn a_key_is_sealed_for_its_servers_origin_and_opens_only_unlocked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("itinero.sqlite3");
        let store = Store::open(&path).unwrap();
        let v = vault(&store);
        assert!(matches!(
            v.set_api_key("http://127.0.0.1:8080/v1", KEY),
            Err(VaultError::NeedsPassphrase(_))
        ));
        v.unlock("tr0ub4dor&3").unwrap();
        let origin = v
            .set_api_key("http://127.0.0.1:8080/v1/", &format!("  {KEY}\n"))
            .unwrap();
        assert_eq!(origin, "http://127.0.0.1:8080");
        // The same server however its address is written; not another port or scheme.
        assert_eq!(
            v.api_key("http://127.0.0.1:8080")
                .unwrap()
                .as_deref()
                .map(String::as_str),
            Some(KEY)
        );
        assert_eq!(v.api_key("http://127.0.0.1:8081/v1").unwrap(), None);
        assert_eq!(v.api_key("https://127.0.0.1:8080/v1").unwrap(), None);
        assert_eq!(v.api_key_servers().unwrap(), ["http://127.0.0.1:8080"]);
        assert_eq!(
            v.status().unwrap().api_key_servers,
            ["http://127.0.0.1:8080"]
        );

        // Nothing of the key is readable in the store's files.
        drop(v);
        drop(store);
        for file in [path.clone(), path.with_extension("sqlite3-wal")] {
            let bytes = std::fs::read(&file).unwrap_or_default();
            assert!(
                !bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()),
                "the key is readable in {}",
                file.display()
            );
        }

        // Another process: which servers have a key is known while locked, the key is not.
        let store = Store::open(&path).unwrap();
        let v = vault(&store);
        let status = v.status().unwrap();
        assert_eq!(status.state, VaultState::Locked);
        assert_eq!(status.api_key_servers, ["http://127.0.0.1:8080"]);
        assert!(matches!(
            v.api_key("http://127.0.0.1:8080/v1"),
            Err(VaultError::Locked)
        ));
        assert!(matches!(
            v.set_api_key("http://127.0.0.1:8080/v1", "sk-other"),
            Err(VaultError::Locked)
        ));
        // Removing needs no key.
        assert_eq!(
            v.remove_api_key("http://127.0.0.1:8080/v1").unwrap(),
            ("http://127.0.0.1:8080".to_owned(), true)
        );
        assert!(!v.remove_api_key("http://127.0.0.1:8080").unwrap().1);
        assert!(v.api_key_servers().unwrap().is_empty());
        let audit: Vec<(String, String)> = v
            .audit_list(10)
            .unwrap()
            .into_iter()
            .map(|a| (a.what, a.origin))
            .collect();
        assert_eq!(
            audit,
            [
                ("API key removed".into(), "http://127.0.0.1:8080".into()),
                ("API key saved".into(), "http://127.0.0.1:8080".into())
            ]
        );
    }

    #[test]
    fn a_key_moved_to_another_server_does_not_open() {
        let store = Store::open_in_memory().unwrap();
        let v = vault(&store);
        v.unlock("tr0ub4dor&3").unwrap();
        v.set_api_key("https://a.example/v1", KEY).unwrap();
        let sealed = store.vault_api_key("https://a.example").unwrap().unwrap();
        store
            .vault_api_key_put("https://b.example", &sealed)
            .unwrap();
        assert!(matches!(
            v.api_key("https://b.example/v1"),
            Err(VaultError::Damaged(_))
        ));
        // Its own server still opens it, and the error named no key.
        assert_eq!(
            v.api_key("https://a.example")
                .unwrap()
                .as_deref()
                .map(String::as_str),
            Some(KEY)
        );
        let err = v.api_key("https://b.example").unwrap_err().to_string();
        assert!(!err.contains(KEY), "{err}");
    }

    #[test]
    fn only_a_servers_address_and_a_usable_key_are_taken() {
        let store = Store::open_in_memory().unwrap();
        let v = vault(&store);
        v.unlock("tr0ub4dor&3").unwrap();
        for server in [
            "",
            "127.0.0.1:8080",
            "file:///etc/passwd",
            "ftp://a.example",
        ] {
            assert!(
                matches!(v.set_api_key(server, KEY), Err(VaultError::Invalid(_))),
                "{server}"
            );
        }
        for key in [
            "",
            "   ",
            "sk one",
            "sk\u{7}bell",
            "ключ",
            &"k".repeat(MAX_KEY_LEN + 1),
        ] {
            let err = v.set_api_key("https://a.example", key).unwrap_err();
            assert!(matches!(err, VaultError::Invalid(_)), "{key:?}: {err}");
            if key.len() > 3 {
                assert!(!err.to_string().contains(key.trim()), "{err}");
            }
        }
        assert!(v.api_key_servers().unwrap().is_empty());
    }
}
