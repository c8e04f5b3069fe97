//! The vault as the panel sees it: credentials without their secrets, the vault's state, and
//! the audit list. A password crosses the boundary only browser→host (when the user saves one)
//! and host→browser only when the user asked to see it and confirmed.

use serde::{Deserialize, Serialize};

/// A credential's id in the vault.
pub type CredentialId = i64;

/// Whether the vault can be used now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VaultState {
    /// Nothing saved yet; the first `Unlock` (or the OS secret store) creates it.
    NotCreated,
    /// Its key is not in the host's memory: the user's passphrase is needed.
    Locked,
    Unlocked,
}

/// Which of a sign-in's values a field takes; also the `{{secret:…}}` placeholder's word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SecretKind {
    Username,
    Password,
    /// The current TOTP code (the seed itself never leaves the host).
    Totp,
}

impl SecretKind {
    pub fn word(self) -> &'static str {
        match self {
            Self::Username => "username",
            Self::Password => "password",
            Self::Totp => "totp",
        }
    }

    /// Whether an `<input type=…>` (lower case; empty for none) takes this value. The host
    /// checks it on the observation, the content script again on the element as it types.
    pub fn fits_input_type(self, input_type: &str) -> bool {
        match self {
            Self::Password => input_type == "password",
            Self::Username => matches!(input_type, "text" | "email" | "tel" | ""),
            Self::Totp => matches!(input_type, "text" | "number" | "tel" | ""),
        }
    }

    /// The `{{secret:…}}` placeholder a model writes for this value.
    pub fn placeholder(self) -> String {
        format!("{{{{secret:{}}}}}", self.word())
    }

    /// The kind a placeholder names, when `text` is exactly one placeholder.
    pub fn from_placeholder(text: &str) -> Option<Self> {
        let word = text.trim().strip_prefix("{{secret:")?.strip_suffix("}}")?;
        [Self::Username, Self::Password, Self::Totp]
            .into_iter()
            .find(|k| k.word() == word.trim())
    }
}

/// Whether `text` mentions a secret placeholder anywhere (then it must be exactly one).
pub fn mentions_secret(text: &str) -> bool {
    text.contains("{{secret:")
}

/// Where the vault key comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeySource {
    /// A random key in the OS secret store (Keychain, Credential Manager, Secret Service).
    Keyring,
    /// Derived (Argon2id) from a passphrase the user gives once per host start.
    Passphrase,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VaultStatus {
    pub state: VaultState,
    /// `None` until the vault is created.
    #[serde(default)]
    pub source: Option<KeySource>,
    /// Why the OS secret store cannot be used here, when it cannot (then a passphrase is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyring_unavailable: Option<String>,
    /// The origins of the OpenAI-compatible servers whose API key the vault keeps (known while
    /// locked too: the origin is not sealed, the key is).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub api_key_servers: Vec<String>,
}

/// A saved credential as listed: never its password or TOTP seed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CredentialSummary {
    pub id: CredentialId,
    /// `scheme://host[:port]`: filled only there (see `same_site`, `allow_http`).
    pub origin: String,
    pub username: String,
    pub has_totp: bool,
    /// Also on other origins of the same registrable domain (`login.shop.example` for
    /// `shop.example`), by the public suffix list.
    #[serde(default)]
    pub same_site: bool,
    /// Also on `http://` when the saved origin is `https://`.
    #[serde(default)]
    pub allow_http: bool,
    /// Unix milliseconds.
    pub updated_at: i64,
}

impl CredentialSummary {
    /// What sets it apart, in words: `TOTP`, `whole site`, `http allowed`.
    pub fn flags(&self) -> Vec<&'static str> {
        [
            (self.has_totp, "TOTP"),
            (self.same_site, "whole site"),
            (self.allow_http, "http allowed"),
        ]
        .into_iter()
        .filter_map(|(on, word)| on.then_some(word))
        .collect()
    }
}

/// One line of the audit list: a fill, or a refusal and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditEntry {
    /// Unix milliseconds.
    pub at: i64,
    pub origin: String,
    #[serde(default)]
    pub username: String,
    #[serde(default)]
    pub page_url: String,
    /// `filled`, `refused`, `signed in`, `failed`, `added`, `removed`, `revealed`; for a model
    /// server's API key (the server in `origin`), `API key saved`, `API key removed`, `API key
    /// used`.
    pub what: String,
    #[serde(default)]
    pub detail: String,
}

/// What an import kept and skipped.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ImportReport {
    /// `bitwarden`, `keepassxc`, `chrome`, or `csv` when only the columns told.
    pub format: String,
    pub added: u32,
    pub updated: u32,
    /// One line per row left out, with its number and why (never its password).
    #[serde(default)]
    pub skipped: Vec<String>,
}

/// An http(s) address as each side's own URL parser reads it: its origin, its scheme without
/// the colon, and its host in lower case.
#[derive(Debug, Clone, Copy)]
pub struct AddressParts<'a> {
    pub origin: &'a str,
    pub scheme: &'a str,
    pub host: &'a str,
}

/// Whether a form on a page of `page` may send a secret to `to`: the same origin or host, or a
/// host of `site` (the page's registrable domain, by the public suffix list, which only the host
/// process has; none for an IP address), and never from https to anything else. The one rule
/// for the host's auto-login and the content script's typing of a secret.
pub fn may_send_secret(page: AddressParts<'_>, site: Option<&str>, to: AddressParts<'_>) -> bool {
    if to.origin == page.origin {
        return true;
    }
    let web = |scheme: &str| scheme == "https" || scheme == "http";
    if !web(to.scheme) || page.scheme == "https" && to.scheme != "https" {
        return false;
    }
    to.host == page.host
        || site.is_some_and(|site| {
            to.host == site
                || to
                    .host
                    .strip_suffix(site)
                    .is_some_and(|sub| sub.ends_with('.'))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at<'a>(origin: &'a str, scheme: &'a str, host: &'a str) -> AddressParts<'a> {
        AddressParts {
            origin,
            scheme,
            host,
        }
    }

    #[test]
    fn a_secret_goes_within_its_site_and_never_down_from_https() {
        let page = at("https://www.shop.example", "https", "www.shop.example");
        let site = Some("shop.example");
        let to = |origin: &'static str| {
            let (scheme, rest) = origin.split_once("://").unwrap();
            let host = rest.split(':').next().unwrap();
            at(origin, scheme, host)
        };
        assert!(may_send_secret(page, site, page));
        assert!(may_send_secret(
            page,
            site,
            to("https://login.shop.example")
        ));
        assert!(may_send_secret(page, site, to("https://shop.example")));
        assert!(may_send_secret(
            page,
            site,
            to("https://www.shop.example:8443")
        ));
        assert!(!may_send_secret(
            page,
            site,
            to("http://login.shop.example")
        ));
        assert!(!may_send_secret(page, site, to("https://evil.test")));
        assert!(!may_send_secret(
            page,
            site,
            to("https://shop.example.evil.test")
        ));
        assert!(!may_send_secret(page, site, to("https://evilshop.example")));
        assert!(!may_send_secret(
            page,
            site,
            at("javascript:", "javascript", "")
        ));
        // No site (an IP address): its own host only.
        let ip = at("http://127.0.0.1:8080", "http", "127.0.0.1");
        assert!(may_send_secret(ip, None, to("http://127.0.0.1:9090")));
        assert!(!may_send_secret(ip, None, to("http://127.1.0.1:8080")));
        // An http page may send to https.
        let plain = at("http://shop.example", "http", "shop.example");
        assert!(may_send_secret(
            plain,
            site,
            to("https://login.shop.example")
        ));
    }

    #[test]
    fn placeholders_name_their_kind_and_nothing_else() {
        for kind in [SecretKind::Username, SecretKind::Password, SecretKind::Totp] {
            assert_eq!(
                SecretKind::from_placeholder(&kind.placeholder()),
                Some(kind)
            );
        }
        assert_eq!(
            SecretKind::from_placeholder(" {{secret: password }} "),
            Some(SecretKind::Password)
        );
        assert_eq!(SecretKind::from_placeholder("{{secret:seed}}"), None);
        assert_eq!(SecretKind::from_placeholder("my {{secret:password}}"), None);
        assert!(mentions_secret("my {{secret:password}}"));
        assert!(!mentions_secret("password"));
    }
}
