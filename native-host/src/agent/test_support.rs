//! Pages and steps for the agent's unit tests.

use itinero_shared::observation::{DomNode, Observation};
use itinero_shared::Fingerprint;

use super::strategy::Step;

/// An indexed element in view, with the fingerprint the content script would give it.
pub fn element(
    index: u32,
    tag: &str,
    input_type: Option<&str>,
    role: Option<&str>,
    name: &str,
) -> DomNode {
    DomNode {
        index: Some(index),
        tag: tag.into(),
        input_type: input_type.map(Into::into),
        role: role.map(Into::into),
        name: Some(name.into()),
        in_viewport: true,
        fingerprint: Some(Fingerprint {
            tag: tag.into(),
            name: Some(name.into()),
            path: format!(">{tag}[{index}]"),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// A page at `url` whose body holds `children`.
pub fn page_of(url: &str, title: &str, children: Vec<DomNode>) -> Observation {
    Observation {
        url: url.into(),
        title: title.into(),
        root: DomNode {
            tag: "body".into(),
            children,
            ..Default::default()
        },
        ..Default::default()
    }
}

/// A step deciding `goal` on `obs` with nothing before it: no history, lessons, plan or failure.
pub fn step<'a>(goal: &'a str, obs: &'a Observation) -> Step<'a> {
    Step {
        goal,
        observation: obs,
        page_key: "",
        history: &[],
        lessons: &[],
        examples: &[],
        plan: &[],
        feedback: None,
        failed: None,
        progress: None,
    }
}

/// A piece of text with its box at `(x, y)`, as the content script puts text between elements.
pub fn text_at(text: &str, x: f64, y: f64) -> DomNode {
    DomNode {
        tag: "#text".into(),
        text: Some(text.into()),
        rect: itinero_shared::observation::Rect {
            x,
            y,
            width: 8.0 * text.len() as f64,
            height: 16.0,
        },
        ..Default::default()
    }
}

/// `node` with its box moved to `(x, y)`, 80 × 24.
pub fn placed(mut node: DomNode, x: f64, y: f64) -> DomNode {
    node.rect = itinero_shared::observation::Rect {
        x,
        y,
        width: 80.0,
        height: 24.0,
    };
    node
}
