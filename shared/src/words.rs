//! Records in words, the same in the side panel and the command line's reports: a run's
//! status, counts, durations and what decided a step.

use crate::records::{RunStatus, StepRecord};

/// The host's note when it has a task's Stop: the task ends at its next check, before it acts
/// again.
pub const STOP_RECEIVED: &str = "Stop received: the task ends before its next action.";

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_has_a_label() {
        for status in RunStatus::ALL {
            assert!(!status_label(status).is_empty());
        }
        assert_eq!(status_label(RunStatus::StepLimit), "Step limit");
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
}
