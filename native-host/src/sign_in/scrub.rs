//! Putting placeholders where a secret typed this task shows up again, in whatever encoding a
//! page or a URL gives it back: raw, percent-encoded (as a URL component or a form's `+` for
//! spaces, in either case of hex, once or twice), JSON-escaped, HTML-escaped, or base64 (the
//! standard and URL-safe alphabets, at each of the three byte alignments it can start at).
//!
//! Matching ignores ASCII case except in base64, where case is the content: a page that shows
//! the password upper-cased still shows the password.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
use base64::Engine;
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

/// Everything but the characters that `encodeURIComponent` leaves alone.
const URI_COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'!')
    .remove(b'~')
    .remove(b'*')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')');
/// What a form sends as `application/x-www-form-urlencoded` (before spaces become `+`).
const FORM: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'*')
    .remove(b' ');
/// What `encodeURI` leaves alone as well: a secret put into a whole URL.
const URI: &AsciiSet = &URI_COMPONENT
    .remove(b';')
    .remove(b',')
    .remove(b'/')
    .remove(b'?')
    .remove(b':')
    .remove(b'@')
    .remove(b'&')
    .remove(b'=')
    .remove(b'+')
    .remove(b'$')
    .remove(b'#');

/// The fewest base64 characters taken as a secret's trace: shorter runs are too likely by chance.
const BASE64_MIN: usize = 6;

/// The textual forms of `secret` that are matched without regard to ASCII case.
fn textual(secret: &str) -> Vec<String> {
    let mut forms = vec![secret.to_owned()];
    for set in [URI_COMPONENT, URI, NON_ALPHANUMERIC] {
        let once = utf8_percent_encode(secret, set).to_string();
        forms.push(utf8_percent_encode(&once, set).to_string());
        forms.push(once);
    }
    forms.push(
        utf8_percent_encode(secret, FORM)
            .to_string()
            .replace(' ', "+"),
    );
    let json = serde_json::to_string(secret).unwrap_or_default();
    let json = json.trim_matches('"').to_owned();
    forms.push(json.replace('/', "\\/"));
    forms.push(
        json.chars()
            .flat_map(|c| match c {
                c if c.is_ascii() => vec![c.to_string()],
                c => c
                    .encode_utf16(&mut [0; 2])
                    .iter()
                    .map(|u| format!("\\u{u:04x}"))
                    .collect(),
            })
            .collect(),
    );
    forms.push(json);
    forms.push(html_escaped(secret, false));
    forms.push(html_escaped(secret, true));
    forms
}

/// `secret` with HTML's special characters as named entities, or as decimal references.
fn html_escaped(secret: &str, numeric: bool) -> String {
    let mut out = String::with_capacity(secret.len());
    for c in secret.chars() {
        match (c, numeric) {
            ('&' | '<' | '>' | '"' | '\'', true) => out.push_str(&format!("&#{};", c as u32)),
            ('&', false) => out.push_str("&amp;"),
            ('<', false) => out.push_str("&lt;"),
            ('>', false) => out.push_str("&gt;"),
            ('"', false) => out.push_str("&quot;"),
            ('\'', false) => out.push_str("&#39;"),
            (c, _) => out.push(c),
        }
    }
    out
}

/// The base64 runs that any encoding of a text holding `secret` contains, whatever byte offset
/// the secret starts at: from the first whole three-byte group of the secret on, up to its last.
fn base64_forms(secret: &str) -> Vec<String> {
    let bytes = secret.as_bytes();
    let mut forms = Vec::new();
    for skip in 0..3.min(bytes.len()) {
        let rest = &bytes[skip..];
        let whole = &rest[..rest.len() - rest.len() % 3];
        for engine in [&STANDARD_NO_PAD, &URL_SAFE_NO_PAD] {
            let run = engine.encode(whole);
            if run.len() >= BASE64_MIN {
                forms.push(run);
            }
        }
    }
    forms
}

/// Replaces the traces of a task's secrets in text.
pub struct Scrubber {
    textual: Option<AhoCorasick>,
    base64: Option<AhoCorasick>,
    /// The placeholder for each pattern of `textual`, then of `base64`.
    textual_to: Vec<String>,
    base64_to: Vec<String>,
}

impl Scrubber {
    /// From each secret (at least `min_len` bytes long; shorter ones are too likely to be
    /// ordinary text) and the placeholder that stands for it.
    pub fn new<'a>(secrets: impl IntoIterator<Item = (&'a str, String)>, min_len: usize) -> Self {
        let (mut t, mut t_to, mut b, mut b_to) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (secret, placeholder) in secrets {
            if secret.len() < min_len {
                continue;
            }
            for f in textual(secret) {
                if !t.contains(&f) {
                    t.push(f);
                    t_to.push(placeholder.clone());
                }
            }
            for f in base64_forms(secret) {
                if !b.contains(&f) {
                    b.push(f);
                    b_to.push(placeholder.clone());
                }
            }
        }
        let build = |patterns: &[String], fold: bool| {
            (!patterns.is_empty()).then(|| {
                AhoCorasickBuilder::new()
                    .ascii_case_insensitive(fold)
                    .match_kind(MatchKind::LeftmostLongest)
                    .build(patterns)
                    .expect("plain-string patterns always build")
            })
        };
        Self {
            textual: build(&t, true),
            base64: build(&b, false),
            textual_to: t_to,
            base64_to: b_to,
        }
    }

    /// Whether there is nothing to look for.
    pub fn is_empty(&self) -> bool {
        self.textual.is_none() && self.base64.is_none()
    }

    /// `s` with every trace of a secret replaced by its placeholder.
    pub fn clean(&self, s: &mut String) {
        for (ac, to) in [
            (&self.textual, &self.textual_to),
            (&self.base64, &self.base64_to),
        ] {
            if let Some(ac) = ac {
                if ac.is_match(s.as_str()) {
                    *s = ac.replace_all(s, to);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::engine::general_purpose::{STANDARD, URL_SAFE};

    const SECRET: &str = "correct horse/battery+staple&\"é";
    const HOLE: &str = "{{secret:password}}";

    fn scrubbed(s: &str) -> String {
        let mut s = s.to_owned();
        Scrubber::new([(SECRET, HOLE.to_owned())], 4).clean(&mut s);
        s
    }

    #[test]
    fn every_encoding_of_the_secret_becomes_the_placeholder() {
        let form: String = url_form(SECRET);
        let encodings = [
            SECRET.to_owned(),
            SECRET.to_ascii_uppercase(),
            utf8_percent_encode(SECRET, NON_ALPHANUMERIC).to_string(),
            utf8_percent_encode(SECRET, NON_ALPHANUMERIC)
                .to_string()
                .to_lowercase(),
            utf8_percent_encode(SECRET, URI_COMPONENT).to_string(),
            utf8_percent_encode(
                &utf8_percent_encode(SECRET, URI_COMPONENT).to_string(),
                URI_COMPONENT,
            )
            .to_string(),
            form.clone(),
            serde_json::to_string(SECRET).unwrap(),
            serde_json::to_string(SECRET).unwrap().replace('/', "\\/"),
            "correct horse/battery+staple&\\\"\\u00e9".to_owned(),
            html_escaped(SECRET, false),
            html_escaped(SECRET, true),
        ];
        for e in encodings {
            let page = format!("https://shop.example/login?user=alice&password={e}&next=1");
            let clean = scrubbed(&page);
            assert!(clean.contains(HOLE), "{e} in {page}: {clean}");
            assert!(!clean.to_lowercase().contains("horse"), "{e}: {clean}");
        }
        // `url_form` is the form encoding a browser sends (spaces as `+`).
        assert!(form.contains("correct+horse%2Fbattery%2Bstaple"), "{form}");
    }

    fn url_form(s: &str) -> String {
        utf8_percent_encode(s, FORM).to_string().replace(' ', "+")
    }

    #[test]
    fn base64_is_found_at_every_offset_and_in_both_alphabets() {
        for prefix in ["", "u", "us", "use", "user:"] {
            let text = format!("{prefix}{SECRET}:tail");
            for engine in [&STANDARD, &URL_SAFE, &STANDARD_NO_PAD, &URL_SAFE_NO_PAD] {
                let encoded = engine.encode(&text);
                let clean = scrubbed(&format!("Authorization: Basic {encoded}"));
                assert!(clean.contains(HOLE), "{prefix:?} {encoded}: {clean}");
                // What is left of the run cannot be decoded back to the secret's words.
                assert!(!clean.contains(&engine.encode(SECRET)[..8]), "{clean}");
            }
        }
    }

    #[test]
    fn short_secrets_and_ordinary_text_are_left_alone() {
        let s = Scrubber::new([("abc", HOLE.to_owned())], 4);
        assert!(s.is_empty());
        let mut text = "abc abc".to_owned();
        s.clean(&mut text);
        assert_eq!(text, "abc abc");
        assert_eq!(
            scrubbed("Welcome back, alice. Your horse is correct."),
            "Welcome back, alice. Your horse is correct."
        );
    }

    mod properties {
        use super::super::*;
        use base64::engine::general_purpose::STANDARD;
        use proptest::prelude::*;

        /// Every encoding the scrub promises to undo, as a page or a URL would write it.
        fn encodings(secret: &str) -> Vec<String> {
            let json = serde_json::to_string(secret).unwrap();
            vec![
                secret.to_owned(),
                secret.to_uppercase(),
                utf8_percent_encode(secret, URI_COMPONENT).to_string(),
                utf8_percent_encode(secret, FORM)
                    .to_string()
                    .replace(' ', "+"),
                json.trim_matches('"').to_owned(),
                html_escaped(secret, false),
                html_escaped(secret, true),
            ]
        }

        proptest! {
            #[test]
            fn no_encoding_of_a_secret_survives_in_any_text(
                secret in "[ -~]{8,24}",
                before in "[ -~]{0,16}",
                after in "[ -~]{0,16}",
            ) {
                let scrubber = Scrubber::new([(secret.as_str(), "{{secret:password}}".to_owned())], 4);
                for form in encodings(&secret) {
                    let mut text = format!("{before}{form}{after}");
                    scrubber.clean(&mut text);
                    prop_assert!(
                        !text.to_lowercase().contains(&form.to_lowercase()),
                        "{form:?} left in {text:?}"
                    );
                }
            }

            #[test]
            fn a_secret_inside_base64_is_found_at_any_offset(
                secret in "[ -~]{8,24}",
                before in "[ -~]{0,16}",
                after in "[ -~]{0,16}",
            ) {
                let scrubber = Scrubber::new([(secret.as_str(), "{{secret:password}}".to_owned())], 4);
                let encoded = STANDARD.encode(format!("{before}{secret}{after}"));
                let mut text = encoded.clone();
                scrubber.clean(&mut text);
                prop_assert_ne!(&text, &encoded);
                prop_assert!(text.contains("{{secret:password}}"));
            }
        }
    }
}
