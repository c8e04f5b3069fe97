//! Per-site sign-in overrides, for sites the generic form finder gets wrong: `sites.toml` in
//! the data directory says, for an origin, which fields are which, where the sign-in page is,
//! and how to tell that the sign-in worked. Fields are named the way the observation sees
//! them (id, name attribute, autocomplete, or words of the label), not by CSS, so an override
//! is checked against exactly what the host sees and the page's own field check still applies.
//!
//! ```toml
//! [[site]]
//! origin = "https://members.example"
//! login_url = "https://members.example/enter"
//! username = { id = "member" }
//! password = { name = "pin" }
//! submit = { label = "Enter" }
//! success = { text = "Welcome, member" }
//! ```

use std::path::Path;

use itinero_shared::observation::{DomNode, Observation};
use serde::Deserialize;

use super::login_form::{self, LoginForm, LoginStep};

/// The file's name in the data directory.
pub const FILE_NAME: &str = "sites.toml";

/// Which field of the page: every given part must match.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Field {
    pub id: Option<String>,
    pub name: Option<String>,
    pub autocomplete: Option<String>,
    /// Words of the field's label (its accessible name), any case.
    pub label: Option<String>,
}

/// How to tell the sign-in worked: every given part must hold on the page after it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Success {
    /// The URL after signing in contains this.
    pub url_contains: Option<String>,
    /// The page shows this text.
    pub text: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SiteOverride {
    /// The exact origin it applies to.
    pub origin: String,
    /// The page with the sign-in form: the model is told to open it when it needs to sign in.
    pub login_url: Option<String>,
    pub username: Option<Field>,
    pub password: Option<Field>,
    pub totp: Option<Field>,
    pub submit: Option<Field>,
    pub success: Option<Success>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Overrides {
    #[serde(default, rename = "site")]
    pub sites: Vec<SiteOverride>,
}

#[derive(Debug, thiserror::Error)]
pub enum OverridesError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path} is not valid: {message}")]
    Invalid { path: String, message: String },
}

fn attribute<'a>(node: &'a DomNode, key: &str) -> Option<&'a str> {
    node.attributes
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

impl Field {
    fn matches(&self, node: &DomNode) -> bool {
        let same = |want: &Option<String>, key: &str| {
            want.as_deref()
                .is_none_or(|w| attribute(node, key) == Some(w))
        };
        let label = self.label.as_deref().is_none_or(|w| {
            node.name
                .as_deref()
                .is_some_and(|n| n.to_lowercase().contains(&w.to_lowercase()))
        });
        let anything = self.id.is_some()
            || self.name.is_some()
            || self.autocomplete.is_some()
            || self.label.is_some();
        anything
            && same(&self.id, "id")
            && same(&self.name, "name")
            && same(&self.autocomplete, "autocomplete")
            && label
    }
}

impl Overrides {
    /// `sites.toml` at `path`; none at all when the file does not exist.
    pub fn load(path: &Path) -> Result<Self, OverridesError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(source) => {
                return Err(OverridesError::Read {
                    path: path.display().to_string(),
                    source,
                })
            }
        };
        Self::parse(&text).map_err(|message| OverridesError::Invalid {
            path: path.display().to_string(),
            message,
        })
    }

    pub fn parse(text: &str) -> Result<Self, String> {
        let parsed: Self = toml::from_str(text).map_err(|e| e.to_string())?;
        for site in &parsed.sites {
            let exact = crate::store::origin_of(&site.origin);
            if exact.as_deref() != Some(site.origin.trim_end_matches('/')) {
                return Err(format!(
                    "{:?} is not an origin (scheme, host and port, e.g. https://shop.example)",
                    site.origin
                ));
            }
        }
        Ok(parsed)
    }

    pub fn for_origin(&self, origin: &str) -> Option<&SiteOverride> {
        self.sites
            .iter()
            .find(|s| s.origin.trim_end_matches('/') == origin)
    }
}

impl SiteOverride {
    /// The sign-in form as the override describes it, if its fields are on the page (visible,
    /// enabled, in one frame).
    pub fn form(&self, obs: &Observation) -> Option<LoginForm> {
        let nodes = obs.indexed();
        let find = |field: &Option<Field>| {
            let field = field.as_ref()?;
            nodes
                .iter()
                .find(|n| login_form::visible(n, obs) && field.matches(n))
                .copied()
        };
        let username = find(&self.username);
        let (step, anchor) = if let Some(password) = find(&self.password) {
            let step = LoginStep::Password {
                username: username.and_then(|u| u.index),
                password: password.index?,
            };
            (step, password)
        } else if let Some(code) = find(&self.totp) {
            (LoginStep::Totp { code: code.index? }, code)
        } else {
            let u = username?;
            (LoginStep::Username { username: u.index? }, u)
        };
        let frame_id = anchor.frame_id.unwrap_or(0);
        if username.is_some_and(|u| u.frame_id.unwrap_or(0) != frame_id) {
            return None;
        }
        let submit = find(&self.submit)
            .filter(|b| b.frame_id.unwrap_or(0) == frame_id)
            .and_then(|b| b.index);
        Some(LoginForm {
            step,
            submit,
            frame_id,
        })
    }

    /// Whether the page after a sign-in shows it worked; `None` without a success check.
    pub fn signed_in(&self, obs: &Observation) -> Option<bool> {
        let s = self.success.as_ref()?;
        let url = s
            .url_contains
            .as_deref()
            .is_none_or(|u| obs.url.contains(u));
        let text = s.text.as_deref().is_none_or(|t| obs.text.contains(t));
        Some(url && text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::test_support::{element, page_of};

    const MEMBERS: &str = r#"
        [[site]]
        origin = "https://members.example"
        login_url = "https://members.example/enter"
        username = { id = "member" }
        password = { name = "pin" }
        submit = { label = "enter" }
        success = { text = "Welcome, member" }
    "#;

    fn sized(mut n: DomNode, attrs: &[(&str, &str)]) -> DomNode {
        n.rect.width = 100.0;
        n.rect.height = 20.0;
        n.attributes = attrs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        n
    }

    #[test]
    fn an_override_names_the_fields_the_generic_finder_gets_wrong() {
        let overrides = Overrides::parse(MEMBERS).unwrap();
        let site = overrides.for_origin("https://members.example").unwrap();
        let page = page_of(
            "https://members.example/enter",
            "Members area",
            vec![
                sized(
                    element(0, "input", Some("text"), None, "Member number"),
                    &[("id", "member")],
                ),
                sized(
                    element(1, "input", Some("text"), None, "Promo code"),
                    &[("id", "promo")],
                ),
                sized(
                    element(2, "input", Some("password"), None, "PIN"),
                    &[("name", "pin")],
                ),
                sized(element(3, "button", None, None, "Enter"), &[]),
            ],
        );
        // The generic finder takes the promo code for the username.
        assert_eq!(
            login_form::detect(&page).unwrap().step,
            LoginStep::Password {
                username: Some(1),
                password: 2
            }
        );
        let form = site.form(&page).unwrap();
        assert_eq!(
            form.step,
            LoginStep::Password {
                username: Some(0),
                password: 2
            }
        );
        assert_eq!(form.submit, Some(3));
        let mut after = page_of("https://members.example/home", "Members", vec![]);
        assert_eq!(site.signed_in(&after), Some(false));
        after.text = "Welcome, member 42".into();
        assert_eq!(site.signed_in(&after), Some(true));
        assert_eq!(overrides.for_origin("http://members.example"), None);
    }

    #[test]
    fn a_bad_file_says_what_is_wrong() {
        let typo = Overrides::parse(
            "[[site]]\norigin = \"https://a.example\"\nusername = { idd = \"x\" }\n",
        );
        assert!(typo.unwrap_err().contains("unknown field `idd`"));
        let not_origin = Overrides::parse("[[site]]\norigin = \"https://a.example/login\"\n");
        assert!(not_origin.unwrap_err().contains("is not an origin"));
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            Overrides::load(&dir.path().join(FILE_NAME)).unwrap(),
            Overrides::default()
        );
    }
}
