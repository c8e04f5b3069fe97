//! Choosing options: native selects, radio buttons, ARIA listboxes and comboboxes, a set of
//! checkboxes, and a field that only takes one of its suggestions.

use maud::{html, PreEscaped};

use super::super::page::{one, pick, Chrome, CITIES, COLOURS};
use super::super::{Family, Spec};
use super::{form_site, posted, say};

const LISTS: &[(&str, &str, &[&str])] = &[
    (
        "Country",
        "country",
        &[
            "Portugal", "France", "Germany", "Austria", "Slovenia", "Poland", "Ireland",
        ],
    ),
    (
        "Language",
        "language",
        &["English", "Deutsch", "Français", "Português", "Polski"],
    ),
    (
        "Plan",
        "plan",
        &["Free", "Starter", "Team", "Business", "Enterprise"],
    ),
    ("Size", "size", &["XS", "Small", "Medium", "Large", "XL"]),
    (
        "Time zone",
        "tz",
        &[
            "Europe/Lisbon",
            "Europe/Paris",
            "Europe/Berlin",
            "Europe/Warsaw",
        ],
    ),
];

pub const SELECT: Family = Family {
    name: "select",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let lists = pick(rng, LISTS, 2..4);
        let (label, name, options) = lists[0];
        let choice = one(rng, &options[1..]);
        let button = one(rng, &["Save", "Apply", "Update"]);
        let goal = say(
            rng,
            &[
                format!(
                    "Choose {choice} as the {} and click {button}.",
                    label.to_lowercase()
                ),
                format!("Set {label} to {choice}, then press {button}."),
                format!(
                    "Select {choice} from the {} list and hit {button}.",
                    label.to_lowercase()
                ),
            ],
        );
        let page = chrome.page("Preferences", html! {
            form method="post" action="save" {
                @for (l, n, opts) in &lists {
                    label { (l) " " select name=(n) { @for o in opts.iter() { option { (o) } } } }
                }
                button type="submit" { (button) }
            }
        });
        let firsts: Vec<(&str, &str)> = lists[1..].iter().map(|l| (l.1, l.2[0])).collect();
        Spec {
            goal,
            start: String::new(),
            site: form_site(page, chrome, "save", "Saved."),
            check: Box::new(move |hits, _| {
                posted(hits, "save").is_some_and(|h| {
                    h.get(name) == Some(choice) && firsts.iter().all(|(n, v)| h.get(n) == Some(v))
                })
            }),
        }
    },
};

const GROUPS: &[(&str, &str, &[&str])] = &[
    (
        "Delivery",
        "delivery",
        &["Standard", "Express", "Next day", "Pick up in store"],
    ),
    (
        "Payment",
        "payment",
        &["Card", "Invoice", "Bank transfer", "Cash on delivery"],
    ),
    ("Gift wrap", "wrap", &["None", "Paper", "Box", "Bag"]),
];

pub const RADIO: Family = Family {
    name: "radio",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let groups = pick(rng, GROUPS, 2..3);
        let (label, name, options) = groups[0];
        let choice = one(rng, &options[1..]);
        let button = one(rng, &["Continue", "Next", "Save"]);
        let goal = say(
            rng,
            &[
                format!(
                    "Pick {choice} for {} and click {button}.",
                    label.to_lowercase()
                ),
                format!(
                    "Choose {choice} as the {} option, then press {button}.",
                    label.to_lowercase()
                ),
                format!("Set {label} to {choice} and click {button}."),
            ],
        );
        let page = chrome.page("Checkout options", html! {
            form method="post" action="save" {
                @for (l, n, opts) in &groups {
                    fieldset {
                        legend { (l) }
                        @for (i, o) in opts.iter().enumerate() {
                            label { input type="radio" name=(n) value=(o) checked[i == 0]; " " (o) }
                        }
                    }
                }
                button type="submit" { (button) }
            }
        });
        let other = (groups[1].1, groups[1].2[0]);
        Spec {
            goal,
            start: String::new(),
            site: form_site(page, chrome, "save", "Saved."),
            check: Box::new(move |hits, _| {
                posted(hits, "save")
                    .is_some_and(|h| h.get(name) == Some(choice) && h.get(other.0) == Some(other.1))
            }),
        }
    },
};

/// A listbox of options that one click selects, kept in a hidden input for the form.
const LISTBOX_JS: &str = r#"
document.querySelectorAll('[role=listbox]').forEach(lb => lb.querySelectorAll('[role=option]').forEach(o => o.addEventListener('click', () => {
  lb.querySelectorAll('[role=option]').forEach(x => x.setAttribute('aria-selected', x === o ? 'true' : 'false'));
  document.getElementById(lb.dataset.input).value = o.textContent.trim();
})));
"#;

pub const LISTBOX: Family = Family {
    name: "listbox",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let (label, name, options) = one(rng, LISTS);
        let choice = one(rng, &options[1..]);
        let button = one(rng, &["Save", "Apply", "Confirm"]);
        let goal = say(
            rng,
            &[
                format!(
                    "Choose {choice} in the {} list and click {button}.",
                    label.to_lowercase()
                ),
                format!(
                    "Set the {} to {choice}, then press {button}.",
                    label.to_lowercase()
                ),
            ],
        );
        let page = chrome.page("Your settings", html! {
            form method="post" action="save" {
                span id="lb-label" { (label) }
                input type="hidden" name=(name) id="lb-value" value=(options[0]);
                ul role="listbox" aria-labelledby="lb-label" data-input="lb-value" tabindex="0" {
                    @for (i, o) in options.iter().enumerate() {
                        li role="option" tabindex="-1" aria-selected=(if i == 0 { "true" } else { "false" }) { (o) }
                    }
                }
                button type="submit" { (button) }
            }
            script { (PreEscaped(LISTBOX_JS)) }
        });
        Spec {
            goal,
            start: String::new(),
            site: form_site(page, chrome, "save", "Saved."),
            check: Box::new(move |hits, _| {
                posted(hits, "save").is_some_and(|h| h.get(name) == Some(choice))
            }),
        }
    },
};

/// A combobox: typing filters the popup, clicking an option (or typing one exactly) takes it.
const COMBO_JS: &str = r#"
const input = document.getElementById('combo'), list = document.getElementById('combo-list'), hidden = document.getElementById('combo-value');
function show() {
  const q = input.value.trim().toLowerCase(); let any = false;
  list.querySelectorAll('[role=option]').forEach(o => { const hit = o.textContent.toLowerCase().includes(q); o.hidden = !hit; any = any || hit; });
  list.hidden = !any; input.setAttribute('aria-expanded', any ? 'true' : 'false');
  const exact = [...list.querySelectorAll('[role=option]')].find(o => o.textContent.trim().toLowerCase() === q);
  hidden.value = exact ? exact.textContent.trim() : '';
}
input.addEventListener('input', show); input.addEventListener('focus', show); input.addEventListener('click', show);
list.querySelectorAll('[role=option]').forEach(o => o.addEventListener('click', () => { input.value = o.textContent.trim(); hidden.value = input.value; list.hidden = true; input.setAttribute('aria-expanded', 'false'); }));
"#;

fn combo_page(
    chrome: &Chrome,
    title: &str,
    label: &str,
    name: &str,
    options: &[&str],
    button: &str,
) -> String {
    chrome.page(title, html! {
        form method="post" action="save" {
            label for="combo" { (label) }
            " " input id="combo" type="text" role="combobox" aria-autocomplete="list" aria-expanded="false" aria-controls="combo-list" autocomplete="off";
            input type="hidden" id="combo-value" name=(name);
            ul role="listbox" id="combo-list" hidden {
                @for o in options { li role="option" { (o) } }
            }
            button type="submit" { (button) }
        }
        script { (PreEscaped(COMBO_JS)) }
    })
}

pub const COMBOBOX: Family = Family {
    name: "combobox",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let colours = pick(rng, COLOURS, 7..8);
        let choice = one(rng, &colours);
        let label = one(rng, &["Colour", "Favourite colour", "Theme colour"]);
        let button = one(rng, &["Save", "Apply"]);
        let goal = say(
            rng,
            &[
                format!(
                    "Set the {} to {choice} and click {button}.",
                    label.to_lowercase()
                ),
                format!(
                    "Choose {choice} as the {}, then press {button}.",
                    label.to_lowercase()
                ),
            ],
        );
        let page = combo_page(&chrome, "Appearance", label, "colour", &colours, button);
        Spec {
            goal,
            start: String::new(),
            site: form_site(page, chrome, "save", "Saved."),
            check: Box::new(move |hits, _| {
                posted(hits, "save").is_some_and(|h| h.get("colour") == Some(choice))
            }),
        }
    },
};

pub const AUTOCOMPLETE: Family = Family {
    name: "autocomplete",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let cities = pick(rng, CITIES, 8..9);
        let choice = one(rng, &cities);
        let label = one(rng, &["Destination", "City", "Travelling to"]);
        let button = one(rng, &["Search trips", "Find trains", "Continue"]);
        let goal = say(
            rng,
            &[
                format!(
                    "Set the {} to {choice} and click {button}.",
                    label.to_lowercase()
                ),
                format!(
                    "Enter {choice} as the {}, then press {button}.",
                    label.to_lowercase()
                ),
            ],
        );
        let page = combo_page(&chrome, "Plan a trip", label, "city", &cities, button);
        Spec {
            goal,
            start: String::new(),
            site: form_site(page, chrome, "save", "Searching…"),
            check: Box::new(move |hits, _| {
                posted(hits, "save").is_some_and(|h| h.get("city") == Some(choice))
            }),
        }
    },
};

const INTERESTS: &[&str] = &[
    "Hiking",
    "Cooking",
    "Chess",
    "Photography",
    "Cycling",
    "Gardening",
    "Jazz",
    "Pottery",
    "Running",
    "Astronomy",
];

pub const CHECKBOXES: Family = Family {
    name: "checkboxes",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let boxes = pick(rng, INTERESTS, 5..8);
        let wanted = pick(rng, &boxes, 2..4);
        let pre: Vec<&str> = boxes.iter().copied().filter(|_| rng.u8(..4) == 0).collect();
        let button = one(rng, &["Save", "Save interests", "Update"]);
        let list = match wanted.as_slice() {
            [a, b] => format!("{a} and {b}"),
            [a, b, c] => format!("{a}, {b} and {c}"),
            _ => unreachable!(),
        };
        let goal = say(
            rng,
            &[
                format!("Tick {list} and nothing else, then click {button}."),
                format!("Tick only {list}, then press {button}."),
                format!("Check {list} and no others, and click {button}."),
            ],
        );
        let page = chrome.page("Your interests", html! {
            form method="post" action="save" {
                fieldset { legend { "Interests" }
                    @for b in &boxes { label { input type="checkbox" name="interest" value=(b) checked[pre.contains(b)]; " " (b) } }
                }
                label { input type="checkbox" name="newsletter" value="yes" checked[rng.bool()]; " Send me the newsletter" }
                button type="submit" { (button) }
            }
        });
        Spec {
            goal,
            start: String::new(),
            site: form_site(page, chrome, "save", "Saved."),
            check: Box::new(move |hits, _| {
                posted(hits, "save").is_some_and(|h| {
                    let mut got = h.all("interest");
                    got.sort();
                    let mut want = wanted.clone();
                    want.sort();
                    got == want
                })
            }),
        }
    },
};
