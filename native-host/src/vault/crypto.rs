//! Sealing secrets: XChaCha20-Poly1305 (random 192-bit nonces need no counter kept anywhere)
//! with associated data that binds each sealed blob to its row, so a blob copied onto another
//! credential does not open; and Argon2id for keys derived from a passphrase.
//!
//! A sealed blob is `format byte ‖ nonce ‖ ciphertext`; the format byte lets a later scheme be
//! told apart. The associated data is the credential's origin and username (`vault::context`).
//! Argon2id's costs (OWASP's 19 MiB, 2 passes by default) are stored with the vault, so new
//! vaults can get higher ones without breaking old ones. Keys and plaintexts are wiped from
//! memory when dropped.

use argon2::{Algorithm, Argon2, Params, Version};
use chacha20poly1305::aead::{Aead, AeadCore, KeyInit, OsRng, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use zeroize::Zeroizing;

/// The first byte of every sealed blob: the format, so a later one can be told apart.
const FORMAT: u8 = 1;
const NONCE_LEN: usize = 24;
pub const KEY_LEN: usize = 32;
pub const SALT_LEN: usize = 16;

/// A vault key; wiped from memory when dropped.
#[derive(Clone)]
pub struct Key(Zeroizing<[u8; KEY_LEN]>);

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Key(…)")
    }
}

impl Key {
    pub fn random() -> Self {
        let key = XChaCha20Poly1305::generate_key(&mut OsRng);
        let mut bytes = Zeroizing::new([0u8; KEY_LEN]);
        bytes.copy_from_slice(&key);
        Key(bytes)
    }

    pub fn from_bytes(bytes: &[u8]) -> Option<Self> {
        let mut key = Zeroizing::new([0u8; KEY_LEN]);
        (bytes.len() == KEY_LEN).then(|| {
            key.copy_from_slice(bytes);
            Key(key)
        })
    }

    pub fn bytes(&self) -> &[u8] {
        &self.0[..]
    }
}

/// Argon2id's costs, kept with the vault so they can be raised for new vaults later.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KdfParams {
    pub m_kib: u32,
    pub t: u32,
    pub p: u32,
}

impl KdfParams {
    /// Cheap costs for tests and fuzzing, which check the plumbing, not Argon2's strength.
    #[cfg(any(test, fuzzing))]
    pub const FAST: KdfParams = KdfParams {
        m_kib: 64,
        t: 1,
        p: 1,
    };
}

impl Default for KdfParams {
    /// OWASP's recommendation for Argon2id: 19 MiB, 2 passes, 1 lane.
    #[cfg(not(fuzzing))]
    fn default() -> Self {
        Self {
            m_kib: 19 * 1024,
            t: 2,
            p: 1,
        }
    }

    /// In a fuzzing build (`cargo fuzz` sets `cfg(fuzzing)`) a new vault derives cheaply: the
    /// fuzzer looks for the vault's mistakes, and a strong derivation would take most of its time.
    #[cfg(fuzzing)]
    fn default() -> Self {
        Self::FAST
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CryptoError {
    #[error("the sealed data is damaged or was sealed with another key")]
    Open,
    #[error("the key derivation failed: {0}")]
    Kdf(String),
}

pub fn random_salt() -> [u8; SALT_LEN] {
    let mut salt = [0u8; SALT_LEN];
    // A nonce is random bytes from the OS generator; its first 16 serve as a salt.
    let nonce = XChaCha20Poly1305::generate_nonce(&mut OsRng);
    salt.copy_from_slice(&nonce[..SALT_LEN]);
    salt
}

/// The key for `passphrase` with `salt` and `params`.
pub fn derive(passphrase: &str, salt: &[u8], params: KdfParams) -> Result<Key, CryptoError> {
    let params = Params::new(params.m_kib, params.t, params.p, Some(KEY_LEN))
        .map_err(|e| CryptoError::Kdf(e.to_string()))?;
    let mut key = Zeroizing::new([0u8; KEY_LEN]);
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
        .hash_password_into(passphrase.as_bytes(), salt, &mut key[..])
        .map_err(|e| CryptoError::Kdf(e.to_string()))?;
    Ok(Key(key))
}

/// `plain` sealed with `key`, bound to `context` (which must be given again to open it).
pub fn seal(key: &Key, plain: &[u8], context: &[u8]) -> Vec<u8> {
    let cipher = XChaCha20Poly1305::new(key.bytes().into());
    let nonce = XChaCha20Poly1305::generate_nonce(&mut OsRng);
    let sealed = cipher
        .encrypt(
            &nonce,
            Payload {
                msg: plain,
                aad: context,
            },
        )
        .expect("sealing in memory cannot fail");
    let mut out = Vec::with_capacity(1 + NONCE_LEN + sealed.len());
    out.push(FORMAT);
    out.extend_from_slice(&nonce);
    out.extend_from_slice(&sealed);
    out
}

pub fn open(key: &Key, blob: &[u8], context: &[u8]) -> Result<Zeroizing<Vec<u8>>, CryptoError> {
    if blob.len() < 1 + NONCE_LEN || blob[0] != FORMAT {
        return Err(CryptoError::Open);
    }
    let (nonce, sealed) = blob[1..].split_at(NONCE_LEN);
    let cipher = XChaCha20Poly1305::new(key.bytes().into());
    cipher
        .decrypt(
            XNonce::from_slice(nonce),
            Payload {
                msg: sealed,
                aad: context,
            },
        )
        .map(Zeroizing::new)
        .map_err(|_| CryptoError::Open)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FAST: KdfParams = KdfParams::FAST;

    #[test]
    fn sealed_data_opens_only_with_its_key_and_context() {
        let key = Key::random();
        let blob = seal(&key, b"correct horse", b"https://shop.example\0alice");
        assert!(!blob.windows(13).any(|w| w == b"correct horse"));
        assert_eq!(
            &open(&key, &blob, b"https://shop.example\0alice").unwrap()[..],
            b"correct horse"
        );
        assert!(open(&key, &blob, b"https://shop.example\0mallory").is_err());
        assert!(open(&Key::random(), &blob, b"https://shop.example\0alice").is_err());
        let mut flipped = blob.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert!(open(&key, &flipped, b"https://shop.example\0alice").is_err());
        // Two seals of the same text differ (fresh nonces).
        assert_ne!(
            blob,
            seal(&key, b"correct horse", b"https://shop.example\0alice")
        );
    }

    #[test]
    fn a_passphrase_derives_the_same_key_with_the_same_salt_only() {
        let salt = random_salt();
        let a = derive("tr0ub4dor&3", &salt, FAST).unwrap();
        let b = derive("tr0ub4dor&3", &salt, FAST).unwrap();
        assert_eq!(a.bytes(), b.bytes());
        assert_ne!(
            derive("tr0ub4dor&4", &salt, FAST).unwrap().bytes(),
            a.bytes()
        );
        assert_ne!(
            derive("tr0ub4dor&3", &random_salt(), FAST).unwrap().bytes(),
            a.bytes()
        );
    }
}
