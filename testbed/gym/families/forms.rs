//! Typing given values into named fields, and signing in.

use maud::html;

use super::super::page::{one, person, pick, Chrome, CITIES, FIRST, LAST};
use super::super::{Family, Reply, Spec};
use super::{field, form_site, posted, say, thanks, value};

const PROFILE: &[(&str, &str)] = &[
    ("Display name", "display_name"),
    ("Job title", "job_title"),
    ("Company", "company"),
    ("City", "city"),
    ("Website", "website"),
    ("Nickname", "nickname"),
    ("Department", "department"),
];
const JOBS: &[&str] = &[
    "Senior designer",
    "Data analyst",
    "Head of sales",
    "Nurse",
    "Teacher",
];
const COMPANIES: &[&str] = &[
    "Globex",
    "Initech",
    "Umbrella Labs",
    "Stark Freight",
    "Wayne Media",
];

fn profile_value(rng: &mut fastrand::Rng, name: &str) -> String {
    match name {
        "display_name" => person(rng),
        "job_title" => one(rng, JOBS).to_owned(),
        "company" => one(rng, COMPANIES).to_owned(),
        "city" => one(rng, CITIES).to_owned(),
        "website" => format!("https://{}.example.org", one(rng, LAST).to_lowercase()),
        "nickname" => one(rng, FIRST).to_lowercase(),
        _ => one(rng, &["Finance", "Research", "Support", "Legal"]).to_owned(),
    }
}

pub const TYPE_TEXT: Family = Family {
    name: "type-text",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let fields = pick(rng, PROFILE, 3..6);
        let current: Vec<String> = fields.iter().map(|f| profile_value(rng, f.1)).collect();
        let asked: Vec<(String, String, String)> = fields[..2]
            .iter()
            .map(|(label, name)| {
                let mut v = profile_value(rng, name);
                while current.contains(&v) {
                    v = profile_value(rng, name);
                }
                (label.to_string(), name.to_string(), v)
            })
            .collect();
        let button = one(rng, &["Save", "Save changes", "Update profile"]);
        let (a, b) = (&asked[0], &asked[1]);
        let (la, lb) = (a.0.to_lowercase(), b.0.to_lowercase());
        let (va, vb) = (value(rng, &a.2), value(rng, &b.2));
        let goal = say(
            rng,
            &[
                format!("Set the {la} to {va}, set the {lb} to {vb}, then click {button}."),
                format!("Change my {la} to {va} and my {lb} to {vb}, then press {button}."),
                format!("Enter {va} as the {la} and {vb} as the {lb}, then click {button}."),
                format!(
                    "Type {va} into the {} field, type {vb} into {}, and press {button}.",
                    a.0, b.0
                ),
            ],
        );
        let form = html! {
            form method="post" action="save" {
                @for ((label, name), v) in fields.iter().zip(&current) { (field(label, name, "text", v)) }
                button type="button" { "Cancel" }
                " " button type="submit" { (button) }
            }
        };
        let page = chrome.page("Your profile", form);
        let want: Vec<(String, String)> =
            asked.iter().map(|a| (a.1.clone(), a.2.clone())).collect();
        let keep: Vec<(String, String)> = fields
            .iter()
            .zip(&current)
            .skip(2)
            .map(|(f, v)| (f.1.to_owned(), v.clone()))
            .collect();
        Spec {
            goal,
            start: String::new(),
            site: form_site(page, chrome, "save", "Your profile was saved."),
            check: Box::new(move |hits, _| {
                posted(hits, "save").is_some_and(|h| {
                    want.iter()
                        .chain(&keep)
                        .all(|(k, v)| h.get(k) == Some(v.as_str()))
                })
            }),
        }
    },
};

pub const FIELD_KINDS: Family = Family {
    name: "field-kinds",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let email = format!(
            "{}.{}@example.org",
            one(rng, FIRST).to_lowercase(),
            one(rng, LAST).to_lowercase()
        );
        let all: Vec<(&str, &str, &str, String)> = vec![
            ("Email", "email", "email", email),
            ("Guests", "guests", "number", rng.u32(2..9).to_string()),
            (
                "Arrival date",
                "arrival",
                "date",
                format!("2027-{:02}-{:02}", rng.u32(1..13), rng.u32(1..29)),
            ),
            (
                "Arrival time",
                "time",
                "time",
                format!(
                    "{:02}:{}",
                    rng.u32(8..21),
                    one(rng, &["00", "15", "30", "45"])
                ),
            ),
            (
                "Phone",
                "phone",
                "tel",
                format!("+351 9{}", rng.u32(10_000_000..99_999_999)),
            ),
        ];
        let mut fields = all.clone();
        rng.shuffle(&mut fields);
        let asked: Vec<_> = fields[..3].to_vec();
        let list = asked
            .iter()
            .map(|f| format!("{}: {}", f.0.to_lowercase(), f.3))
            .collect::<Vec<_>>();
        let button = one(rng, &["Book", "Submit", "Reserve", "Send request"]);
        let goal = say(
            rng,
            &[
                format!(
                    "Fill in the booking form with {}, {} and {}, then submit it.",
                    list[0], list[1], list[2]
                ),
                format!(
                    "Fill the form with {}, {} and {}, and click {button}.",
                    list[0], list[1], list[2]
                ),
            ],
        );
        let form = html! {
            form method="post" action="book" {
                @for f in &fields { (field(f.0, f.1, f.2, "")) }
                button type="submit" { (button) }
            }
        };
        let page = chrome.page("Book a table", form);
        Spec {
            goal,
            start: String::new(),
            site: form_site(page, chrome, "book", "Booking received."),
            check: Box::new(move |hits, _| {
                posted(hits, "book")
                    .is_some_and(|h| asked.iter().all(|f| h.get(f.1) == Some(f.3.as_str())))
            }),
        }
    },
};

const NOTES: &[&str] = &[
    "Please leave the parcel with the neighbour at number 12.",
    "The invoice address changed to our new office; please update it.",
    "Could you call me back after five o'clock on weekdays?",
    "I would like to move my appointment to next week if possible.",
    "The blue model arrived damaged; I would like a replacement.",
];

pub const TEXTAREA: Family = Family {
    name: "textarea",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let note = one(rng, NOTES);
        let name = person(rng);
        let boxes = pick(
            rng,
            &[
                ("Message", "message"),
                ("Delivery notes", "notes"),
                ("Comment", "comment"),
            ],
            2..3,
        );
        let target = boxes[0];
        let button = one(rng, &["Send", "Send message", "Post"]);
        let goal = say(
            rng,
            &[
                format!(
                    "Write \"{note}\" in the {} box, with {name} as the name, and click {button}.",
                    target.0.to_lowercase()
                ),
                format!(
                    "Type \"{note}\" into {}, enter \"{name}\" as the name, then press {button}.",
                    target.0
                ),
            ],
        );
        let form = html! {
            form method="post" action="send" {
                (field("Name", "name", "text", ""))
                @for b in &boxes { (field(b.0, b.1, "textarea", "")) }
                button type="submit" { (button) }
            }
        };
        let page = chrome.page("Write to us", form);
        let key = target.1;
        Spec {
            goal,
            start: String::new(),
            site: form_site(page, chrome, "send", "Message sent."),
            check: Box::new(move |hits, _| {
                posted(hits, "send").is_some_and(|h| {
                    h.get(key).map(str::trim) == Some(note) && h.get("name") == Some(name.as_str())
                })
            }),
        }
    },
};

fn password(rng: &mut fastrand::Rng) -> String {
    format!(
        "{}-{}{}",
        one(rng, &["maple", "orbit", "cobalt", "tundra", "saffron"]),
        rng.u32(10..99),
        one(rng, &["!", "#", "%"])
    )
}

pub const SIGN_IN: Family = Family {
    name: "sign-in",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let user = format!("{}{}", one(rng, FIRST).to_lowercase(), rng.u32(1..99));
        let pass = password(rng);
        let (user_label, button) = (
            one(rng, &["Username", "User name", "Login"]),
            one(rng, &["Sign in", "Log in", "Continue"]),
        );
        let goal = say(
            rng,
            &[
                format!("Sign in as {user} with password \"{pass}\"."),
                format!("Log in with username {user} and password \"{pass}\"."),
                format!("Sign in using the username {user} and the password \"{pass}\"."),
            ],
        );
        let form = html! {
            form method="post" action="login" {
                (field(user_label, "user", "text", ""))
                (field("Password", "pass", "password", ""))
                a href="#forgot" { "Forgot your password?" }
                " " button type="submit" { (button) }
            }
            p { a href="#register" { "Create an account" } }
        };
        let page = chrome.page("Welcome back", form);
        let (u, p) = (user.clone(), pass.clone());
        Spec {
            goal,
            start: String::new(),
            site: Box::new(move |hit| match hit.path.as_str() {
                "" => Reply::Page(page.clone()),
                "login"
                    if hit.get("user") == Some(u.as_str())
                        && hit.get("pass") == Some(p.as_str()) =>
                {
                    thanks(&chrome, "You are signed in.")
                }
                "login" => Reply::Page(chrome.page(
                    "Welcome back",
                    html! { p role="alert" { "Wrong username or password." } },
                )),
                _ => Reply::NotFound,
            }),
            check: Box::new(move |hits, _| {
                posted(hits, "login").is_some_and(|h| {
                    h.get("user") == Some(user.as_str()) && h.get("pass") == Some(pass.as_str())
                })
            }),
        }
    },
};

pub const SIGN_IN_TWO_STEP: Family = Family {
    name: "sign-in-two-step",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let email = format!("{}@example.net", one(rng, FIRST).to_lowercase());
        let pass = password(rng);
        let next = one(rng, &["Next", "Continue"]);
        let button = one(rng, &["Sign in", "Log in"]);
        let goal = say(
            rng,
            &[
                format!("Sign in with email {email} and password \"{pass}\"."),
                format!("Log in as {email} using the password \"{pass}\"."),
            ],
        );
        let first = chrome.page(
            "Sign in",
            html! {
                form method="post" action="identify" {
                    (field("Email address", "email", "email", ""))
                    button type="submit" { (next) }
                }
            },
        );
        let c2 = chrome.clone();
        let (e, p) = (email.clone(), pass.clone());
        Spec {
            goal,
            start: String::new(),
            site: Box::new(move |hit| match hit.path.as_str() {
                "" => Reply::Page(first.clone()),
                "identify" if hit.get("email") == Some(e.as_str()) => Reply::Page(c2.page(
                    "Enter your password",
                    html! {
                        p { "Signing in as " (e) }
                        form method="post" action="login" {
                            input type="hidden" name="email" value=(e);
                            (field("Password", "pass", "password", ""))
                            button type="submit" { (button) }
                        }
                    },
                )),
                "identify" => Reply::Page(first.clone()),
                "login" if hit.get("pass") == Some(p.as_str()) => thanks(&c2, "You are signed in."),
                "login" => Reply::Page(c2.page(
                    "Enter your password",
                    html! { p role="alert" { "Wrong password." } },
                )),
                _ => Reply::NotFound,
            }),
            check: Box::new(move |hits, _| {
                posted(hits, "login").is_some_and(|h| {
                    h.get("email") == Some(email.as_str()) && h.get("pass") == Some(pass.as_str())
                })
            }),
        }
    },
};
