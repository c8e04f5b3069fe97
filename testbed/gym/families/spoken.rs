//! Values as people say them rather than as the page writes them: an option named by its short
//! or everyday name ("the UK", "medium", "NY", "March" for "03"), and an amount of money written
//! with its currency and thousands separators, or in words, for a number field.

use maud::html;

use super::super::page::{one, Chrome, FIRST};
use super::super::{Family, Spec};
use super::{field, form_site, posted, say};

/// (label, name, [(the option as the page writes it, what people call it)]).
type Aliased = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static [&'static str])],
);

const ALIASED: &[Aliased] = &[
    (
        "Country",
        "country",
        &[
            ("Germany", &["Germany"]),
            ("United Kingdom", &["the UK", "UK", "Britain"]),
            (
                "United States",
                &["the US", "USA", "the United States of America"],
            ),
            ("Netherlands", &["the Netherlands", "Holland"]),
            ("Czechia", &["the Czech Republic"]),
            ("United Arab Emirates", &["the UAE", "UAE"]),
        ],
    ),
    (
        "Size",
        "size",
        &[
            ("XS", &["extra small"]),
            ("S", &["small"]),
            ("M", &["medium"]),
            ("L", &["large"]),
            ("XL", &["extra large"]),
        ],
    ),
    (
        "State",
        "state",
        &[
            ("Arizona", &["AZ"]),
            ("California", &["CA"]),
            ("New York", &["NY"]),
            ("Texas", &["TX"]),
            ("Florida", &["FL"]),
        ],
    ),
    (
        "Expiry month",
        "exp_month",
        &[
            ("01", &["January"]),
            ("02", &["February"]),
            ("03", &["March"]),
            ("04", &["April"]),
            ("05", &["May"]),
            ("06", &["June"]),
            ("07", &["July"]),
            ("08", &["August"]),
            ("09", &["September"]),
            ("10", &["October"]),
            ("11", &["November"]),
            ("12", &["December"]),
        ],
    ),
];

pub const OPTION_WORDS: Family = Family {
    name: "option-words",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let (label, name, options) = one(rng, ALIASED);
        let (choice, aliases) = one(rng, &options[1..]);
        let said = one(rng, aliases);
        let button = one(rng, &["Save", "Continue", "Update"]);
        let l = label.to_lowercase();
        let goal = say(
            rng,
            &[
                format!("Set the {l} to {said} and click {button}."),
                format!("Choose {said} as the {l}, then press {button}."),
                format!("Change {l} to {said} and hit {button}."),
            ],
        );
        let as_radios = options.len() <= 6 && rng.bool();
        let who = one(rng, FIRST);
        let page = chrome.page(
            "Your details",
            html! {
                form method="post" action="save" {
                    (field("Name", "name", "text", who))
                    @if as_radios {
                        fieldset {
                            legend { (label) }
                            @for (i, (o, _)) in options.iter().enumerate() {
                                label { input type="radio" name=(name) value=(o) checked[i == 0]; " " (o) }
                            }
                        }
                    } @else {
                        label { (label) " "
                            select name=(name) { @for (o, _) in options.iter() { option { (o) } } }
                        }
                    }
                    button type="submit" { (button) }
                }
            },
        );
        Spec {
            goal,
            start: String::new(),
            site: form_site(page, chrome, "save", "Saved."),
            check: Box::new(move |hits, _| {
                posted(hits, "save")
                    .is_some_and(|h| h.get(name) == Some(choice) && h.get("name") == Some(who))
            }),
        }
    },
};

/// Small round amounts as words say them.
const WORDS: &[(&str, u32)] = &[
    ("five", 5),
    ("ten", 10),
    ("twelve", 12),
    ("twenty", 20),
    ("twenty-five", 25),
    ("fifty", 50),
    ("seventy-five", 75),
    ("a hundred", 100),
    ("two hundred", 200),
];

pub const AMOUNT: Family = Family {
    name: "amount",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let (title, label, name, button, other) = one(
            rng,
            &[
                (
                    "Send money",
                    "Amount",
                    "amount",
                    "Send",
                    ("Reference", "reference"),
                ),
                (
                    "Donate",
                    "Donation",
                    "donation",
                    "Donate",
                    ("Name", "donor"),
                ),
                (
                    "Your budget",
                    "Budget",
                    "budget",
                    "Save",
                    ("Project", "project"),
                ),
                (
                    "Sell an item",
                    "Price",
                    "price",
                    "List it",
                    ("Title", "title"),
                ),
            ],
        );
        let (symbol, word) = one(rng, &[("$", "dollars"), ("€", "euros"), ("£", "pounds")]);
        let (written, value) = match rng.usize(..3) {
            0 => {
                let whole = rng.u32(1_000..20_000);
                let cents = rng.u32(0..100);
                let thousands = format!("{},{:03}", whole / 1000, whole % 1000);
                (
                    format!("{symbol}{thousands}.{cents:02}"),
                    format!("{whole}.{cents:02}"),
                )
            }
            1 => {
                let whole = rng.u32(1_000..9_000);
                (
                    format!("{},{:03} {word}", whole / 1000, whole % 1000),
                    whole.to_string(),
                )
            }
            _ => {
                let (w, n) = one(rng, WORDS);
                (format!("{w} {word}"), n.to_string())
            }
        };
        let other_value = format!("{} {}", one(rng, FIRST), rng.u32(10..99));
        let l = label.to_lowercase();
        let goal = say(
            rng,
            &[
                format!("Set the {l} to {written}, then click {button}."),
                format!("Enter {written} as the {l} and press {button}."),
                format!("Put {written} in the {l} field and click {button}."),
            ],
        );
        let kind = if rng.bool() { "number" } else { "text" };
        let page = chrome.page(
            title,
            html! {
                form method="post" action="send" {
                    (field(other.0, other.1, "text", &other_value))
                    label { (label) " " (symbol) " "
                        input type=(kind) name=(name) step="0.01" min="0" inputmode="decimal";
                    }
                    button type="submit" { (button) }
                }
            },
        );
        Spec {
            goal,
            start: String::new(),
            site: form_site(page, chrome, "send", "Done."),
            check: Box::new(move |hits, _| {
                posted(hits, "send").is_some_and(|h| {
                    h.get(name).and_then(number) == number(&value)
                        && h.get(other.1) == Some(other_value.as_str())
                })
            }),
        }
    },
};

/// An amount as a number, with the currency sign and thousands separators a text field may
/// have been given taken off; anything else in it is no number.
fn number(s: &str) -> Option<f64> {
    let bare: String = s
        .trim()
        .trim_matches(|c: char| matches!(c, '$' | '€' | '£') || c.is_whitespace())
        .replace(',', "");
    bare.parse().ok()
}
