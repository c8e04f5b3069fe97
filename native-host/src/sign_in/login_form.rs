//! Finding a sign-in form in an observation: one step (username and password), the first of two
//! steps (a username or email with "Next", the password on the next page), or a TOTP step (a
//! one-time code). Only fields a person can see count: the observation gives indices only to
//! elements that are rendered and not covered (its occlusion check is the hidden-field defence),
//! and a field with no size is skipped too. All fields of a form must be in the same frame.

use itinero_shared::observation::{DomNode, Observation};
use regex::Regex;
use std::sync::LazyLock;

/// What the page asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoginStep {
    /// Username (when the page has a field for it) and password together.
    Password {
        username: Option<u32>,
        password: u32,
    },
    /// The username alone; the password comes on the next page.
    Username { username: u32 },
    /// A one-time code from an authenticator.
    Totp { code: u32 },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginForm {
    pub step: LoginStep,
    /// The button that sends it, if one was found (else the last field is submitted with Enter).
    pub submit: Option<u32>,
    /// The frame the fields are in (0: the top frame).
    pub frame_id: i64,
}

impl LoginForm {
    /// Its fields and its button, whatever the step.
    pub fn indices(&self) -> Vec<u32> {
        let fields = match self.step {
            LoginStep::Password { username, password } => {
                username.into_iter().chain([password]).collect()
            }
            LoginStep::Username { username } => vec![username],
            LoginStep::Totp { code } => vec![code],
        };
        fields.into_iter().chain(self.submit).collect()
    }
}

static USERNAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)user|e-?mail|login|account|identifier|phone|\bid\b").expect("valid regex")
});
static CODE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)one.?time|\botp\b|totp|2fa|two.?factor|verification|authenticat|security code|\bcode\b",
    )
    .expect("valid regex")
});
static SEND: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)sign.?in|log.?in|continue|next|verify|submit|confirm").expect("valid regex")
});
static SIGN_IN_PAGE: LazyLock<Regex> = LazyLock::new(|| {
    // Whole words: `auto_login.html` or `blogin` is not a sign-in page.
    Regex::new(r"(?i)\b(sign.?in|log.?in|anmelden|connexion)\b").expect("valid regex")
});

/// Everything that describes a field: its accessible name, placeholder, name and id.
fn words(node: &DomNode) -> String {
    let mut s = String::new();
    for part in [node.name.as_deref(), node.placeholder.as_deref()]
        .into_iter()
        .flatten()
    {
        s.push_str(part);
        s.push(' ');
    }
    for (k, v) in &node.attributes {
        if k == "name" || k == "id" || k == "autocomplete" {
            s.push_str(v);
            s.push(' ');
        }
    }
    s
}

/// A field a person can see and reach: indexed (rendered, not covered), with a size, and not
/// parked where no scrolling brings it (left of or above the page, the off-screen trick).
pub fn visible(node: &DomNode, obs: &Observation) -> bool {
    let r = &node.rect;
    let (page_x, page_y) = (r.x + obs.scroll_x, r.y + obs.scroll_y);
    node.index.is_some()
        && !node.occluded
        && r.width >= 2.0
        && r.height >= 2.0
        && page_x + r.width > 0.0
        && page_y + r.height > 0.0
}

fn disabled(node: &DomNode) -> bool {
    node.states
        .iter()
        .any(|s| s == "disabled" || s == "readonly")
}

fn kind(node: &DomNode) -> &str {
    node.input_type.as_deref().unwrap_or("text")
}

fn is_text_field(node: &DomNode) -> bool {
    node.tag == "input" && matches!(kind(node), "text" | "email" | "tel" | "number" | "")
}

fn is_button(node: &DomNode) -> bool {
    node.tag == "button"
        || (node.tag == "input" && matches!(kind(node), "submit" | "button"))
        || node.role.as_deref() == Some("button")
}

fn frame(node: &DomNode) -> i64 {
    node.frame_id.unwrap_or(0)
}

/// The sign-in form on the page, if there is one.
pub fn detect(obs: &Observation) -> Option<LoginForm> {
    let fields: Vec<&DomNode> = obs
        .indexed()
        .into_iter()
        .filter(|n| visible(n, obs) && !disabled(n))
        .collect();
    let position = |index: u32| fields.iter().position(|n| n.index == Some(index));
    // The button after the form's last field, in the same frame, that says it sends.
    let submit_after = |last: usize, frame_id: i64| {
        let after = fields[last + 1..]
            .iter()
            .filter(|n| is_button(n) && frame(n) == frame_id);
        after
            .clone()
            .find(|n| n.name.as_deref().is_some_and(|t| SEND.is_match(t)))
            .or_else(|| after.clone().next())
            .and_then(|n| n.index)
    };

    if let Some(password) = fields
        .iter()
        .find(|n| n.tag == "input" && kind(n) == "password")
    {
        let frame_id = frame(password);
        let at = position(password.index?)?;
        // The nearest text field before it in the same frame, preferably one named like a username.
        let before = fields[..at]
            .iter()
            .rev()
            .filter(|n| is_text_field(n) && frame(n) == frame_id);
        let username = before
            .clone()
            .find(|n| USERNAME.is_match(&words(n)))
            .or_else(|| before.clone().next())
            .and_then(|n| n.index);
        return Some(LoginForm {
            step: LoginStep::Password {
                username,
                password: password.index?,
            },
            submit: submit_after(at, frame_id),
            frame_id,
        });
    }
    if let Some(code) = fields
        .iter()
        .find(|n| is_text_field(n) && CODE.is_match(&words(n)) && !USERNAME.is_match(&words(n)))
    {
        let frame_id = frame(code);
        let at = position(code.index?)?;
        return Some(LoginForm {
            step: LoginStep::Totp { code: code.index? },
            submit: submit_after(at, frame_id),
            frame_id,
        });
    }
    // A lone username field counts only on a page that is about signing in.
    if !SIGN_IN_PAGE.is_match(&format!("{} {}", obs.title, obs.url)) {
        return None;
    }
    let username = fields
        .iter()
        .find(|n| is_text_field(n) && USERNAME.is_match(&words(n)))?;
    let frame_id = frame(username);
    let at = position(username.index?)?;
    Some(LoginForm {
        step: LoginStep::Username {
            username: username.index?,
        },
        submit: submit_after(at, frame_id),
        frame_id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use itinero_shared::observation::Rect;

    fn field(index: u32, tag: &str, kind: Option<&str>, name: &str, id: &str) -> DomNode {
        DomNode {
            index: Some(index),
            tag: tag.into(),
            input_type: kind.map(Into::into),
            name: Some(name.into()),
            attributes: if id.is_empty() {
                vec![]
            } else {
                vec![("id".into(), id.into())]
            },
            rect: Rect {
                x: 10.0,
                y: 10.0 * f64::from(index),
                width: 200.0,
                height: 24.0,
            },
            in_viewport: true,
            ..Default::default()
        }
    }

    use crate::agent::test_support::page_of as page;

    #[test]
    fn a_one_step_form_after_a_search_box() {
        let obs = page(
            "https://shop.example/shop/login",
            "Sign in",
            vec![
                field(0, "input", Some("search"), "Search products", "q"),
                field(1, "button", Some("submit"), "Search", ""),
                field(2, "input", Some("text"), "Username", "username"),
                field(3, "input", Some("password"), "Password", "password"),
                field(4, "a", None, "Forgot your password?", ""),
                field(5, "button", Some("submit"), "Sign in", ""),
            ],
        );
        assert_eq!(
            detect(&obs),
            Some(LoginForm {
                step: LoginStep::Password {
                    username: Some(2),
                    password: 3
                },
                submit: Some(5),
                frame_id: 0
            })
        );
    }

    #[test]
    fn the_steps_of_a_two_step_sign_in_with_a_code() {
        let first = page(
            "https://id.example/signin",
            "Sign in – Example ID",
            vec![
                field(0, "input", Some("email"), "Email address", "identifier"),
                field(1, "button", None, "Next", ""),
            ],
        );
        assert_eq!(
            detect(&first).unwrap().step,
            LoginStep::Username { username: 0 }
        );
        assert_eq!(detect(&first).unwrap().submit, Some(1));
        let code = page(
            "https://id.example/challenge",
            "2-step verification",
            vec![
                field(0, "input", Some("text"), "Enter the 6-digit code", "otp"),
                field(1, "button", None, "Verify", ""),
            ],
        );
        assert_eq!(detect(&code).unwrap().step, LoginStep::Totp { code: 0 });
    }

    #[test]
    fn hidden_covered_or_unrelated_fields_are_not_a_sign_in_form() {
        // A password field with no size (a honeypot) and one that is covered get no chance.
        let mut tiny = field(1, "input", Some("password"), "Password", "pw");
        tiny.rect.width = 0.0;
        let mut covered = field(2, "input", Some("password"), "Password", "pw2");
        covered.occluded = true;
        covered.index = None;
        let obs = page(
            "https://shop.example/",
            "Shop",
            vec![
                field(0, "input", Some("text"), "Username", "u"),
                tiny,
                covered,
            ],
        );
        assert_eq!(detect(&obs), None);
        // One parked off-screen to the left.
        let mut away = field(1, "input", Some("password"), "Password", "pw");
        away.rect.x = -9999.0;
        let obs = page(
            "https://shop.example/",
            "Shop",
            vec![field(0, "input", Some("text"), "Username", "u"), away],
        );
        assert_eq!(detect(&obs), None);
        // A newsletter's email box on a page that is not about signing in.
        let news = page(
            "https://shop.example/",
            "Wool socks",
            vec![
                field(0, "input", Some("email"), "Your email", "newsletter"),
                field(1, "button", None, "Subscribe", ""),
            ],
        );
        assert_eq!(detect(&news), None);
        let mut tricky = news.clone();
        tricky.url = "https://shop.example/auto_login/newsletter.html".into();
        assert_eq!(detect(&tricky), None);
    }

    #[test]
    fn a_form_in_a_frame_stays_in_that_frame() {
        let mut user = field(0, "input", Some("text"), "Username", "u");
        user.frame_id = Some(7);
        let mut pass = field(1, "input", Some("password"), "Password", "p");
        pass.frame_id = Some(7);
        let top_button = field(2, "button", None, "Sign in", "");
        let obs = page(
            "https://shop.example/login",
            "Sign in",
            vec![user, pass, top_button],
        );
        let form = detect(&obs).unwrap();
        assert_eq!(form.frame_id, 7);
        assert_eq!(
            form.submit, None,
            "a button of another frame does not send it"
        );
    }
}
