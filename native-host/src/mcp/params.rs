//! What each tool takes, with the JSON schema the client is shown, and the action an `act`
//! call describes.

use itinero_shared::observation::Observation;
use itinero_shared::Action;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Map, Value};

#[derive(Debug, Deserialize, JsonSchema)]
pub struct TabParams {
    /// The tab, as list_tabs numbers it.
    pub tab_id: i64,
}

/// What `act` can do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ActKind {
    Click,
    Type,
    Select,
    Check,
    Hover,
    Scroll,
    PressKey,
    Navigate,
    Back,
    Forward,
    Wait,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ActParams {
    /// The tab, as list_tabs numbers it.
    pub tab_id: i64,
    /// What to do.
    pub kind: ActKind,
    /// The element, by the number observe_tab shows before it (`[4]`): needed by click, type,
    /// select, check and hover; optional for scroll (the box to scroll) and press_key.
    #[serde(default)]
    pub index: Option<u32>,
    /// type: the text to type. A saved sign-in is typed as {{secret:username}},
    /// {{secret:password}} or {{secret:totp}}, filled in by itinero (never shown to you).
    #[serde(default)]
    pub text: Option<String>,
    /// type: press Enter after typing.
    #[serde(default)]
    pub submit: Option<bool>,
    /// select: the option's value or visible label.
    #[serde(default)]
    pub value: Option<String>,
    /// check: whether the box ends up checked (default true).
    #[serde(default)]
    pub checked: Option<bool>,
    /// press_key: the key, e.g. Enter, Escape, ArrowDown.
    #[serde(default)]
    pub key: Option<String>,
    /// scroll: up, down, left or right (default down).
    #[serde(default)]
    pub direction: Option<String>,
    /// navigate: the address.
    #[serde(default)]
    pub url: Option<String>,
    /// wait: milliseconds.
    #[serde(default)]
    pub ms: Option<u64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct RunParams {
    /// What to do, in words, as a user would type it in itinero's side panel.
    pub goal: String,
    /// The tab to work in; default: the active web page.
    #[serde(default)]
    pub tab_id: Option<i64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListSkillsParams {
    /// Only skills whose name, goal or site contains this text.
    #[serde(default)]
    pub search: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SkillParams {
    /// The skill's name, as list_skills gives it.
    pub name: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ShowRunParams {
    /// The run's id (run_task's result names it); the latest run when left out.
    #[serde(default)]
    pub run_id: Option<i64>,
    /// How many of the last steps' pictures to attach (default 3, at most 10).
    #[serde(default)]
    pub pictures: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct RunSkillParams {
    /// The skill's name, as list_skills gives it.
    pub name: String,
    /// A value for each of the skill's parameters, by name.
    #[serde(default)]
    pub params: std::collections::BTreeMap<String, String>,
    /// The tab to run in; default: a tab already on the skill's site, else the active page.
    #[serde(default)]
    pub tab_id: Option<i64>,
}

impl ActKind {
    fn wire(self) -> &'static str {
        match self {
            ActKind::Click => "click",
            ActKind::Type => "type",
            ActKind::Select => "select",
            ActKind::Check => "check",
            ActKind::Hover => "hover",
            ActKind::Scroll => "scroll",
            ActKind::PressKey => "press_key",
            ActKind::Navigate => "navigate",
            ActKind::Back => "back",
            ActKind::Forward => "forward",
            ActKind::Wait => "wait",
        }
    }

    fn needs_target(self) -> bool {
        matches!(
            self,
            ActKind::Click | ActKind::Type | ActKind::Select | ActKind::Check | ActKind::Hover
        )
    }
}

/// The action `p` describes, its element found in `page` (a fresh observation of the tab);
/// otherwise what is wrong with the call, worded for the calling model.
pub fn action(p: &ActParams, page: &Observation) -> Result<Action, String> {
    let mut a = Map::new();
    a.insert("kind".into(), json!(p.kind.wire()));
    match p.index {
        Some(index) => {
            let target = page.target_at(index).ok_or_else(|| {
                format!("no element is numbered [{index}] on the page now: observe_tab again")
            })?;
            a.insert("target".into(), json!(target));
        }
        None if p.kind.needs_target() => {
            return Err(format!(
                "{} needs the element's index, as observe_tab numbers it",
                p.kind.wire()
            ))
        }
        None => {}
    }
    let mut need = |field: &str, value: Option<Value>| -> Result<(), String> {
        match value {
            Some(v) => {
                a.insert(field.into(), v);
                Ok(())
            }
            None => Err(format!("{} needs \"{field}\"", p.kind.wire())),
        }
    };
    match p.kind {
        ActKind::Type => {
            need("text", p.text.clone().map(Value::from))?;
            need("submit", Some(json!(p.submit.unwrap_or(false))))?;
        }
        ActKind::Select => need("value", p.value.clone().map(Value::from))?,
        ActKind::Check => need("checked", Some(json!(p.checked.unwrap_or(true))))?,
        ActKind::PressKey => need("key", p.key.clone().map(Value::from))?,
        ActKind::Navigate => need("url", p.url.clone().map(Value::from))?,
        ActKind::Wait => need("ms", Some(json!(p.ms.unwrap_or(1000).min(30_000))))?,
        ActKind::Scroll => {
            if let Some(d) = &p.direction {
                need("direction", Some(json!(d.to_lowercase())))?;
            }
        }
        ActKind::Click | ActKind::Hover | ActKind::Back | ActKind::Forward => {}
    }
    serde_json::from_value(Value::Object(a))
        .map_err(|e| format!("not an action itinero knows: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use itinero_shared::observation::DomNode;
    use itinero_shared::Fingerprint;

    fn page() -> Observation {
        Observation {
            root: DomNode {
                tag: "body".into(),
                children: vec![DomNode {
                    tag: "input".into(),
                    index: Some(3),
                    fingerprint: Some(Fingerprint {
                        tag: "input".into(),
                        name: Some("Search".into()),
                        ..Default::default()
                    }),
                    ..Default::default()
                }],
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn params(kind: ActKind) -> ActParams {
        ActParams {
            tab_id: 1,
            kind,
            index: None,
            text: None,
            submit: None,
            value: None,
            checked: None,
            key: None,
            direction: None,
            url: None,
            ms: None,
        }
    }

    #[test]
    fn an_act_call_becomes_the_action_on_the_element_it_numbers() {
        let p = ActParams {
            index: Some(3),
            text: Some("wool socks".into()),
            submit: Some(true),
            ..params(ActKind::Type)
        };
        match action(&p, &page()).unwrap() {
            Action::Type {
                target,
                text,
                submit,
                ..
            } => {
                assert_eq!(target.index, 3);
                assert_eq!(target.fingerprint.name.as_deref(), Some("Search"));
                assert_eq!((text.as_str(), submit), ("wool socks", true));
            }
            other => panic!("{other:?}"),
        }
        let go = ActParams {
            url: Some("https://example.org/".into()),
            ..params(ActKind::Navigate)
        };
        assert!(matches!(action(&go, &page()), Ok(Action::Navigate { .. })));
    }

    #[test]
    fn a_call_missing_what_its_action_needs_says_what() {
        let no_index = ActParams {
            text: Some("x".into()),
            ..params(ActKind::Type)
        };
        assert!(action(&no_index, &page()).unwrap_err().contains("index"));
        let gone = ActParams {
            index: Some(9),
            ..params(ActKind::Click)
        };
        assert!(action(&gone, &page()).unwrap_err().contains("[9]"));
        let no_text = ActParams {
            index: Some(3),
            ..params(ActKind::Type)
        };
        assert!(action(&no_text, &page()).unwrap_err().contains("\"text\""));
        let no_url = params(ActKind::Navigate);
        assert!(action(&no_url, &page()).unwrap_err().contains("\"url\""));
    }
}
