//! What the agent can do in a page.
//!
//! An action names its target by index in the last observation *and* by
//! fingerprint: if the page changed in between, the content script notices the
//! mismatch instead of clicking whatever now sits at that index.

use serde::{Deserialize, Serialize};

/// The identity of an element, as stable as the page allows.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Fingerprint {
    #[serde(default)]
    pub tag: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Accessible name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The `name` attribute of form controls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name_attr: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aria_label: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Structural path from the document root, e.g. `html>body>form[1]>button[0]`.
    #[serde(default)]
    pub path: String,
    /// Frame ids from the top frame down to the element's frame; empty for the top frame.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub frame_path: Vec<i64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    pub index: u32,
    pub fingerprint: Fingerprint,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScrollDirection {
    Up,
    Down,
    Left,
    Right,
}

impl ScrollDirection {
    pub const ALL: [ScrollDirection; 4] = [
        ScrollDirection::Up,
        ScrollDirection::Down,
        ScrollDirection::Left,
        ScrollDirection::Right,
    ];

    /// The direction a word names (`word`'s reverse), as the model writes it.
    pub fn from_word(word: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|d| d.word() == word)
    }

    /// The direction as the model writes it and a person reads it (`down`).
    pub fn word(self) -> &'static str {
        match self {
            ScrollDirection::Up => "up",
            ScrollDirection::Down => "down",
            ScrollDirection::Left => "left",
            ScrollDirection::Right => "right",
        }
    }

    /// Where a scroll this way ends: the page's or a box's `top`, `bottom`, `left edge`, `right edge`.
    pub fn end(self) -> &'static str {
        match self {
            ScrollDirection::Up => "top",
            ScrollDirection::Down => "bottom",
            ScrollDirection::Left => "left edge",
            ScrollDirection::Right => "right edge",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Modifier {
    Alt,
    Control,
    Meta,
    Shift,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Action {
    Click {
        target: Target,
    },
    Type {
        target: Target,
        text: String,
        #[serde(default)]
        submit: bool,
        #[serde(default = "yes")]
        clear: bool,
    },
    /// Chooses an option by value or by visible label.
    Select {
        target: Target,
        value: String,
    },
    Check {
        target: Target,
        #[serde(default = "yes")]
        checked: bool,
    },
    Hover {
        target: Target,
    },
    /// Scrolls the page, or with a target the box that scrolls it (the target itself or its
    /// nearest scrolling ancestor, else the page), as a person scrolls with the pointer over it.
    /// With a target and no direction the target is brought into view: a person cannot scroll
    /// "to" an element, but the model can name one it has seen off screen.
    Scroll {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        target: Option<Target>,
        /// `None` with a target: into view; `None` without one means down.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        direction: Option<ScrollDirection>,
        /// In pages (the scrolled box's own height or width); fractions allowed.
        #[serde(default = "one")]
        pages: f64,
    },
    PressKey {
        key: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        modifiers: Vec<Modifier>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        target: Option<Target>,
    },
    Navigate {
        url: String,
    },
    Back,
    Forward,
    Wait {
        ms: u64,
    },
    Done {
        answer: String,
        #[serde(default = "yes")]
        success: bool,
    },
    AskUser {
        question: String,
    },
}

fn one() -> f64 {
    1.0
}

impl Action {
    /// The element this action works on, if any.
    pub fn target(&self) -> Option<&Target> {
        match self {
            Action::Click { target }
            | Action::Type { target, .. }
            | Action::Select { target, .. }
            | Action::Check { target, .. }
            | Action::Hover { target } => Some(target),
            Action::Scroll { target, .. } | Action::PressKey { target, .. } => target.as_ref(),
            _ => None,
        }
    }

    /// The element this action works on, to rewrite it (a remembered target found again, a
    /// skill's target named by a parameter).
    pub fn target_mut(&mut self) -> Option<&mut Target> {
        match self {
            Action::Click { target }
            | Action::Type { target, .. }
            | Action::Select { target, .. }
            | Action::Check { target, .. }
            | Action::Hover { target } => Some(target),
            Action::Scroll { target, .. } | Action::PressKey { target, .. } => target.as_mut(),
            _ => None,
        }
    }

    /// The same action aimed at another element (no change for actions without a target), as
    /// when a recorded target is found again under a new index.
    pub fn retargeted(&self, to: Target) -> Action {
        let mut a = self.clone();
        if let Some(target) = a.target_mut() {
            *target = to;
        }
        a
    }

    /// Which way a scroll moves: its direction, or down where it names neither a direction nor
    /// a target; `None` for a scroll that only brings its target into view, and other actions.
    pub fn scroll_direction(&self) -> Option<ScrollDirection> {
        match self {
            Action::Scroll {
                direction: Some(d), ..
            } => Some(*d),
            Action::Scroll { target: None, .. } => Some(ScrollDirection::Down),
            _ => None,
        }
    }

    /// The action's name on the wire (`click`, `press_key`, …), as the model writes it.
    pub fn kind(&self) -> &'static str {
        match self {
            Action::Click { .. } => "click",
            Action::Type { .. } => "type",
            Action::Select { .. } => "select",
            Action::Check { .. } => "check",
            Action::Hover { .. } => "hover",
            Action::Scroll { .. } => "scroll",
            Action::PressKey { .. } => "press_key",
            Action::Navigate { .. } => "navigate",
            Action::Back => "back",
            Action::Forward => "forward",
            Action::Wait { .. } => "wait",
            Action::Done { .. } => "done",
            Action::AskUser { .. } => "ask_user",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_direction_reads_back_from_its_word_and_its_wire_name() {
        for d in ScrollDirection::ALL {
            assert_eq!(ScrollDirection::from_word(d.word()), Some(d));
            // The word is also what serde writes, so the model and the wire agree.
            assert_eq!(serde_json::to_value(d).unwrap(), d.word());
        }
        assert_eq!(ScrollDirection::from_word("sideways"), None);
    }

    #[test]
    fn a_scroll_moves_its_way_down_by_default_and_to_its_target_without_a_direction() {
        let scroll = |json: &str| {
            serde_json::from_str::<Action>(json)
                .unwrap()
                .scroll_direction()
        };
        let target = r#""target":{"index":1,"fingerprint":{"tag":"a"}}"#;
        assert_eq!(scroll(r#"{"kind":"scroll"}"#), Some(ScrollDirection::Down));
        assert_eq!(
            scroll(r#"{"kind":"scroll","direction":"left"}"#),
            Some(ScrollDirection::Left)
        );
        assert_eq!(
            scroll(&format!(r#"{{"kind":"scroll",{target},"direction":"up"}}"#)),
            Some(ScrollDirection::Up)
        );
        assert_eq!(scroll(&format!(r#"{{"kind":"scroll",{target}}}"#)), None);
        assert_eq!(scroll(r#"{"kind":"back"}"#), None);
    }

    #[test]
    fn kind_is_the_wire_tag() {
        let target = Target {
            index: 1,
            fingerprint: Fingerprint::default(),
        };
        let actions = [
            Action::Click {
                target: target.clone(),
            },
            Action::Type {
                target: target.clone(),
                text: "a".into(),
                submit: false,
                clear: true,
            },
            Action::Select {
                target: target.clone(),
                value: "v".into(),
            },
            Action::Check {
                target: target.clone(),
                checked: true,
            },
            Action::Hover {
                target: target.clone(),
            },
            Action::Scroll {
                target: None,
                direction: Some(ScrollDirection::Down),
                pages: 1.0,
            },
            Action::PressKey {
                key: "Enter".into(),
                modifiers: vec![],
                target: None,
            },
            Action::Navigate { url: "u".into() },
            Action::Back,
            Action::Forward,
            Action::Wait { ms: 1 },
            Action::Done {
                answer: "a".into(),
                success: true,
            },
            Action::AskUser {
                question: "q".into(),
            },
        ];
        for a in &actions {
            assert_eq!(serde_json::to_value(a).unwrap()["kind"], a.kind(), "{a:?}");
        }
    }

    #[test]
    fn type_action_wire_form_and_defaults() {
        let a: Action = serde_json::from_str(
            r#"{"kind":"type","target":{"index":4,"fingerprint":{"tag":"input","name_attr":"q"}},"text":"socks"}"#,
        )
        .unwrap();
        match &a {
            Action::Type {
                target,
                text,
                submit,
                clear,
            } => {
                assert_eq!(target.index, 4);
                assert_eq!(target.fingerprint.name_attr.as_deref(), Some("q"));
                assert_eq!(text, "socks");
                assert!(!submit);
                assert!(clear);
            }
            other => panic!("parsed as {other:?}"),
        }
        assert_eq!(a.target().unwrap().index, 4);
        assert!(Action::Back.target().is_none());
    }
}
