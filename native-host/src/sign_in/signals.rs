//! What a page says about a sign-in beyond its form: a CAPTCHA the user must solve, and the
//! site's own words when it refused the credentials.

use itinero_shared::observation::{DomNode, Observation};
use regex::Regex;
use std::sync::LazyLock;

static CAPTCHA: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)captcha|i'?m not a robot|are you (a )?human|turnstile").expect("valid regex")
});
static REFUSAL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(wrong|incorrect|invalid|not (be )?recogni[sz]ed|no account|does not match|doesn't match|try again|locked out|too many attempts)[^.!?\n]{0,100}[.!?]?",
    )
    .expect("valid regex")
});
/// The most of the site's message that is repeated.
const MESSAGE_MAX: usize = 160;

/// Whether the page shows a CAPTCHA: in its text, or as a widget's frame or field.
pub fn captcha(obs: &Observation) -> bool {
    fn walk(node: &DomNode) -> bool {
        let own = [
            node.name.as_deref(),
            node.href.as_deref(),
            node.text.as_deref(),
        ]
        .into_iter()
        .flatten()
        .chain(node.attributes.iter().map(|(_, v)| v.as_str()))
        .any(|t| CAPTCHA.is_match(t));
        own || node.children.iter().any(walk)
    }
    CAPTCHA.is_match(&obs.text) || walk(&obs.root)
}

/// The sentence in which the site says the sign-in was refused, if it says so.
pub fn refusal(obs: &Observation) -> Option<String> {
    let start = REFUSAL.find(&obs.text)?.start();
    // Back to the start of the sentence the match is in.
    let sentence_start = obs.text[..start]
        .rfind(['.', '!', '?', '\n'])
        .map_or(0, |i| i + 1);
    let found = REFUSAL.find_at(&obs.text, start)?;
    let text = obs.text[sentence_start..found.end()].trim();
    Some(text.chars().take(MESSAGE_MAX).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::test_support::page_of;

    #[test]
    fn a_refusal_is_quoted_from_the_page() {
        let mut obs = page_of("https://shop.example/login", "Sign in", vec![]);
        obs.text = "Demo Shop Sign in Wrong username or password. Username Password".into();
        assert_eq!(
            refusal(&obs).as_deref(),
            Some("Demo Shop Sign in Wrong username or password.")
        );
        obs.text = "Welcome back. Your orders".into();
        assert_eq!(refusal(&obs), None);
    }

    #[test]
    fn a_captcha_is_seen_in_text_or_in_a_widget() {
        let mut obs = page_of("https://shop.example/login", "Sign in", vec![]);
        assert!(!captcha(&obs));
        obs.text = "Please confirm you are human: I'm not a robot".into();
        assert!(captcha(&obs));
        let mut framed = page_of("https://shop.example/login", "Sign in", vec![]);
        framed.root.children.push(DomNode {
            tag: "iframe".into(),
            href: Some("https://www.google.com/recaptcha/api2/anchor".into()),
            ..Default::default()
        });
        assert!(captcha(&framed));
    }
}
