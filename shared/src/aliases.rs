//! The everyday names of options that pages write otherwise: "the UK" for *United Kingdom*,
//! "NY" for *New York*, "medium" for *M*, "March" for an expiry month's *03*. They hold only
//! between a value and the options of one list already chosen, never as synonyms of words
//! anywhere on a page (a state's code is also a common word: "IN", "OR", "ME"). Shared so that
//! the content script choosing an option and the host grounding a goal read them alike.

/// Names of one country, the first as most lists write it.
const COUNTRIES: &[&[&str]] = &[
    &[
        "united kingdom",
        "uk",
        "u k",
        "britain",
        "great britain",
        "gb",
        "united kingdom of great britain and northern ireland",
    ],
    &[
        "united states",
        "us",
        "u s",
        "usa",
        "u s a",
        "america",
        "united states of america",
    ],
    &[
        "netherlands",
        "holland",
        "the netherlands",
        "netherlands the",
    ],
    &["czechia", "czech republic"],
    &["united arab emirates", "uae", "u a e"],
    &[
        "south korea",
        "korea",
        "republic of korea",
        "korea republic of",
    ],
    &["russia", "russian federation"],
    &["turkey", "turkiye", "türkiye"],
    &["north macedonia", "macedonia"],
    &["eswatini", "swaziland"],
    &["myanmar", "burma"],
    &["vietnam", "viet nam"],
    &["ivory coast", "cote d ivoire", "côte d ivoire"],
    &["cape verde", "cabo verde"],
    &["iran", "iran islamic republic of"],
    &["taiwan", "taiwan province of china", "republic of china"],
    &["vatican city", "holy see", "vatican"],
];

/// Clothing sizes, the letters first.
const SIZES: &[&[&str]] = &[
    &["xxs", "2xs", "extra extra small"],
    &["xs", "extra small", "x small"],
    &["s", "small"],
    &["m", "medium", "med"],
    &["l", "large"],
    &["xl", "extra large", "x large"],
    &["xxl", "2xl", "extra extra large", "xx large"],
    &["xxxl", "3xl"],
];

/// The United States' states and capital district by their postal codes.
const STATES: &[(&str, &str)] = &[
    ("al", "alabama"),
    ("ak", "alaska"),
    ("az", "arizona"),
    ("ar", "arkansas"),
    ("ca", "california"),
    ("co", "colorado"),
    ("ct", "connecticut"),
    ("de", "delaware"),
    ("dc", "district of columbia"),
    ("fl", "florida"),
    ("ga", "georgia"),
    ("hi", "hawaii"),
    ("id", "idaho"),
    ("il", "illinois"),
    ("in", "indiana"),
    ("ia", "iowa"),
    ("ks", "kansas"),
    ("ky", "kentucky"),
    ("la", "louisiana"),
    ("me", "maine"),
    ("md", "maryland"),
    ("ma", "massachusetts"),
    ("mi", "michigan"),
    ("mn", "minnesota"),
    ("ms", "mississippi"),
    ("mo", "missouri"),
    ("mt", "montana"),
    ("ne", "nebraska"),
    ("nv", "nevada"),
    ("nh", "new hampshire"),
    ("nj", "new jersey"),
    ("nm", "new mexico"),
    ("ny", "new york"),
    ("nc", "north carolina"),
    ("nd", "north dakota"),
    ("oh", "ohio"),
    ("ok", "oklahoma"),
    ("or", "oregon"),
    ("pa", "pennsylvania"),
    ("ri", "rhode island"),
    ("sc", "south carolina"),
    ("sd", "south dakota"),
    ("tn", "tennessee"),
    ("tx", "texas"),
    ("ut", "utah"),
    ("vt", "vermont"),
    ("va", "virginia"),
    ("wa", "washington"),
    ("wv", "west virginia"),
    ("wi", "wisconsin"),
    ("wy", "wyoming"),
];

/// Letters and digits only, words apart by one space, a leading "the" dropped.
fn plain(s: &str) -> String {
    let lower: String = s
        .to_lowercase()
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { ' ' })
        .collect();
    let w: Vec<&str> = lower.split_whitespace().collect();
    match w.as_slice() {
        ["the", rest @ ..] if !rest.is_empty() => rest.join(" "),
        _ => w.join(" "),
    }
}

/// The month a name or a usual abbreviation of it says, from 0.
fn month(s: &str) -> Option<usize> {
    crate::input_format::month(s).map(|m| m as usize - 1)
}

/// The month a list writes as a number ("03", "3") or as a number and its name ("03 - March").
fn month_written(s: &str) -> Option<usize> {
    let first = s.split_whitespace().next()?;
    let n: usize = first.parse().ok().filter(|n| (1..=12).contains(n))?;
    let rest = s[first.len()..].trim();
    (rest.is_empty() || month(rest) == Some(n - 1)).then(|| n - 1)
}

/// Whether `said`, a value as a goal gives it, names the option a page writes as `written`, by
/// a name of the same thing the tables above know. The same words are not an alias.
pub fn same(said: &str, written: &str) -> bool {
    let (a, b) = (plain(said), plain(written));
    if a.is_empty() || b.is_empty() || a == b {
        return false;
    }
    let in_group = |groups: &[&[&str]]| {
        groups
            .iter()
            .any(|g| g.contains(&a.as_str()) && g.contains(&b.as_str()))
    };
    if in_group(COUNTRIES) || in_group(SIZES) {
        return true;
    }
    if STATES
        .iter()
        .any(|(code, name)| (a == *code && b == *name) || (a == *name && b == *code))
    {
        return true;
    }
    // A month said by name, written as its number: never the other way, where a number said
    // is a count or a day more often than a month.
    month(&a).is_some_and(|m| month_written(&b) == Some(m))
        || month(&a).is_some_and(|m| month(&b) == Some(m))
}

#[cfg(test)]
mod tests {
    use super::same;

    #[test]
    fn everyday_names_match_the_lists_own() {
        assert!(same("the UK", "United Kingdom"));
        assert!(same("Britain", "United Kingdom"));
        assert!(same("USA", "United States"));
        assert!(same("the Czech Republic", "Czechia"));
        assert!(same("Holland", "Netherlands"));
        assert!(same("NY", "New York"));
        assert!(same("Texas", "TX"));
        assert!(same("medium", "M"));
        assert!(same("extra large", "XL"));
        assert!(same("March", "03"));
        assert!(same("Sept", "09 - September"));
        assert!(same("sep", "September"));
    }

    #[test]
    fn other_names_and_numbers_said_do_not() {
        assert!(!same("United Kingdom", "United Kingdom"));
        assert!(!same("the UK", "United States"));
        assert!(!same("3", "March"));
        assert!(!same("March", "04"));
        assert!(!same("small", "M"));
        assert!(!same("Newark", "NY"));
        assert!(!same("may", "05 - June"));
    }
}
