//! Records shown side by side: a cell of a person's row read back, the cheapest or dearest of a
//! list, a row deleted through its confirmation, and one post of a feed liked or shared.

use maud::{html, PreEscaped};

use super::super::page::{one, pick, price, Chrome, CITIES, FIRST, LAST, THINGS, TOPICS};
use super::super::{answer_holds, Family, Reply, Spec};
use super::{say, static_page, thanks};

/// Distinct full names, as many as `n`.
fn people(rng: &mut fastrand::Rng, n: usize) -> Vec<String> {
    let mut first = FIRST.to_vec();
    let mut last = LAST.to_vec();
    rng.shuffle(&mut first);
    rng.shuffle(&mut last);
    first
        .iter()
        .zip(&last)
        .take(n)
        .map(|(f, l)| format!("{f} {l}"))
        .collect()
}

pub const TABLE_LOOKUP: Family = Family {
    name: "table-lookup",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let n = rng.usize(4..8);
        let names = people(rng, n);
        let rows: Vec<[String; 4]> = names
            .iter()
            .map(|p| {
                let (f, l) = p.split_once(' ').unwrap_or((p, p));
                [
                    format!("{}.{}@example.org", f.to_lowercase(), l.to_lowercase()),
                    format!(
                        "+44 20 7{:03} {:04}",
                        rng.u32(100..999),
                        rng.u32(1000..9999)
                    ),
                    one(rng, CITIES).to_owned(),
                    one(rng, &["Finance", "Research", "Support", "Legal", "Sales"]).to_owned(),
                ]
            })
            .collect();
        let at = rng.usize(..n);
        let who = &names[at];
        let column = rng.usize(..4);
        let goal = say(
            rng,
            &match column {
                0 => vec![
                    format!("What is {who}'s email address?"),
                    format!("What's the email of {who}?"),
                ],
                1 => vec![
                    format!("What is {who}'s phone number?"),
                    format!("Find the phone number of {who}."),
                ],
                2 => vec![
                    format!("Which city is {who} in?"),
                    format!("What office city does {who} work from?"),
                ],
                _ => vec![
                    format!("Which department is {who} in?"),
                    format!("What department does {who} work in?"),
                ],
            },
        );
        let value = rows[at][column].clone();
        let page = chrome.page(
            "Contacts",
            html! {
                table {
                    thead { tr { th { "Name" } th { "Email" } th { "Phone" } th { "City" } th { "Department" } } }
                    tbody {
                        @for (p, r) in names.iter().zip(&rows) {
                            tr { td { (p) } @for c in r { td { (c) } } }
                        }
                    }
                }
            },
        );
        Spec {
            goal,
            start: String::new(),
            site: static_page(page),
            check: Box::new(move |_, answer| answer_holds(answer, &value)),
        }
    },
};

pub const EXTREME: Family = Family {
    name: "cheapest",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let things = pick(rng, THINGS, 4..8);
        let mut prices: Vec<String> = Vec::new();
        while prices.len() < things.len() {
            let p = price(rng);
            if !prices.contains(&p) {
                prices.push(p);
            }
        }
        let cents = |p: &str| -> u32 {
            let n = p.trim_end_matches(" EUR").replace('.', "");
            n.parse().unwrap_or(0)
        };
        let cheapest = (0..things.len())
            .min_by_key(|&i| cents(&prices[i]))
            .unwrap_or(0);
        let dearest = (0..things.len())
            .max_by_key(|&i| cents(&prices[i]))
            .unwrap_or(0);
        let (goal, value) = match rng.usize(..4) {
            0 => (
                "Which product is the cheapest?".to_owned(),
                things[cheapest].to_owned(),
            ),
            1 => (
                "Which item costs the least?".to_owned(),
                things[cheapest].to_owned(),
            ),
            2 => (
                "Which product is the most expensive?".to_owned(),
                things[dearest].to_owned(),
            ),
            _ => (
                "What does the cheapest item cost?".to_owned(),
                prices[cheapest].clone(),
            ),
        };
        let page = chrome.page(
            "Products",
            html! {
                ul style="list-style:none" {
                    @for (t, p) in things.iter().zip(&prices) {
                        li style="margin:6px 0" { strong { (t) } " — " span { (p) } " " button type="button" { "Add to cart" } }
                    }
                }
            },
        );
        Spec {
            goal,
            start: String::new(),
            site: static_page(page),
            check: Box::new(move |_, answer| answer_holds(answer, &value)),
        }
    },
};

const PROJECTS: &[&str] = &[
    "Apollo", "Borealis", "Cobalt", "Delta", "Ember", "Falcon", "Granite", "Harbor", "Indigo",
    "Juniper",
];

/// Each row's Delete opens one confirmation, which sends the row's project when confirmed.
const CONFIRM_JS: &str = r#"
const dialog = document.getElementById('confirm');
document.querySelectorAll('[data-project]').forEach(b => b.addEventListener('click', () => {
  document.getElementById('confirm-project').value = b.dataset.project;
  document.getElementById('confirm-text').textContent =
    'Delete the project ' + b.dataset.project + '? This cannot be undone.';
  dialog.hidden = false;
}));
document.getElementById('confirm-cancel').addEventListener('click', () => { dialog.hidden = true; });
"#;

pub const DELETE_CONFIRM: Family = Family {
    name: "delete-confirm",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let projects = pick(rng, PROJECTS, 3..7);
        let owners: Vec<String> = projects
            .iter()
            .map(|_| format!("{} {}", one(rng, FIRST), one(rng, LAST)))
            .collect();
        let project = projects[rng.usize(..projects.len())];
        let goal = say(
            rng,
            &[
                format!("Delete the {project} project."),
                format!("Remove the project {project}."),
                format!("Delete project {project} and confirm."),
            ],
        );
        let page = chrome.page(
            "Projects",
            html! {
                ul style="list-style:none" {
                    @for (p, o) in projects.iter().zip(&owners) {
                        li style="margin:6px 0" {
                            strong { (p) } " — owner " (o) " "
                            button type="button" { "Open" } " "
                            button type="button" data-project=(p) { "Delete" }
                        }
                    }
                }
                div id="confirm" role="dialog" aria-modal="true" aria-labelledby="confirm-text" hidden
                    style="position:fixed;top:30%;left:30%;background:#fff;border:2px solid #333;padding:16px" {
                    p id="confirm-text" {}
                    form method="post" action="delete" {
                        input type="hidden" name="project" id="confirm-project";
                        button type="button" id="confirm-cancel" { "Cancel" } " "
                        button type="submit" { "Delete" }
                    }
                }
                script { (PreEscaped(CONFIRM_JS)) }
            },
        );
        let site_chrome = chrome.clone();
        Spec {
            goal,
            start: String::new(),
            site: Box::new(move |hit| match hit.path.as_str() {
                "" => Reply::Page(page.clone()),
                "delete" => thanks(&site_chrome, "The project was deleted."),
                _ => Reply::NotFound,
            }),
            check: Box::new(move |hits, _| {
                let deletes: Vec<_> = hits
                    .iter()
                    .filter(|h| h.post && h.path == "delete")
                    .collect();
                deletes.len() == 1 && deletes[0].get("project") == Some(project)
            }),
        }
    },
};

pub const FEED: Family = Family {
    name: "feed",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let n = rng.usize(3..7);
        let authors = people(rng, n);
        let texts: Vec<String> = (0..n)
            .map(|_| {
                format!(
                    "{}: {}",
                    one(rng, TOPICS),
                    one(
                        rng,
                        &[
                            "notes are up on the wiki.",
                            "who is in for Thursday?",
                            "thanks everyone for the help!",
                            "slides attached, comments welcome.",
                            "moved to next week.",
                        ]
                    )
                )
            })
            .collect();
        let at = rng.usize(..n);
        let who = authors[at].clone();
        let (action, verb) = one(rng, &[("like", "Like"), ("share", "Share")]);
        let goal = say(
            rng,
            &[
                format!("{verb} {who}'s post."),
                format!("{verb} the post by {who}."),
                format!("{verb} the post from {who}."),
            ],
        );
        let page = chrome.page(
            "Feed",
            html! {
                @for (i, (a, t)) in authors.iter().zip(&texts).enumerate() {
                    article style="border:1px solid #ccc;margin:8px 0;padding:8px" {
                        h3 { (a) }
                        p { (t) }
                        form method="post" action="like" style="display:inline" {
                            input type="hidden" name="post" value=(i);
                            button type="submit" { "Like" }
                        }
                        " " button type="button" { "Reply" } " "
                        form method="post" action="share" style="display:inline" {
                            input type="hidden" name="post" value=(i);
                            button type="submit" { "Share" }
                        }
                    }
                }
            },
        );
        let site_chrome = chrome.clone();
        let post = at.to_string();
        Spec {
            goal,
            start: String::new(),
            site: Box::new(move |hit| match hit.path.as_str() {
                "" => Reply::Page(page.clone()),
                "like" | "share" => thanks(&site_chrome, "Done."),
                _ => Reply::NotFound,
            }),
            check: Box::new(move |hits, _| {
                let sent: Vec<_> = hits
                    .iter()
                    .filter(|h| h.post && (h.path == "like" || h.path == "share"))
                    .collect();
                sent.len() == 1
                    && sent[0].path == action
                    && sent[0].get("post") == Some(post.as_str())
            }),
        }
    },
};
