//! The user's settings, one row per field (`key`, JSON `value`).
//!
//! A row per field rather than one JSON document: a host that does not know a field leaves
//! its row alone, and a value this host cannot read costs only that field (its default is
//! used, and the log says so), never the whole settings page.

use itinero_shared::records::Settings;
use reqwest::Url;
use rusqlite::params;
use serde_json::Value;

use super::error::{Doing, Result, StoreError};
use super::{now_ms, Store};

impl Store {
    /// The settings, with defaults for whatever was never set or cannot be read.
    pub fn settings(&self) -> Result<Settings> {
        let doing = || "reading the settings".to_owned();
        let rows: Vec<(String, String)> = {
            let conn = self.conn();
            let mut stmt = conn
                .prepare_cached("SELECT key, value FROM settings")
                .doing(doing)?;
            let rows = stmt
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                .and_then(|rows| rows.collect())
                .doing(doing)?;
            rows
        };
        let Value::Object(mut fields) =
            serde_json::to_value(Settings::default()).expect("settings serialise")
        else {
            unreachable!("settings are a JSON object");
        };
        for (key, text) in rows {
            if !fields.contains_key(&key) {
                continue; // a newer host's setting
            }
            let Ok(value) = serde_json::from_str::<Value>(&text) else {
                tracing::warn!(key, "unreadable stored setting; using its default");
                continue;
            };
            let before = fields.insert(key.clone(), value);
            if serde_json::from_value::<Settings>(Value::Object(fields.clone())).is_err() {
                tracing::warn!(
                    key,
                    value = text,
                    "stored setting not understood; using its default"
                );
                if let Some(before) = before {
                    fields.insert(key, before);
                }
            }
        }
        serde_json::from_value(Value::Object(fields)).map_err(|source| StoreError::Corrupt {
            what: "settings".into(),
            source,
        })
    }

    /// Checks and stores `settings` (every field, in one transaction) and returns them as
    /// stored: blank names become `None`.
    pub fn set_settings(&self, settings: &Settings) -> Result<Settings> {
        let settings = checked(settings)?;
        let doing = || "saving the settings".to_owned();
        let Value::Object(fields): Value =
            serde_json::to_value(&settings).expect("settings serialise")
        else {
            unreachable!("settings are a JSON object");
        };
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .doing(doing)?;
        let now = now_ms();
        for (key, value) in &fields {
            tx.execute(
                "INSERT INTO settings (key, value, updated_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
                params![key, value.to_string(), now],
            )
            .doing(doing)?;
        }
        tx.commit().doing(doing)?;
        Ok(settings)
    }
}

/// The settings made tidy, or why they cannot be kept.
fn checked(settings: &Settings) -> Result<Settings> {
    let blank_is_none = |s: &Option<String>| {
        s.as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let out = Settings {
        model: blank_is_none(&settings.model),
        openai_url: blank_is_none(&settings.openai_url),
        ..settings.clone()
    };
    if !(1..=Settings::MAX_MAX_STEPS).contains(&out.max_steps) {
        return Err(StoreError::Invalid(format!(
            "the step limit must be between 1 and {}, not {}",
            Settings::MAX_MAX_STEPS,
            out.max_steps
        )));
    }
    if !(2..=9).contains(&out.vote_samples) {
        return Err(StoreError::Invalid(format!(
            "voting takes between 2 and 9 voters, not {}",
            out.vote_samples
        )));
    }
    if let Some(url) = &out.openai_url {
        let parsed = Url::parse(url).map_err(|e| {
            StoreError::Invalid(format!(
                "the OpenAI-compatible server's address {url:?} is not a URL ({e}); \
                 e.g. http://127.0.0.1:8080/v1"
            ))
        })?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(StoreError::Invalid(format!(
                "the OpenAI-compatible server's address {url:?} must start with http:// or https://"
            )));
        }
        // Secrets never go into the store.
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(StoreError::Invalid(
                "the OpenAI-compatible server's address must not contain a user name or \
                 password; the API key is set apart from the address"
                    .into(),
            ));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use itinero_shared::messages::{PlanMode, VoteMode};
    use itinero_shared::records::{ApprovalPolicy, BackendChoice, EngineDevice};

    fn custom() -> Settings {
        Settings {
            backend: BackendChoice::OpenAi,
            model: Some("llama3.2:3b".into()),
            openai_url: Some("http://127.0.0.1:8080/v1".into()),
            device: EngineDevice::Cpu,
            max_steps: 12,
            approval: ApprovalPolicy::AlwaysAskRisky,
            plan: PlanMode::Always,
            vote: VoteMode::Unsure,
            vote_samples: 5,
            vote_models: vec!["gemma3:4b".into()],
            sign_in_names_user: true,
            keep_pictures: false,
        }
    }

    #[test]
    fn defaults_until_set_then_what_was_set() {
        let store = Store::open_in_memory().unwrap();
        assert_eq!(store.settings().unwrap(), Settings::default());
        assert_eq!(store.set_settings(&custom()).unwrap(), custom());
        assert_eq!(store.settings().unwrap(), custom());
        let back = Settings {
            model: None,
            ..custom()
        };
        store.set_settings(&back).unwrap();
        assert_eq!(store.settings().unwrap(), back);
    }

    #[test]
    fn blank_names_are_none_and_bad_values_are_refused_with_the_old_ones_kept() {
        let store = Store::open_in_memory().unwrap();
        store.set_settings(&custom()).unwrap();
        let tidy = store
            .set_settings(&Settings {
                model: Some("  ".into()),
                openai_url: Some(" http://127.0.0.1:8080/v1 ".into()),
                ..custom()
            })
            .unwrap();
        assert_eq!(tidy.model, None);
        assert_eq!(tidy.openai_url.as_deref(), Some("http://127.0.0.1:8080/v1"));
        for (bad, says) in [
            (
                Settings {
                    max_steps: 0,
                    ..custom()
                },
                "between 1 and 200, not 0",
            ),
            (
                Settings {
                    max_steps: 10_000,
                    ..custom()
                },
                "not 10000",
            ),
            (
                Settings {
                    openai_url: Some("localhost:8080".into()),
                    ..custom()
                },
                "must start with http",
            ),
            (
                Settings {
                    openai_url: Some("https://me:sk-secret@api.example/v1".into()),
                    ..custom()
                },
                "must not contain a user name or password",
            ),
        ] {
            let err = store.set_settings(&bad).unwrap_err();
            assert!(err.to_string().contains(says), "{err}");
        }
        assert_eq!(store.settings().unwrap(), tidy);
    }

    #[test]
    fn unknown_keys_are_ignored_and_unreadable_values_fall_back_alone() {
        let store = Store::open_in_memory().unwrap();
        store.set_settings(&custom()).unwrap();
        {
            let conn = store.conn();
            conn.execute("INSERT INTO settings VALUES ('theme', '\"dark\"', 0)", [])
                .unwrap();
            conn.execute(
                "UPDATE settings SET value = '\"turbo\"' WHERE key = 'backend'",
                [],
            )
            .unwrap();
            conn.execute(
                "UPDATE settings SET value = '-3' WHERE key = 'max_steps'",
                [],
            )
            .unwrap();
        }
        let s = store.settings().unwrap();
        assert_eq!(
            s,
            Settings {
                backend: BackendChoice::Auto,
                max_steps: 30,
                ..custom()
            }
        );
        // Saving keeps the other host's key.
        store.set_settings(&s).unwrap();
        let theme: String = store
            .conn()
            .query_row("SELECT value FROM settings WHERE key = 'theme'", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(theme, "\"dark\"");
    }
}
