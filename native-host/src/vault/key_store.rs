//! Where a vault key can be kept outside the store: the OS secret store (macOS Keychain,
//! Windows Credential Manager, the Secret Service on Linux and BSD), through the `keyring`
//! crate. Headless machines (CI, servers) usually have none: then the vault's key comes from a
//! passphrase instead, and `ITINERO_VAULT_KEYRING=off` chooses that on purpose.

use super::crypto::Key;

/// Somewhere to keep the vault key.
pub trait KeyStore: Send + Sync {
    /// The key kept here, `Ok(None)` if none is.
    fn get(&self) -> Result<Option<Key>, String>;
    fn set(&self, key: &Key) -> Result<(), String>;
    /// Why this store cannot be used, if it cannot (checked before the vault is created).
    fn unavailable(&self) -> Option<String>;
}

/// The OS secret store, in builds with the `keyring` feature (the default): a host without it
/// does without zbus and the platforms' stores, and keeps its vault key by passphrase only.
#[cfg(feature = "keyring")]
mod os {
    use base64::Engine as _;
    use zeroize::Zeroizing;

    use super::{Key, KeyStore};

    /// The service name the key is kept under.
    const SERVICE: &str = "itinero";

    /// The OS secret store, one entry per data directory (several profiles, several vaults).
    pub struct OsKeyring {
        account: String,
    }

    impl OsKeyring {
        pub fn for_data_dir(data_dir: &std::path::Path) -> Self {
            Self {
                account: format!("vault key {}", data_dir.display()),
            }
        }

        fn entry(&self) -> Result<keyring::Entry, String> {
            keyring::Entry::new(SERVICE, &self.account).map_err(|e| e.to_string())
        }
    }

    impl KeyStore for OsKeyring {
        fn get(&self) -> Result<Option<Key>, String> {
            match self.entry()?.get_password() {
                Ok(text) => {
                    let text = Zeroizing::new(text);
                    let bytes = Zeroizing::new(
                        base64::engine::general_purpose::STANDARD
                            .decode(text.as_bytes())
                            .map_err(|e| {
                                format!("the key in the OS secret store is unreadable: {e}")
                            })?,
                    );
                    Key::from_bytes(&bytes)
                        .map(Some)
                        .ok_or_else(|| "the key in the OS secret store has the wrong length".into())
                }
                Err(keyring::Error::NoEntry) => Ok(None),
                Err(e) => Err(e.to_string()),
            }
        }

        fn set(&self, key: &Key) -> Result<(), String> {
            let text =
                Zeroizing::new(base64::engine::general_purpose::STANDARD.encode(key.bytes()));
            self.entry()?.set_password(&text).map_err(|e| e.to_string())
        }

        fn unavailable(&self) -> Option<String> {
            // Reading a missing entry succeeds (as "none") only where a store answers.
            match self.entry().and_then(|e| match e.get_password() {
                Ok(_) | Err(keyring::Error::NoEntry) => Ok(()),
                Err(e) => Err(e.to_string()),
            }) {
                Ok(()) => None,
                Err(why) => Some(format!("no OS secret store ({why})")),
            }
        }
    }
}

/// No secret store: the vault uses a passphrase.
pub struct NoKeyring(pub String);

impl KeyStore for NoKeyring {
    fn get(&self) -> Result<Option<Key>, String> {
        Err(self.0.clone())
    }
    fn set(&self, _: &Key) -> Result<(), String> {
        Err(self.0.clone())
    }
    fn unavailable(&self) -> Option<String> {
        Some(self.0.clone())
    }
}

/// The key store for the data directory: the OS one, unless `ITINERO_VAULT_KEYRING=off`.
#[cfg(feature = "keyring")]
pub fn for_data_dir(data_dir: &std::path::Path) -> Box<dyn KeyStore> {
    match std::env::var("ITINERO_VAULT_KEYRING").as_deref() {
        Ok("off") | Ok("0") | Ok("no") => Box::new(NoKeyring(
            "the OS secret store is turned off (ITINERO_VAULT_KEYRING=off)".into(),
        )),
        _ => Box::new(os::OsKeyring::for_data_dir(data_dir)),
    }
}

/// A host built without the OS secret store keeps the key by passphrase.
#[cfg(not(feature = "keyring"))]
pub fn for_data_dir(_: &std::path::Path) -> Box<dyn KeyStore> {
    Box::new(NoKeyring(
        "this host was built without the OS secret store (cargo feature `keyring`)".into(),
    ))
}

/// A key store in memory, for tests of the keyring path.
#[cfg(test)]
#[derive(Default)]
pub struct MemoryKeyring(pub std::sync::Mutex<Option<Key>>);

#[cfg(test)]
impl KeyStore for MemoryKeyring {
    fn get(&self) -> Result<Option<Key>, String> {
        Ok(self.0.lock().unwrap().clone())
    }
    fn set(&self, key: &Key) -> Result<(), String> {
        *self.0.lock().unwrap() = Some(key.clone());
        Ok(())
    }
    fn unavailable(&self) -> Option<String> {
        None
    }
}
