//! Many items at a time: every message of one sender ticked and acted on together, or acted on
//! row by row where each row has its own buttons, and a list that shows its next items only
//! when asked for more.

use std::sync::{Arc, Mutex};

use maud::{html, PreEscaped};

use super::super::page::{one, pick, Chrome, FIRST, LAST, TOPICS};
use super::super::{Family, Hit, Reply, Spec};
use super::{form_site, posted, say, visited};

/// An inbox's rows, (sender, subject) in a seeded order: the first sender (returned) writes
/// two or three, the others one or two each; and the 1-based places of the first sender's rows.
/// `first` and `last` are how many first and last names the senders are made from.
fn mailbox(
    rng: &mut fastrand::Rng,
    first: std::ops::Range<usize>,
    last: std::ops::Range<usize>,
) -> (String, Vec<(String, String)>, Vec<String>) {
    let senders: Vec<String> = pick(rng, FIRST, first)
        .into_iter()
        .zip(pick(rng, LAST, last))
        .map(|(f, l)| format!("{f} {l}"))
        .collect();
    let who = senders[0].clone();
    let mut rows: Vec<(String, String)> = Vec::new();
    for (i, s) in senders.iter().enumerate() {
        let n = if i == 0 {
            rng.usize(2..4)
        } else {
            rng.usize(1..3)
        };
        for _ in 0..n {
            rows.push((
                s.clone(),
                format!("{} {}", one(rng, TOPICS), rng.u32(2..99)),
            ));
        }
    }
    rng.shuffle(&mut rows);
    let wanted = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| r.0 == who)
        .map(|(i, _)| (i + 1).to_string())
        .collect();
    (who, rows, wanted)
}

pub const BULK_SELECT: Family = Family {
    name: "bulk-select",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let (who, rows, wanted) = mailbox(rng, 3..5, 5..6);
        let verb = one(rng, &["archive", "delete", "read"]);
        let goal = say(
            rng,
            &match verb {
                "archive" => vec![
                    format!("Archive all the emails from {who}."),
                    format!("Select every message from {who} and archive them."),
                ],
                "delete" => vec![
                    format!("Delete all messages from {who}."),
                    format!("Select every email from {who} and delete them."),
                ],
                _ => vec![
                    format!("Mark all the messages from {who} as read."),
                    format!("Mark every email from {who} as read."),
                ],
            },
        );
        let labelled = rng.bool();
        let page = chrome.page(
            "Inbox",
            html! {
                form method="post" action="bulk" {
                    div role="toolbar" aria-label="Selected messages" {
                        button name="do" value="archive" { "Archive" } " "
                        button name="do" value="delete" { "Delete" } " "
                        button name="do" value="read" { "Mark as read" }
                    }
                    table {
                        thead { tr { th { "" } th { "From" } th { "Subject" } } }
                        tbody {
                            @for (i, (from, subject)) in rows.iter().enumerate() {
                                tr {
                                    td {
                                        @if labelled {
                                            input type="checkbox" name="id" value=(i + 1) aria-label={ "Select message from " (from) };
                                        } @else {
                                            input type="checkbox" name="id" value=(i + 1);
                                        }
                                    }
                                    td { (from) }
                                    td { (subject) }
                                }
                            }
                        }
                    }
                }
            },
        );
        Spec {
            goal,
            start: String::new(),
            site: form_site(page, chrome, "bulk", "Done."),
            check: Box::new(move |hits, _| {
                posted(hits, "bulk").is_some_and(|h| {
                    let mut ids = h.all("id");
                    ids.sort();
                    let mut want: Vec<&str> = wanted.iter().map(String::as_str).collect();
                    want.sort();
                    h.get("do") == Some(verb) && ids == want
                })
            }),
        }
    },
};

/// Opens the page's confirmation before a row's form is sent; its Delete sends it.
const CONFIRM_JS: &str = r#"
const dialog = document.getElementById('sure');
let pending = null;
document.querySelectorAll('form.row').forEach(f => f.addEventListener('submit', e => {
  if (e.submitter && e.submitter.value === 'delete' && f !== pending) {
    e.preventDefault();
    pending = f;
    document.getElementById('who').textContent = f.dataset.from;
    dialog.hidden = false;
  }
}));
document.getElementById('yes').addEventListener('click', () => {
  const button = pending.querySelector('button[value=delete]');
  pending.requestSubmit(button);
});
document.getElementById('no').addEventListener('click', () => {
  pending = null;
  dialog.hidden = true;
});
"#;

/// Every message of one sender acted on where each row has its own Archive and Delete (as
/// words, or as icons named only for assistive technology), and a deletion may ask "Are you
/// sure?" first; the inbox shows what is left after each.
pub const ROW_ACTIONS: Family = Family {
    name: "row-actions",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let (who, rows, wanted) = mailbox(rng, 3..4, 4..5);
        let verb = one(rng, &["archive", "delete"]);
        let goal = say(
            rng,
            &match verb {
                "archive" => vec![
                    format!("Archive all the emails from {who}."),
                    format!("Archive every message from {who}."),
                ],
                _ => vec![
                    format!("Delete all messages from {who}."),
                    format!("Delete every email from {who}."),
                    format!("Remove all the messages from {who}."),
                ],
            },
        );
        let icons = rng.bool();
        let asks = rng.bool();
        let gone: Arc<Mutex<Vec<usize>>> = Arc::default();
        let inbox = {
            let gone = gone.clone();
            let chrome = chrome.clone();
            move || {
                let gone = gone.lock().unwrap();
                chrome.page(
                    "Inbox",
                    html! {
                        table {
                            thead { tr { th { "From" } th { "Subject" } th { "" } } }
                            tbody {
                                @for (i, (from, subject)) in rows.iter().enumerate() {
                                    @if !gone.contains(&(i + 1)) {
                                        tr {
                                            td { (from) }
                                            td { (subject) }
                                            td {
                                                form.row method="post" action="act" data-from=(from) {
                                                    input type="hidden" name="id" value=(i + 1);
                                                    @if icons {
                                                        button name="do" value="archive" aria-label="Archive" { "🗄" } " "
                                                        button name="do" value="delete" aria-label="Delete" title="Delete" { "🗑" }
                                                    } @else {
                                                        button name="do" value="archive" { "Archive" } " "
                                                        button name="do" value="delete" { "Delete" }
                                                    }
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                        @if asks {
                            div #sure role="dialog" aria-modal="true" aria-labelledby="sure-title" hidden {
                                p #sure-title { "Delete this message from " span #who {} "? This cannot be undone." }
                                button #no type="button" { "Cancel" } " "
                                button #yes type="button" { "Delete" }
                            }
                            script { (PreEscaped(CONFIRM_JS)) }
                        }
                    },
                )
            }
        };
        Spec {
            goal,
            start: String::new(),
            site: Box::new(move |hit| match hit.path.as_str() {
                "" => Reply::Page(inbox()),
                "act" if hit.post => {
                    if let Some(id) = hit.get("id").and_then(|i| i.parse().ok()) {
                        gone.lock().unwrap().push(id);
                    }
                    Reply::Redirect(String::new())
                }
                _ => Reply::NotFound,
            }),
            check: Box::new(move |hits, _| {
                let acted: Vec<&Hit> = hits.iter().filter(|h| h.post && h.path == "act").collect();
                let mut ids: Vec<&str> = acted.iter().filter_map(|h| h.get("id")).collect();
                ids.sort();
                let mut want: Vec<&str> = wanted.iter().map(String::as_str).collect();
                want.sort();
                acted.iter().all(|h| h.get("do") == Some(verb)) && ids == want
            }),
        }
    },
};

/// A list that shows its items a few at a time: its button adds the next ones from the page's
/// own data, and goes away when none are left.
const MORE_JS: &str = r#"
const list = document.getElementById('items');
const rest = JSON.parse(document.getElementById('rest').textContent);
const more = document.getElementById('more');
more.addEventListener('click', () => {
  rest.splice(0, +more.dataset.batch).forEach(t => {
    const a = document.createElement('a');
    a.href = 'article?title=' + encodeURIComponent(t);
    a.textContent = t;
    list.appendChild(document.createElement('li')).appendChild(a);
  });
  if (!rest.length) more.remove();
});
"#;

pub const LOAD_MORE: Family = Family {
    name: "load-more",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let label = one(
            rng,
            &[
                "Load more",
                "Show more",
                "More results",
                "See more articles",
            ],
        );
        let mut titles: Vec<String> = Vec::new();
        while titles.len() < 20 {
            let t = format!("{} {}", one(rng, TOPICS), rng.u32(2..99));
            if !titles.contains(&t) {
                titles.push(t);
            }
        }
        let batch = 6;
        let target = titles[rng.usize(batch..20)].clone();
        let goal = say(
            rng,
            &[
                format!("Open the article \"{target}\"."),
                format!("Find \"{target}\" in the list and open it."),
                format!("Go to the article titled \"{target}\"."),
            ],
        );
        let rest = serde_json::to_string(&titles[batch..]).unwrap_or_default();
        let page = chrome.page(
            "Latest articles",
            html! {
                ul id="items" {
                    @for t in &titles[..batch] {
                        li { a href={ "article?title=" (t.replace(' ', "+")) } { (t) } }
                    }
                }
                button type="button" id="more" data-batch=(batch) { (label) }
                script type="application/json" id="rest" { (PreEscaped(rest)) }
                script { (PreEscaped(MORE_JS)) }
            },
        );
        let c = chrome.clone();
        let t = target.clone();
        Spec {
            goal,
            start: String::new(),
            site: Box::new(move |hit| match hit.path.as_str() {
                "" => Reply::Page(page.clone()),
                "article" => Reply::Page(c.page(
                    hit.get("title").unwrap_or(""),
                    html! { p { "Lorem ipsum." } },
                )),
                _ => Reply::NotFound,
            }),
            check: Box::new(move |hits, _| {
                visited(hits, "article")
                    && hits
                        .iter()
                        .filter(|h| h.path == "article")
                        .all(|h| h.get("title") == Some(t.as_str()))
            }),
        }
    },
};
