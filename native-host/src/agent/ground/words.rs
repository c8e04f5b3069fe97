//! Words as the grounding compares them: a goal's phrase and an element's label match when they
//! say the same thing, whatever the case, punctuation, plural or the site's choice among words
//! that mean the same (log in / sign in).

/// Words that name the same thing on web pages; the first of each group stands for the others.
const SYNONYMS: &[&[&str]] = &[
    &["sign in", "log in", "login", "signin", "log on", "logon"],
    &["sign up", "register", "create account", "create an account"],
    &["sign out", "log out", "logout", "signout"],
    &["delete", "remove", "trash", "discard"],
    &[
        "email",
        "e mail",
        "mail address",
        "email address",
        "e mail address",
    ],
    &["username", "user name", "user id", "login name"],
    &["password", "passcode", "pass phrase", "passphrase"],
    &["search", "find", "look up", "lookup"],
    &["close", "dismiss", "x", "×", "✕", "✖"],
    &["cart", "basket", "shopping bag"],
    &["next", "next page", "older", "›", "»", "→"],
    &["previous", "prev", "previous page", "newer", "‹", "«", "←"],
    &[
        "phone",
        "telephone",
        "phone number",
        "telephone number",
        "mobile",
    ],
    &["quantity", "qty"],
    &["zip", "zip code", "postcode", "postal code"],
    &["surname", "last name", "family name"],
    &["first name", "given name", "forename"],
    &["settings", "preferences", "options"],
    &["checkout", "check out", "proceed to checkout"],
    &["reply", "respond"],
    &["forward", "fwd"],
    &["menu", "more actions", "more options", "actions"],
    &[
        "one time code",
        "verification code",
        "security code",
        "2fa code",
        "otp",
        "authentication code",
    ],
];

/// Small words that carry no meaning of their own in a label or a goal's phrase.
const FILLER: &[&str] = &[
    "the", "a", "an", "my", "your", "this", "that", "its", "of", "to", "on",
];

/// Lower case, letters and digits only (everything else a single space), synonyms folded to one
/// word each, plurals made singular.
pub fn canonical(s: &str) -> String {
    let mut plain = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_alphanumeric() {
            plain.extend(c.to_lowercase());
        } else if matches!(c, '×' | '✕' | '✖' | '›' | '»' | '‹' | '«' | '→' | '←') {
            plain.push(' ');
            plain.push(c);
            plain.push(' ');
        } else {
            plain.push(' ');
        }
    }
    let words: Vec<String> = plain.split_whitespace().map(singular).collect();
    let mut joined = format!(" {} ", words.join(" "));
    for group in SYNONYMS {
        let canon = group[0].replace(' ', "");
        for alt in group
            .iter()
            .filter(|a| a.replace(' ', "") != canon || a.contains(' '))
        {
            let alt = format!(" {alt} ");
            let with = format!(" {canon} ");
            // Until none is left: a replacement uses up the space its neighbour starts with.
            while joined.contains(&alt) {
                joined = joined.replace(&alt, &with);
            }
        }
    }
    joined.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The words of `s` that carry meaning, canonical.
pub fn words(s: &str) -> Vec<String> {
    let canon = canonical(s);
    let all: Vec<String> = canon
        .split(' ')
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect();
    let meaningful: Vec<String> = all
        .iter()
        .filter(|w| !FILLER.contains(&w.as_str()))
        .cloned()
        .collect();
    // A label that is nothing but a small word ("To") is that word.
    if meaningful.is_empty() {
        all
    } else {
        meaningful
    }
}

/// Plurals that are not the singular and an `s` (those a shop or a form names things by).
const IRREGULAR: &[(&str, &str)] = &[
    ("scarves", "scarf"),
    ("shelves", "shelf"),
    ("knives", "knife"),
    ("halves", "half"),
    ("leaves", "leaf"),
    ("loaves", "loaf"),
    ("wolves", "wolf"),
    ("children", "child"),
    ("people", "person"),
    ("men", "man"),
    ("women", "woman"),
    ("feet", "foot"),
    ("teeth", "tooth"),
    ("mice", "mouse"),
];

/// `socks` → `sock`, `entries` → `entry`, `scarves` → `scarf`; short words and `-ss` endings
/// stay.
fn singular(w: &str) -> String {
    let n = w.chars().count();
    if n > 4 && w.ends_with("ies") {
        format!("{}y", &w[..w.len() - 3])
    } else if let Some((_, one)) = IRREGULAR.iter().find(|(many, _)| *many == w) {
        (*one).to_owned()
    } else if n > 3 && w.ends_with('s') && !w.ends_with("ss") && !w.ends_with("us") {
        w[..w.len() - 1].to_owned()
    } else {
        w.to_owned()
    }
}

/// Two words are the same when equal, or, for longer words, one typing slip apart.
pub fn same_word(a: &str, b: &str) -> bool {
    a == b || (a.len() >= 5 && b.len() >= 5 && strsim::damerau_levenshtein(a, b) <= 1)
}

/// How well `label` says what `phrase` says, from 0 (nothing shared) to 1 (the same words):
/// every word of the phrase in the label, and nothing else, is 1; the phrase's words inside a
/// longer label score less the more the label says besides.
pub fn similarity(phrase: &str, label: &str) -> f32 {
    let p = words(phrase);
    let l = words(label);
    if p.is_empty() || l.is_empty() {
        return 0.0;
    }
    if p.concat() == l.concat() {
        return 1.0;
    }
    let found = p
        .iter()
        .filter(|w| l.iter().any(|v| same_word(w, v)))
        .count();
    let used = l
        .iter()
        .filter(|v| p.iter().any(|w| same_word(w, v)))
        .count();
    let of_phrase = found as f32 / p.len() as f32;
    let of_label = used as f32 / l.len() as f32;
    if found == p.len() && used == l.len() {
        0.95
    } else if found == p.len() {
        0.55 + 0.35 * of_label
    } else {
        0.5 * of_phrase * of_label
    }
}

/// Whether `label` holds all of `phrase`'s words, in any order.
pub fn contains(label: &str, phrase: &str) -> bool {
    let l = words(label);
    let p = words(phrase);
    !p.is_empty() && p.iter().all(|w| l.iter().any(|v| same_word(w, v)))
}

/// `third` → 3, `2nd` → 2, `last` → usize::MAX.
pub fn ordinal(w: &str) -> Option<usize> {
    const WORDS: [&str; 10] = [
        "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth",
        "tenth",
    ];
    let w = w.to_lowercase();
    if let Some(i) = WORDS.iter().position(|o| *o == w) {
        return Some(i + 1);
    }
    if w == "last" {
        return Some(usize::MAX);
    }
    let digits = w.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &w[digits.len()..];
    if !digits.is_empty() && matches!(suffix, "st" | "nd" | "rd" | "th") {
        return digits.parse().ok().filter(|n| *n > 0);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_punctuation_plurals_and_synonyms_fold_away() {
        assert_eq!(canonical("Log-In!"), "signin");
        assert_eq!(canonical("Wool Socks"), "wool sock");
        assert_eq!(canonical("E-mail address"), "email");
        assert_eq!(canonical("Entries"), "entry");
        assert_eq!(canonical("Address"), "address");
        assert_eq!(similarity("sign in", "Log in"), 1.0);
        assert_eq!(similarity("the Save", "Save"), 1.0);
    }

    #[test]
    fn a_longer_label_scores_less_than_an_exact_one_and_a_slip_still_matches() {
        assert!(similarity("save", "Save") > similarity("save", "Save draft"));
        assert!(similarity("save", "Save draft") > similarity("save", "Cancel"));
        assert_eq!(similarity("newsletter", "Newsleter"), 0.95);
        assert_eq!(similarity("bob", "rob"), 0.0);
        assert!(contains("Reply to Maria Lopez", "maria"));
    }

    #[test]
    fn ordinals_read_as_words_and_numbers() {
        assert_eq!(ordinal("third"), Some(3));
        assert_eq!(ordinal("2nd"), Some(2));
        assert_eq!(ordinal("11th"), Some(11));
        assert_eq!(ordinal("last"), Some(usize::MAX));
        assert_eq!(ordinal("thirds"), None);
        assert_eq!(ordinal("0th"), None);
    }
}
