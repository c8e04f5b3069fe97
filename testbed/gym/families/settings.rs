//! Settings pages: switches to turn on and off, a field inside a closed section, a field in a
//! dialog, two fields of the same name in two sections, and a star rating.

use maud::{html, PreEscaped};

use super::super::page::{one, person, pick, Chrome, CITIES, FIRST};
use super::super::{Family, Spec};
use super::{field, form_site, posted, say};

const SWITCHES: &[&str] = &[
    "Email notifications",
    "Dark mode",
    "Two-factor authentication",
    "Auto-save",
    "Public profile",
    "Weekly digest",
    "Sound effects",
    "Location sharing",
];

/// Switches that flip `aria-checked` and keep a hidden input in step for the form.
const SWITCH_JS: &str = r#"
document.querySelectorAll('[role=switch]').forEach(s => s.addEventListener('click', () => {
  const on = s.getAttribute('aria-checked') !== 'true';
  s.setAttribute('aria-checked', on ? 'true' : 'false');
  document.getElementById(s.dataset.input).value = on ? 'on' : 'off';
}));
"#;

pub const SWITCH: Family = Family {
    name: "switches",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let switches = pick(rng, SWITCHES, 4..7);
        let state: Vec<bool> = switches.iter().map(|_| rng.bool()).collect();
        let on_i = state.iter().position(|s| !s);
        let off_i = state.iter().position(|s| *s);
        let (on, off) = match (on_i, off_i) {
            (Some(a), Some(b)) => (switches[a], switches[b]),
            _ => (switches[0], switches[1]),
        };
        let mut state = state;
        if on_i.is_none() || off_i.is_none() {
            state[0] = false;
            state[1] = true;
        }
        let button = one(rng, &["Save", "Save settings", "Apply"]);
        let goal = say(
            rng,
            &[
                format!("Turn on {on} and turn off {off}, then click {button}."),
                format!("Enable {on}, disable {off} and press {button}."),
                format!(
                    "Switch on {} and switch off {}, then click {button}.",
                    on.to_lowercase(),
                    off.to_lowercase()
                ),
            ],
        );
        let key = |s: &str| s.to_lowercase().replace([' ', '-'], "_");
        let page = chrome.page("Settings", html! {
            form method="post" action="save" {
                @for (s, st) in switches.iter().zip(&state) {
                    div style="margin:6px 0" {
                        input type="hidden" name=(key(s)) id={ "in-" (key(s)) } value=(if *st { "on" } else { "off" });
                        button type="button" role="switch" aria-checked=(if *st { "true" } else { "false" }) data-input={ "in-" (key(s)) } { (s) }
                    }
                }
                button type="submit" { (button) }
            }
            script { (PreEscaped(SWITCH_JS)) }
        });
        let want: Vec<(String, &str)> = switches
            .iter()
            .zip(&state)
            .map(|(s, st)| {
                (
                    key(s),
                    if *s == on {
                        "on"
                    } else if *s == off {
                        "off"
                    } else if *st {
                        "on"
                    } else {
                        "off"
                    },
                )
            })
            .collect();
        Spec {
            goal,
            start: String::new(),
            site: form_site(page, chrome, "save", "Saved."),
            check: Box::new(move |hits, _| {
                posted(hits, "save").is_some_and(|h| want.iter().all(|(k, v)| h.get(k) == Some(v)))
            }),
        }
    },
};

pub const SECTION_FIELD: Family = Family {
    name: "section-field",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let section = one(rng, &["Advanced", "More options", "Developer settings"]);
        let (label, name, value) = one(
            rng,
            &[
                ("Timeout", "timeout", "45"),
                ("Retry limit", "retries", "7"),
                ("Proxy host", "proxy", "proxy.example.net"),
                ("Log level", "log", "debug"),
            ],
        );
        let button = one(rng, &["Save", "Apply changes"]);
        let goal = say(
            rng,
            &[
                format!(
                    "Expand {section}, set the {} to {value} and click {button}.",
                    label.to_lowercase()
                ),
                format!(
                    "Open the {section} section, enter {value} as the {}, then press {button}.",
                    label.to_lowercase()
                ),
            ],
        );
        let page = chrome.page(
            "Connection",
            html! {
                form method="post" action="save" {
                    (field("Server", "server", "text", "api.example.org"))
                    details {
                        summary { (section) }
                        (field(label, name, "text", ""))
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
                posted(hits, "save").is_some_and(|h| {
                    h.get(name) == Some(value) && h.get("server") == Some("api.example.org")
                })
            }),
        }
    },
};

const DIALOG_FORM_JS: &str = r#"
const d = document.getElementById('add');
document.getElementById('open').addEventListener('click', () => d.showModal());
"#;

pub const DIALOG_FORM: Family = Family {
    name: "dialog-form",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let email = format!("{}@example.org", one(rng, FIRST).to_lowercase());
        let (opener, send) = one(
            rng,
            &[
                ("Add member", "Invite"),
                ("New contact", "Save contact"),
                ("Share", "Send invite"),
            ],
        );
        let goal = say(
            rng,
            &[
                format!("Click {opener}, enter {email} as the email and click {send}."),
                format!("Press {opener}, type {email} into the email field, then press {send}."),
            ],
        );
        let page = chrome.page(
            "Team",
            html! {
                ul { @for _ in 0..3 { li { (person(rng)) } } }
                button type="button" id="open" { (opener) }
                dialog id="add" aria-label=(opener) {
                    form method="post" action="add" {
                        (field("Email", "email", "email", ""))
                        (field("Note", "note", "text", ""))
                        button type="submit" { (send) }
                    }
                }
                script { (PreEscaped(DIALOG_FORM_JS)) }
            },
        );
        Spec {
            goal,
            start: String::new(),
            site: form_site(page, chrome, "add", "Added."),
            check: Box::new(move |hits, _| {
                posted(hits, "add").is_some_and(|h| h.get("email") == Some(email.as_str()))
            }),
        }
    },
};

pub const TWO_ADDRESSES: Family = Family {
    name: "two-addresses",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let cities = pick(rng, CITIES, 2..3);
        let (ship, bill) = (cities[0], cities[1]);
        let button = one(rng, &["Continue", "Save addresses"]);
        let goal = say(
            rng,
            &[
                format!("Set the shipping city to {ship} and the billing city to {bill}, then click {button}."),
                format!("Enter {ship} as the shipping city and {bill} as the billing city, and press {button}."),
            ],
        );
        let section = |title: &str, prefix: &str| {
            html! {
                fieldset {
                    legend { (title) }
                    label { "Street " input type="text" name={ (prefix) "_street" } value="Main Street 1"; }
                    label { "City " input type="text" name={ (prefix) "_city" }; }
                }
            }
        };
        let page = chrome.page(
            "Addresses",
            html! {
                form method="post" action="save" {
                    (section("Shipping address", "shipping"))
                    (section("Billing address", "billing"))
                    button type="submit" { (button) }
                }
            },
        );
        Spec {
            goal,
            start: String::new(),
            site: form_site(page, chrome, "save", "Saved."),
            check: Box::new(move |hits, _| {
                posted(hits, "save").is_some_and(|h| {
                    h.get("shipping_city") == Some(ship) && h.get("billing_city") == Some(bill)
                })
            }),
        }
    },
};

pub const RATING: Family = Family {
    name: "rating",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let stars = rng.u32(1..6);
        let product = one(
            rng,
            &["the blender", "the course", "your stay", "the delivery"],
        );
        let goal = say(
            rng,
            &[
                format!("Rate {product} {stars} stars and submit."),
                format!("Give {product} {stars} out of 5 stars, then click Submit review."),
                format!("Choose {stars} stars and click Submit review."),
            ],
        );
        let page = chrome.page("Leave a review", html! {
            form method="post" action="review" {
                fieldset {
                    legend { "Your rating" }
                    @for n in 1..=5u32 {
                        label { input type="radio" name="stars" value=(n); " " (n) (if n == 1 { " star" } else { " stars" }) }
                    }
                }
                (field("Comment (optional)", "comment", "textarea", ""))
                button type="submit" { "Submit review" }
            }
        });
        Spec {
            goal,
            start: String::new(),
            site: form_site(page, chrome, "review", "Thanks for your review."),
            check: Box::new(move |hits, _| {
                posted(hits, "review")
                    .is_some_and(|h| h.get("stars") == Some(stars.to_string().as_str()))
            }),
        }
    },
};
