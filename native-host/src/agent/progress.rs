//! A model call's progress on its way to the panel. The backend reports it from inside the call
//! through a plain callback; the task forwards it as events while it waits for the decision, so
//! a first download or a long prompt on a CPU shows a moving bar rather than a frozen step.

use itinero_shared::messages::TaskEventKind;
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};

use crate::llm::{Progress, Streamed};

/// Where a step's model calls send their progress.
#[derive(Debug, Clone)]
pub struct Reporter(UnboundedSender<Progress>);

impl Reporter {
    /// A reporter and the receiving end the task reads while it waits.
    pub fn channel() -> (Self, UnboundedReceiver<Progress>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Self(tx), rx)
    }

    /// The sink a backend call is given: progress goes on, streamed text is not needed (the
    /// reply holds it all).
    pub fn sink(reporter: Option<&Self>) -> impl FnMut(Streamed<'_>) + Send + '_ {
        move |s| {
            if let (Streamed::Progress(p), Some(r)) = (s, reporter) {
                // The task stopped listening: it has its answer or was stopped.
                let _ = r.0.send(p);
            }
        }
    }
}

/// `p` as the panel shows it: what is going on, worded for the user, and how far it is.
pub fn event(p: Progress, model: &str) -> TaskEventKind {
    let (label, done, total) = match p {
        Progress::Download { done, total } => (
            format!(
                "Downloading {model} (once): {} of {} MB",
                done / 1_000_000,
                total.div_ceil(1_000_000)
            ),
            done,
            total,
        ),
        Progress::Load => (format!("Loading {model}…"), 0, 0),
        Progress::Prompt { done, total } => (
            format!("The model is reading the page: {done} of {total} tokens"),
            done,
            total,
        ),
    };
    TaskEventKind::Progress { label, done, total }
}

/// Passes on only the events whose label differs from the last one passed: a download reports
/// every HTTP chunk it reads, thousands for a model, while its label moves once per megabyte, and
/// each event is a frame to the panel.
#[derive(Default)]
pub struct Changes {
    last: Option<String>,
}

impl Changes {
    pub fn event(&mut self, p: Progress, model: &str) -> Option<TaskEventKind> {
        let event = event(p, model);
        let TaskEventKind::Progress { label, .. } = &event else {
            return Some(event);
        };
        if self.last.as_deref() == Some(label.as_str()) {
            return None;
        }
        self.last = Some(label.clone());
        Some(event)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_download_is_shown_once_per_megabyte_not_once_per_chunk() {
        let mut changes = Changes::default();
        let total = 5_000_000;
        let shown = (0..=total)
            .step_by(16_384)
            .filter_map(|done| changes.event(Progress::Download { done, total }, "m"))
            .count();
        assert_eq!(shown, 5);
        assert!(changes.event(Progress::Load, "m").is_some());
        assert!(changes.event(Progress::Load, "m").is_none());
        assert!(changes
            .event(Progress::Prompt { done: 1, total: 2 }, "m")
            .is_some());
    }

    #[test]
    fn progress_reaches_the_receiver_and_text_does_not() {
        let (r, mut rx) = Reporter::channel();
        let mut sink = Reporter::sink(Some(&r));
        sink(Streamed::Text("{\"action\""));
        sink(Streamed::Progress(Progress::Load));
        sink(Streamed::Progress(Progress::Prompt {
            done: 128,
            total: 300,
        }));
        drop(sink);
        drop(r);
        let mut got = Vec::new();
        while let Ok(p) = rx.try_recv() {
            got.push(p);
        }
        assert_eq!(
            got,
            [
                Progress::Load,
                Progress::Prompt {
                    done: 128,
                    total: 300
                }
            ]
        );
        // No reporter: nothing to send to, and nothing fails.
        Reporter::sink(None)(Streamed::Progress(Progress::Load));
    }

    #[test]
    fn the_panel_hears_what_is_happening_and_how_far() {
        let download = event(
            Progress::Download {
                done: 40_500_000,
                total: 92_100_000,
            },
            "SmolLM2",
        );
        assert_eq!(
            download,
            TaskEventKind::Progress {
                label: "Downloading SmolLM2 (once): 40 of 93 MB".into(),
                done: 40_500_000,
                total: 92_100_000
            }
        );
        let TaskEventKind::Progress { label, total, .. } = event(Progress::Load, "SmolLM2") else {
            unreachable!()
        };
        assert_eq!((label.as_str(), total), ("Loading SmolLM2…", 0));
    }
}
