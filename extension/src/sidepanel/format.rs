//! Words and numbers for the history and settings pages: no DOM, so they are tested natively.

use itinero_shared::records::{ApprovalPolicy, BackendChoice, StepsBy, UsagePeriod};
use itinero_shared::vault::{VaultState, VaultStatus};
pub use itinero_shared::words::{duration, status_label, steps, strategy, timings};

/// How long ago `then` was, both Unix milliseconds; `None` past a day (show the date instead).
pub fn ago(now_ms: i64, then_ms: i64) -> Option<String> {
    let secs = (now_ms - then_ms).max(0) / 1000;
    Some(match secs {
        0..45 => "just now".into(),
        45..3600 => format!("{} min ago", ((secs + 30) / 60).max(1)),
        3600..86_400 => format!("{} h ago", secs / 3600),
        _ => return None,
    })
}

/// The value of the approval policy's `<option>`, as the wire names it.
pub fn approval_value(policy: ApprovalPolicy) -> &'static str {
    match policy {
        ApprovalPolicy::AskRisky => "ask_risky",
        ApprovalPolicy::AlwaysAskRisky => "always_ask_risky",
        ApprovalPolicy::AskEveryAction => "ask_every_action",
    }
}

pub fn approval_from(value: &str) -> Option<ApprovalPolicy> {
    serde_json::from_value(serde_json::Value::String(value.into())).ok()
}

/// The approval policy in plain words, under its select.
pub fn approval_help(policy: ApprovalPolicy) -> &'static str {
    match policy {
        ApprovalPolicy::AskRisky => {
            "itinero asks before risky actions (buying, paying, deleting, sending, password \
             and payment fields), except on sites where you chose “Always allow” for that \
             kind of action."
        }
        ApprovalPolicy::AlwaysAskRisky => {
            "itinero asks before every risky action, even where you chose “Always allow” \
             before; “Always allow” is not offered."
        }
        ApprovalPolicy::AskEveryAction => {
            "Supervised: itinero asks before every action it takes in the page."
        }
    }
}

/// The value of the backend's `<option>`, as the wire names it.
pub fn backend_value(backend: BackendChoice) -> &'static str {
    match backend {
        BackendChoice::Auto => "auto",
        BackendChoice::Ollama => "ollama",
        BackendChoice::OpenAi => "openai",
        BackendChoice::Wgpu => "wgpu",
    }
}

pub fn backend_from(value: &str) -> Option<BackendChoice> {
    serde_json::from_value(serde_json::Value::String(value.into())).ok()
}

/// The step limit as typed: a whole number (its range is the host's to check), or why not.
pub fn max_steps(text: &str) -> Result<u32, String> {
    let text = text.trim();
    text.parse::<u32>().map_err(|_| {
        if text.is_empty() {
            "Type a step limit (a whole number from 1 to 200).".to_owned()
        } else {
            format!("The step limit must be a whole number from 1 to 200, not “{text}”.")
        }
    })
}

/// A message from the host as a sentence of the page: its first letter in capitals.
pub fn sentence(message: &str) -> String {
    let mut chars = message.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Text typed into an optional field: `None` when blank.
/// A choice's value in a `<select>`: its wire name.
pub fn wire<T: serde::Serialize>(value: T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// The choice a `<select>` value names.
pub fn from_wire<T: serde::de::DeserializeOwned>(value: &str) -> Option<T> {
    serde_json::from_value(serde_json::Value::String(value.to_owned())).ok()
}

pub fn voters(text: &str) -> Result<u32, String> {
    let text = text.trim();
    text.parse::<u32>()
        .ok()
        .filter(|n| (2..=9).contains(n))
        .ok_or_else(|| format!("Voters must be a whole number from 2 to 9, not “{text}”."))
}

/// Model names typed as a comma-separated list.
pub fn names(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

pub fn optional(text: &str) -> Option<String> {
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// Who decided a period's steps, as shares of 100 with the CSS class of each part of the bar:
/// the cache, skills, the grounding, the model, the rest.
pub fn decider_shares(steps: &StepsBy) -> [(&'static str, f64); 5] {
    let total = f64::from(steps.total().max(1));
    let share = |n: u32| f64::from(n) * 100.0 / total;
    [
        ("cache", share(steps.cache)),
        ("skill", share(steps.skill)),
        ("grounding", share(steps.grounding)),
        ("model", share(steps.model)),
        ("other", share(steps.other)),
    ]
}

/// The bar in words, for a screen reader: `steps: cache 10%, grounding 60%, model 30%`.
pub fn shares_words(shares: &[(&str, f64)]) -> String {
    let parts: Vec<String> = shares
        .iter()
        .filter(|(_, s)| *s > 0.0)
        .map(|(who, s)| format!("{who} {s:.0}%"))
        .collect();
    if parts.is_empty() {
        "no steps".into()
    } else {
        format!("steps: {}", parts.join(", "))
    }
}

/// A period's figures in a line: `5 tasks · 80% done · 1.2 model calls a task · 14 s`.
pub fn period_words(p: &UsagePeriod) -> String {
    let tasks = if p.tasks == 1 {
        "1 task".to_owned()
    } else {
        format!("{} tasks", p.tasks)
    };
    let mut parts = vec![tasks];
    if p.tasks > 0 {
        parts.push(format!(
            "{:.0}% done",
            f64::from(p.succeeded) * 100.0 / f64::from(p.tasks)
        ));
        parts.push(format!(
            "{:.1} model calls a task",
            p.model_calls as f64 / f64::from(p.tasks)
        ));
    }
    if let Some(ms) = p.median_task_ms {
        parts.push(duration(ms));
    }
    parts.join(" · ")
}

/// The line under the Settings page's API key field: whether the vault keeps a key for
/// `server` (the origin of the address typed; `None` while none is), and what the vault needs
/// first, if anything; with whether the way out is the Vault page.
pub fn api_key_line(server: Option<&str>, vault: &VaultStatus) -> (String, bool) {
    let Some(server) = server else {
        return ("Type the server's address to save its key.".into(), false);
    };
    let saved = vault.api_key_servers.iter().any(|s| s == server);
    let (needs, fix) = match (vault.state, &vault.keyring_unavailable) {
        (VaultState::Locked, _) if saved => (
            " The vault is locked: unlock it on the Vault page for tasks to use the key.",
            true,
        ),
        (VaultState::Locked, _) => (
            " The vault is locked: unlock it on the Vault page to save one.",
            true,
        ),
        (VaultState::NotCreated, Some(_)) => (
            " There is no vault yet: create it on the Vault page to save one.",
            true,
        ),
        _ => ("", false),
    };
    let line = if saved {
        format!("A key is saved for {server} (kept in the vault).{needs}")
    } else {
        format!("No key saved for {server}.{needs}")
    };
    (line, fix)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_api_key_line_says_whether_a_key_is_saved_and_what_the_vault_needs() {
        let mut vault = VaultStatus {
            state: VaultState::Unlocked,
            source: None,
            keyring_unavailable: None,
            api_key_servers: vec!["http://127.0.0.1:8080".into()],
        };
        let line = |server, vault: &VaultStatus| api_key_line(server, vault);
        assert_eq!(
            line(Some("http://127.0.0.1:8080"), &vault),
            (
                "A key is saved for http://127.0.0.1:8080 (kept in the vault).".into(),
                false
            )
        );
        assert_eq!(
            line(Some("http://127.0.0.1:9090"), &vault),
            ("No key saved for http://127.0.0.1:9090.".into(), false)
        );
        assert!(!line(None, &vault).1);
        vault.state = VaultState::Locked;
        let (text, fix) = line(Some("http://127.0.0.1:8080"), &vault);
        assert!(text.starts_with("A key is saved") && text.contains("Vault page") && fix);
        let (text, fix) = line(Some("http://127.0.0.1:9090"), &vault);
        assert!(text.starts_with("No key saved") && text.contains("unlock it") && fix);
        vault.state = VaultState::NotCreated;
        vault.api_key_servers.clear();
        assert!(
            !line(Some("http://127.0.0.1:9090"), &vault).1,
            "the OS secret store keeps it"
        );
        vault.keyring_unavailable = Some("headless".into());
        let (text, fix) = line(Some("http://127.0.0.1:9090"), &vault);
        assert!(text.contains("no vault yet") && fix, "{text}");
    }

    #[test]
    fn a_period_reads_as_shares_and_figures() {
        let p = UsagePeriod {
            start: 0,
            site: None,
            tasks: 4,
            succeeded: 3,
            model_calls: 6,
            steps: StepsBy {
                cache: 1,
                skill: 0,
                grounding: 6,
                model: 3,
                other: 0,
            },
            median_task_ms: Some(14_200),
        };
        let shares = decider_shares(&p.steps);
        assert_eq!(shares[0], ("cache", 10.0));
        assert_eq!(shares[2], ("grounding", 60.0));
        assert_eq!(
            shares_words(&shares),
            "steps: cache 10%, grounding 60%, model 30%"
        );
        assert_eq!(
            period_words(&p),
            "4 tasks · 75% done · 1.5 model calls a task · 14.2 s"
        );
        assert_eq!(
            shares_words(&decider_shares(&StepsBy::default())),
            "no steps"
        );
    }

    #[test]
    fn times_read_as_people_say_them() {
        let now = 1_700_000_000_000;
        assert_eq!(ago(now, now).as_deref(), Some("just now"));
        assert_eq!(
            ago(now, now + 5_000).as_deref(),
            Some("just now"),
            "clock skew"
        );
        assert_eq!(ago(now, now - 50_000).as_deref(), Some("1 min ago"));
        assert_eq!(ago(now, now - 5 * 60_000).as_deref(), Some("5 min ago"));
        assert_eq!(ago(now, now - 3 * 3_600_000).as_deref(), Some("3 h ago"));
        assert_eq!(ago(now, now - 25 * 3_600_000), None);
        assert_eq!(duration(850), "850 ms");
        assert_eq!(duration(1_234), "1.2 s");
        assert_eq!(duration(125_000), "2 min 5 s");
        assert_eq!(duration(120_000), "2 min");
        assert_eq!(steps(1), "1 step");
        assert_eq!(steps(0), "0 steps");
    }

    #[test]
    fn select_values_are_the_wire_names() {
        for policy in [
            ApprovalPolicy::AskRisky,
            ApprovalPolicy::AlwaysAskRisky,
            ApprovalPolicy::AskEveryAction,
        ] {
            assert_eq!(approval_from(approval_value(policy)), Some(policy));
            assert_eq!(
                serde_json::to_value(policy).unwrap(),
                approval_value(policy)
            );
        }
        for backend in [
            BackendChoice::Auto,
            BackendChoice::Ollama,
            BackendChoice::OpenAi,
            BackendChoice::Wgpu,
        ] {
            assert_eq!(backend_from(backend_value(backend)), Some(backend));
        }
        assert_eq!(approval_from("never"), None);
    }

    #[test]
    fn the_step_limit_must_be_a_whole_number() {
        assert_eq!(max_steps(" 40 "), Ok(40));
        assert_eq!(max_steps("0"), Ok(0), "the host says what the range is");
        assert!(max_steps("").unwrap_err().contains("Type a step limit"));
        assert!(max_steps("2.5").unwrap_err().contains("“2.5”"));
        assert!(max_steps("-1").is_err());
        assert_eq!(optional("  "), None);
        assert_eq!(sentence("cannot save: why"), "Cannot save: why");
        assert_eq!(sentence(""), "");
        assert_eq!(optional(" qwen2.5:3b "), Some("qwen2.5:3b".into()));
    }
}
