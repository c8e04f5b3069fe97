//! Words and numbers for the history and settings pages: no DOM, so they are tested natively.

use itinero_shared::records::{ApprovalPolicy, BackendChoice, RunStatus, StepRecord};

/// A run's status in the list and its detail.
pub fn status_label(status: RunStatus) -> &'static str {
    match status {
        RunStatus::Running => "Running",
        RunStatus::Succeeded => "Succeeded",
        RunStatus::Failed => "Failed",
        RunStatus::Stopped => "Stopped",
        RunStatus::StepLimit => "Step limit",
        RunStatus::Interrupted => "Interrupted",
    }
}

/// `1 step`, `12 steps`.
pub fn steps(n: u32) -> String {
    if n == 1 {
        "1 step".into()
    } else {
        format!("{n} steps")
    }
}

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

/// A duration: `850 ms`, `1.2 s`, `2 min 5 s`.
pub fn duration(ms: u64) -> String {
    match ms {
        0..1000 => format!("{ms} ms"),
        1000..60_000 => format!("{:.1} s", ms as f64 / 1000.0),
        _ => {
            let secs = ms / 1000;
            match secs % 60 {
                0 => format!("{} min", secs / 60),
                s => format!("{} min {s} s", secs / 60),
            }
        }
    }
}

/// A step's timings in one line: `decided in 120 ms · acted in 40 ms · 170 ms in all`; empty
/// when none was recorded.
pub fn timings(step: &StepRecord) -> String {
    let parts: Vec<String> = [
        step.decide_ms
            .map(|ms| format!("decided in {}", duration(ms))),
        step.act_ms.map(|ms| format!("acted in {}", duration(ms))),
        step.total_ms.map(|ms| format!("{} in all", duration(ms))),
    ]
    .into_iter()
    .flatten()
    .collect();
    parts.join(" · ")
}

/// What answered a step, in words for its badge (`llm` → `model`).
pub fn strategy(word: &str) -> &str {
    match word {
        "llm" => "model",
        "human" => "you",
        "" => "—",
        other => other,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_steps_timings_name_only_what_was_recorded() {
        let step = StepRecord {
            decide_ms: Some(120),
            total_ms: Some(1_700),
            ..Default::default()
        };
        assert_eq!(timings(&step), "decided in 120 ms · 1.7 s in all");
        assert_eq!(timings(&StepRecord::default()), "");
        assert_eq!(strategy("llm"), "model");
        assert_eq!(strategy("recovery"), "recovery");
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
        for status in RunStatus::ALL {
            assert!(!status_label(status).is_empty());
        }
        assert_eq!(status_label(RunStatus::StepLimit), "Step limit");
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
