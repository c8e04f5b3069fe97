//! The vault: credentials for auto-login, kept in the store's `vault` table with their secrets
//! (password, TOTP seed, notes) sealed by an AEAD under the vault key.
//!
//! The key is never in the store. It is a random key in the OS secret store where one exists
//! ([`keyring`]), or derived with Argon2id from a passphrase the user gives once per host start
//! (headless Linux, CI, or by choice). While the host runs, an unlocked vault keeps the key in
//! memory (wiped on lock and on drop); the CLI is a separate process and unlocks for itself.
//! Nothing here ever logs a secret; errors name the origin and the user, never a password.
//!
//! States: not created → locked ⇄ unlocked. A keyring vault unlocks itself; a passphrase vault
//! (at least [`MIN_PASSPHRASE`] characters) is unlocked once per host, from the panel or
//! `itinero-host vault unlock` through the control socket. The store's `vault_meta` keeps how
//! the key is had (source, salt, costs) and a known text sealed with it, so a wrong passphrase
//! is told apart from a damaged vault. The audit list (`vault_audit`) gets every addition,
//! removal and reveal from here, and every fill, refusal and sign-in from auto-login through
//! [`Vault::audit`]; the sites where the user chose "always" for signing in are kept in
//! `vault_consent`. The API keys of OpenAI-compatible model servers are sealed here too
//! ([`api_keys`]), one per server origin.

pub mod api_keys;
pub mod crypto;
pub mod csv_import;
pub mod key_store;
pub mod totp;

use std::sync::{Arc, Mutex};

use itinero_shared::vault::{
    AuditEntry, CredentialId, CredentialSummary, ImportReport, KeySource, VaultState, VaultStatus,
};
use serde::{Deserialize, Serialize};
use zeroize::{Zeroize, ZeroizeOnDrop, Zeroizing};

use crate::store::{origin_of, NewSealed, Store, StoreError, VaultMeta};
use crypto::{KdfParams, Key};
use key_store::KeyStore;

/// What `check_blob` seals: opening it proves the key.
const CHECK: &[u8] = b"itinero vault key check v1";
/// The shortest passphrase accepted when a vault is created.
pub const MIN_PASSPHRASE: usize = 8;

#[derive(Debug, thiserror::Error)]
pub enum VaultError {
    #[error("the vault is locked: unlock it with its passphrase (in the side panel's Vault page, or `itinero-host vault unlock`)")]
    Locked,
    #[error("there is no vault yet and no OS secret store to keep its key ({0}): choose a passphrase to create it")]
    NeedsPassphrase(String),
    #[error("wrong passphrase")]
    WrongPassphrase,
    #[error("this vault's key is kept by the OS secret store, which hands it to any program running as you, so there is no passphrase to confirm who asks: passwords are shown only from a vault with a passphrase")]
    RevealNeedsPassphrase,
    #[error("a passphrase needs at least {MIN_PASSPHRASE} characters")]
    WeakPassphrase,
    #[error("this vault's key is in the OS secret store, which cannot be read now: {0}")]
    Keyring(String),
    #[error("{0}")]
    Invalid(String),
    #[error("there is no credential {0}")]
    NoSuchCredential(CredentialId),
    #[error("the vault is damaged: {0}")]
    Damaged(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

pub type Result<T> = std::result::Result<T, VaultError>;

/// A credential's secrets, as sealed; wiped from memory when dropped.
#[derive(Serialize, Deserialize, Zeroize, ZeroizeOnDrop, Default)]
pub struct Secrets {
    pub password: String,
    #[serde(default)]
    pub totp_seed: Option<String>,
    #[serde(default)]
    pub notes: String,
}

/// A credential to save.
pub struct NewCredential {
    /// A URL or origin; kept as the exact origin.
    pub origin: String,
    pub username: String,
    pub password: Zeroizing<String>,
    /// Base32 or an `otpauth://` URI.
    pub totp_seed: Option<Zeroizing<String>>,
    pub notes: String,
    pub same_site: bool,
    pub allow_http: bool,
}

/// The vault of one store; clones share the unlocked key.
#[derive(Clone)]
pub struct Vault {
    store: Store,
    keys: Arc<dyn KeyStore>,
    key: Arc<Mutex<Option<Key>>>,
    kdf: KdfParams,
}

/// The associated data a credential's secrets are sealed with: its row's identity.
fn context(origin: &str, username: &str) -> Vec<u8> {
    format!("itinero vault v1\0{origin}\0{username}").into_bytes()
}

impl Vault {
    pub fn new(store: Store, keys: Box<dyn KeyStore>) -> Self {
        Self {
            store,
            keys: Arc::from(keys),
            key: Arc::default(),
            kdf: KdfParams::default(),
        }
    }

    /// Cheaper Argon2id costs (tests: the strength is not what they check).
    #[doc(hidden)]
    pub fn with_kdf(mut self, kdf: KdfParams) -> Self {
        self.kdf = kdf;
        self
    }

    /// The key while unlocked. Setting or clearing it is one store, so a panic elsewhere while
    /// it was held cannot leave it half written: the lock is taken over rather than panicking
    /// every later vault call.
    fn key_slot(&self) -> std::sync::MutexGuard<'_, Option<Key>> {
        self.key
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn held(&self) -> Option<Key> {
        self.key_slot().clone()
    }

    fn hold(&self, key: Key) {
        *self.key_slot() = Some(key);
    }

    /// The vault's state. A vault keyed by the OS secret store unlocks itself here.
    pub fn status(&self) -> Result<VaultStatus> {
        let meta = self.store.vault_meta()?;
        let keyring_unavailable = match &meta {
            Some(m) if m.source == KeySource::Passphrase => None,
            _ => self.keys.unavailable(),
        };
        let state = match &meta {
            None => VaultState::NotCreated,
            Some(_) if self.held().is_some() => VaultState::Unlocked,
            Some(m) if m.source == KeySource::Keyring => match self.unlock_from_keyring(m) {
                Ok(()) => VaultState::Unlocked,
                Err(_) => VaultState::Locked,
            },
            Some(_) => VaultState::Locked,
        };
        Ok(VaultStatus {
            state,
            source: meta.map(|m| m.source),
            keyring_unavailable,
            api_key_servers: self.api_key_servers()?,
        })
    }

    fn unlock_from_keyring(&self, meta: &VaultMeta) -> Result<()> {
        let key = self
            .keys
            .get()
            .map_err(VaultError::Keyring)?
            .ok_or_else(|| {
                VaultError::Keyring("the vault's key is no longer in the OS secret store".into())
            })?;
        crypto::open(&key, &meta.check, b"check")
            .map_err(|_| VaultError::Damaged("the OS secret store holds another key".into()))?;
        self.hold(key);
        Ok(())
    }

    /// The key, unlocking from the OS secret store when that is where it lives.
    fn key(&self) -> Result<Key> {
        if let Some(key) = self.held() {
            return Ok(key);
        }
        match self.store.vault_meta()? {
            Some(meta) if meta.source == KeySource::Keyring => {
                self.unlock_from_keyring(&meta)?;
                self.held().ok_or(VaultError::Locked)
            }
            Some(_) => Err(VaultError::Locked),
            None => self
                .create(None)
                .map(|_| self.held().expect("just created")),
        }
    }

    /// Creates the vault: keyed by the OS secret store when there is one and no passphrase is
    /// given, else by `passphrase`.
    fn create(&self, passphrase: Option<&str>) -> Result<KeySource> {
        let (key, meta) = match passphrase {
            None => {
                if let Some(why) = self.keys.unavailable() {
                    return Err(VaultError::NeedsPassphrase(why));
                }
                let key = Key::random();
                self.keys.set(&key).map_err(VaultError::Keyring)?;
                let check = crypto::seal(&key, CHECK, b"check");
                let meta = VaultMeta {
                    source: KeySource::Keyring,
                    kdf: None,
                    check,
                };
                (key, meta)
            }
            Some(passphrase) => {
                if passphrase.chars().count() < MIN_PASSPHRASE {
                    return Err(VaultError::WeakPassphrase);
                }
                let salt = crypto::random_salt();
                let key = crypto::derive(passphrase, &salt, self.kdf)
                    .map_err(|e| VaultError::Damaged(e.to_string()))?;
                let check = crypto::seal(&key, CHECK, b"check");
                let k = self.kdf;
                let meta = VaultMeta {
                    source: KeySource::Passphrase,
                    kdf: Some((salt.to_vec(), k.m_kib, k.t, k.p)),
                    check,
                };
                (key, meta)
            }
        };
        if !self.store.create_vault_meta(&meta)? {
            // Another process created it meanwhile: use that one.
            return Err(VaultError::Invalid(
                "the vault was just created by another itinero process; try again".into(),
            ));
        }
        tracing::info!(source = ?meta.source, "vault created");
        self.hold(key);
        Ok(meta.source)
    }

    /// Unlocks with `passphrase`; creates the vault with it when there is none yet.
    pub fn unlock(&self, passphrase: &str) -> Result<VaultStatus> {
        match self.store.vault_meta()? {
            None => {
                self.create(Some(passphrase))?;
            }
            Some(meta) if meta.source == KeySource::Keyring => {
                self.unlock_from_keyring(&meta)?;
            }
            Some(meta) => {
                let key = key_from_passphrase(&meta, passphrase)?;
                self.hold(key);
            }
        }
        self.status()
    }

    /// Forgets the key (a vault in the OS secret store unlocks itself again when next used).
    pub fn lock(&self) {
        *self.key_slot() = None;
    }

    /// Saves a credential (replacing the one for the same origin and username).
    pub fn add(&self, c: NewCredential) -> Result<CredentialSummary> {
        let origin = match origin_of(&c.origin) {
            Some(o) if o.starts_with("https://") || o.starts_with("http://") => o,
            _ => {
                return Err(VaultError::Invalid(format!(
                    "{:?} is not a web address (e.g. https://shop.example)",
                    c.origin
                )))
            }
        };
        let username = c.username.trim();
        if username.is_empty() {
            return Err(VaultError::Invalid("a credential needs a username".into()));
        }
        if c.password.is_empty() {
            return Err(VaultError::Invalid("a credential needs a password".into()));
        }
        let totp_seed = match &c.totp_seed {
            Some(seed) if !seed.trim().is_empty() => {
                Some(totp::normalize_seed(seed).map_err(VaultError::Invalid)?)
            }
            _ => None,
        };
        let key = self.key()?;
        let secrets = Secrets {
            password: c.password.to_string(),
            totp_seed,
            notes: c.notes.clone(),
        };
        let plain = Zeroizing::new(serde_json::to_vec(&secrets).expect("secrets serialise"));
        let sealed = crypto::seal(&key, &plain, &context(&origin, username));
        let summary = self.store.vault_put(&NewSealed {
            origin: &origin,
            username,
            sealed: &sealed,
            has_totp: secrets.totp_seed.is_some(),
            same_site: c.same_site,
            allow_http: c.allow_http,
        })?;
        self.audit(&origin, username, "", "added", "")?;
        Ok(summary)
    }

    /// Every credential, without secrets; works while locked.
    pub fn list(&self) -> Result<Vec<CredentialSummary>> {
        Ok(self
            .store
            .vault_list()?
            .into_iter()
            .map(|c| c.summary)
            .collect())
    }

    pub fn remove(&self, id: CredentialId) -> Result<bool> {
        let Some(c) = self.store.vault_get(id)? else {
            return Ok(false);
        };
        let removed = self.store.vault_remove(id)?;
        self.audit(&c.summary.origin, &c.summary.username, "", "removed", "")?;
        Ok(removed)
    }

    /// A credential's secrets.
    pub fn secrets(&self, id: CredentialId) -> Result<(CredentialSummary, Secrets)> {
        let c = self
            .store
            .vault_get(id)?
            .ok_or(VaultError::NoSuchCredential(id))?;
        let key = self.key()?;
        let plain = crypto::open(
            &key,
            &c.sealed,
            &context(&c.summary.origin, &c.summary.username),
        )
        .map_err(|e| {
            VaultError::Damaged(format!(
                "the credential for {} on {}: {e}",
                c.summary.username, c.summary.origin
            ))
        })?;
        let secrets: Secrets = serde_json::from_slice(&plain)
            .map_err(|e| VaultError::Damaged(format!("unreadable secrets: {e}")))?;
        Ok((c.summary, secrets))
    }

    /// The password and the current TOTP code, for the user who asked to see them and gave the
    /// vault's passphrase again: an unlocked vault (or one whose key the OS secret store hands
    /// to any program of the user's) must not let whoever can start the host read passwords.
    /// A vault keyed by the OS secret store has no passphrase to confirm with, so it shows none.
    pub fn reveal(
        &self,
        id: CredentialId,
        passphrase: &str,
    ) -> Result<(Zeroizing<String>, Option<String>)> {
        let (summary, secrets) = self.secrets(id)?;
        let meta = self
            .store
            .vault_meta()?
            .ok_or_else(|| VaultError::Damaged("no vault settings".into()))?;
        if meta.source == KeySource::Keyring {
            return Err(VaultError::RevealNeedsPassphrase);
        }
        if let Err(e) = key_from_passphrase(&meta, passphrase) {
            self.audit(
                &summary.origin,
                &summary.username,
                "",
                "reveal refused",
                "the passphrase given was not the vault's",
            )?;
            return Err(e);
        }
        let code = match &secrets.totp_seed {
            Some(seed) => Some(totp::code_now(seed).map_err(VaultError::Damaged)?),
            None => None,
        };
        self.audit(
            &summary.origin,
            &summary.username,
            "",
            "revealed",
            "shown to the user",
        )?;
        Ok((Zeroizing::new(secrets.password.clone()), code))
    }

    /// Adds the credentials of a Bitwarden, KeePassXC or Chrome CSV export.
    pub fn import_csv(&self, text: &str) -> Result<ImportReport> {
        let parsed = csv_import::parse(text).map_err(VaultError::Invalid)?;
        let known: Vec<(String, String)> = self
            .list()?
            .into_iter()
            .map(|c| (c.origin, c.username))
            .collect();
        let mut report = ImportReport {
            format: parsed.format.to_owned(),
            skipped: parsed.skipped,
            ..Default::default()
        };
        for row in parsed.rows {
            if row.username.is_empty() {
                report
                    .skipped
                    .push(format!("line {} ({}): no username", row.line, row.origin));
                continue;
            }
            let existed = known.contains(&(row.origin.clone(), row.username.clone()));
            let credential = NewCredential {
                origin: row.origin.clone(),
                username: row.username.clone(),
                password: row.password,
                totp_seed: row.totp,
                notes: row.notes,
                same_site: false,
                allow_http: false,
            };
            match self.add(credential) {
                Ok(_) if existed => report.updated += 1,
                Ok(_) => report.added += 1,
                Err(VaultError::Invalid(why)) => report
                    .skipped
                    .push(format!("line {} ({}): {why}", row.line, row.origin)),
                Err(e) => return Err(e),
            }
        }
        Ok(report)
    }

    /// Whether the user let itinero sign in on `origin` by itself ("always" to the first ask).
    pub fn consented(&self, origin: &str) -> Result<bool> {
        Ok(self.store.vault_consented(origin)?)
    }

    pub fn consent(&self, origin: &str) -> Result<()> {
        self.store.vault_consent(origin)?;
        self.audit(origin, "", "", "consented", "sign in without asking")
    }

    /// Writes a line of the audit list (never a secret).
    pub fn audit(
        &self,
        origin: &str,
        username: &str,
        page_url: &str,
        what: &str,
        detail: &str,
    ) -> Result<()> {
        Ok(self.store.vault_audit_add(&AuditEntry {
            at: crate::store::now_ms(),
            origin: origin.to_owned(),
            username: username.to_owned(),
            page_url: page_url.to_owned(),
            what: what.to_owned(),
            detail: detail.to_owned(),
        })?)
    }

    pub fn audit_list(&self, limit: u32) -> Result<Vec<AuditEntry>> {
        Ok(self.store.vault_audit(limit)?)
    }
}

/// The key `passphrase` derives with the vault's settings, if it opens the vault's check.
fn key_from_passphrase(meta: &VaultMeta, passphrase: &str) -> Result<Key> {
    let (salt, m_kib, t, p) = meta
        .kdf
        .as_ref()
        .ok_or_else(|| VaultError::Damaged("no key derivation settings".into()))?;
    let kdf = KdfParams {
        m_kib: *m_kib,
        t: *t,
        p: *p,
    };
    let key =
        crypto::derive(passphrase, salt, kdf).map_err(|e| VaultError::Damaged(e.to_string()))?;
    crypto::open(&key, &meta.check, b"check").map_err(|_| VaultError::WrongPassphrase)?;
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use key_store::{MemoryKeyring, NoKeyring};

    const FAST: KdfParams = KdfParams::FAST;
    const PASSWORD: &str = "correct horse battery staple";

    fn alice() -> NewCredential {
        NewCredential {
            origin: "https://shop.example/login?next=/".into(),
            username: "alice".into(),
            password: Zeroizing::new(PASSWORD.into()),
            totp_seed: Some(Zeroizing::new("jbsw y3dp ehpk 3pxp".into())),
            notes: "recovery codes in the drawer".into(),
            same_site: false,
            allow_http: false,
        }
    }

    fn no_keyring(store: &Store) -> Vault {
        Vault::new(store.clone(), Box::new(NoKeyring("headless".into()))).with_kdf(FAST)
    }

    #[test]
    fn a_passphrase_vault_keeps_secrets_sealed_and_opens_only_with_its_passphrase() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("itinero.sqlite3");
        let store = Store::open(&path).unwrap();
        let vault = no_keyring(&store);
        assert_eq!(vault.status().unwrap().state, VaultState::NotCreated);
        assert!(matches!(
            vault.add(alice()),
            Err(VaultError::NeedsPassphrase(_))
        ));
        assert!(matches!(
            vault.unlock("short"),
            Err(VaultError::WeakPassphrase)
        ));
        let status = vault.unlock("tr0ub4dor&3").unwrap();
        assert_eq!(status.state, VaultState::Unlocked);
        assert_eq!(status.source, Some(KeySource::Passphrase));
        let saved = vault.add(alice()).unwrap();
        assert_eq!(saved.origin, "https://shop.example");
        assert!(saved.has_totp);

        // Nothing secret is readable in the file.
        drop(vault);
        drop(store);
        let bytes = std::fs::read(&path).unwrap();
        let wal = std::fs::read(path.with_extension("sqlite3-wal")).unwrap_or_default();
        for secret in [PASSWORD, "JBSWY3DPEHPK3PXP", "recovery codes"] {
            for file in [&bytes, &wal] {
                assert!(
                    !file.windows(secret.len()).any(|w| w == secret.as_bytes()),
                    "{secret} is readable in the store"
                );
            }
        }

        // A new process: locked until the passphrase is given; a wrong one is refused.
        let store = Store::open(&path).unwrap();
        let vault = no_keyring(&store);
        assert_eq!(vault.status().unwrap().state, VaultState::Locked);
        assert_eq!(vault.list().unwrap().len(), 1, "listing works while locked");
        assert!(matches!(vault.secrets(saved.id), Err(VaultError::Locked)));
        assert!(matches!(
            vault.unlock("tr0ub4dor&4"),
            Err(VaultError::WrongPassphrase)
        ));
        vault.unlock("tr0ub4dor&3").unwrap();
        let (_, secrets) = vault.secrets(saved.id).unwrap();
        assert_eq!(secrets.password, PASSWORD);
        assert_eq!(secrets.totp_seed.as_deref(), Some("JBSWY3DPEHPK3PXP"));
        // Unlocked is not enough to see a password: the passphrase is asked again.
        for given in ["", "tr0ub4dor&4"] {
            assert!(matches!(
                vault.reveal(saved.id, given),
                Err(VaultError::WrongPassphrase)
            ));
        }
        let (password, code) = vault.reveal(saved.id, "tr0ub4dor&3").unwrap();
        assert_eq!(password.as_str(), PASSWORD);
        assert_eq!(code.unwrap().len(), 6);
        vault.lock();
        assert!(matches!(
            vault.reveal(saved.id, "tr0ub4dor&3"),
            Err(VaultError::Locked)
        ));
        let audit: Vec<String> = vault
            .audit_list(10)
            .unwrap()
            .into_iter()
            .map(|a| a.what)
            .collect();
        assert_eq!(
            audit,
            ["revealed", "reveal refused", "reveal refused", "added"]
        );
    }

    #[test]
    fn a_keyring_vault_creates_and_unlocks_itself() {
        let store = Store::open_in_memory().unwrap();
        let keys = Arc::new(MemoryKeyring::default());
        struct Shared(Arc<MemoryKeyring>);
        impl KeyStore for Shared {
            fn get(&self) -> std::result::Result<Option<Key>, String> {
                self.0.get()
            }
            fn set(&self, key: &Key) -> std::result::Result<(), String> {
                self.0.set(key)
            }
            fn unavailable(&self) -> Option<String> {
                None
            }
        }
        let vault = Vault::new(store.clone(), Box::new(Shared(keys.clone())));
        let saved = vault.add(alice()).unwrap();
        assert_eq!(vault.status().unwrap().source, Some(KeySource::Keyring));
        // Another host on the same store and secret store: unlocked without a passphrase.
        let other = Vault::new(store.clone(), Box::new(Shared(keys)));
        assert_eq!(other.status().unwrap().state, VaultState::Unlocked);
        assert_eq!(other.secrets(saved.id).unwrap().1.password, PASSWORD);
        // Any program of the user's gets the key from the secret store: nothing confirms who
        // asks, so no password is shown.
        assert!(matches!(
            other.reveal(saved.id, ""),
            Err(VaultError::RevealNeedsPassphrase)
        ));
        // Without the secret store's key it stays locked, saying why.
        let lost = Vault::new(store, Box::new(MemoryKeyring::default()));
        assert_eq!(lost.status().unwrap().state, VaultState::Locked);
        assert!(matches!(
            lost.secrets(saved.id),
            Err(VaultError::Keyring(_))
        ));
    }

    #[test]
    fn a_sealed_blob_moved_to_another_credential_does_not_open() {
        let store = Store::open_in_memory().unwrap();
        let vault = no_keyring(&store);
        vault.unlock("tr0ub4dor&3").unwrap();
        let a = vault.add(alice()).unwrap();
        let mut bob = alice();
        bob.username = "bob".into();
        bob.password = Zeroizing::new("other".into());
        let b = vault.add(bob).unwrap();
        let sealed_a = store.vault_get(a.id).unwrap().unwrap().sealed;
        store
            .vault_put(&NewSealed {
                origin: "https://shop.example",
                username: "bob",
                sealed: &sealed_a,
                has_totp: true,
                same_site: false,
                allow_http: false,
            })
            .unwrap();
        assert!(matches!(vault.secrets(b.id), Err(VaultError::Damaged(_))));
    }

    #[test]
    fn csv_imports_add_update_and_skip_with_reasons() {
        let store = Store::open_in_memory().unwrap();
        let vault = no_keyring(&store);
        vault.unlock("tr0ub4dor&3").unwrap();
        vault.add(alice()).unwrap();
        let csv = "name,url,username,password,note\n\
            shop,https://shop.example/,alice,new password,\n\
            bank,https://bank.example/,bob,hunter2,\n\
            nouser,https://x.example/,,pw,\n";
        let report = vault.import_csv(csv).unwrap();
        assert_eq!((report.added, report.updated), (1, 1));
        assert_eq!(report.skipped, ["line 4 (https://x.example): no username"]);
        assert_eq!(vault.list().unwrap().len(), 2);
    }
}
