//! Finding the thing to act on: in a closed section, a tree, a long list, search results, later
//! pages of a list, a table's rows.

use maud::{html, PreEscaped};

use super::super::page::{one, person, pick, Chrome, THINGS, TOPICS};
use super::super::{Family, Reply, Spec};
use super::{form_site, say};

const SECTIONS: &[&str] = &[
    "Shipping",
    "Returns",
    "Payments",
    "Warranty",
    "Accounts",
    "Gift cards",
];

pub const EXPAND: Family = Family {
    name: "expand",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let sections = pick(rng, SECTIONS, 3..6);
        let target = one(rng, &sections);
        let link = one(
            rng,
            &["Download the guide", "Contact the team", "Read the policy"],
        );
        let goal = say(
            rng,
            &[
                format!("Expand the {target} section and click {link}."),
                format!("Open {target}, then click {link} inside it."),
                format!("In the help page, expand {target} and follow {link}."),
            ],
        );
        let page = chrome.page(
            "Help",
            html! {
                @for s in &sections {
                    details {
                        summary { (s) }
                        p { "Everything about " (s.to_lowercase()) "." }
                        a href={ "guide?section=" (s) } { (link) }
                    }
                }
            },
        );
        let c = chrome.clone();
        Spec {
            goal,
            start: String::new(),
            site: Box::new(move |hit| match hit.path.as_str() {
                "" => Reply::Page(page.clone()),
                "guide" => Reply::Page(c.page("Guide", html! { p { "The guide." } })),
                _ => Reply::NotFound,
            }),
            check: Box::new(move |hits, _| {
                let opened: Vec<_> = hits.iter().filter(|h| h.path == "guide").collect();
                opened.len() == 1 && opened[0].get("section") == Some(target)
            }),
        }
    },
};

const FOLDERS: &[&str] = &[
    "Projects",
    "Invoices",
    "Photos",
    "Contracts",
    "Archive",
    "Drafts",
];
const FILES: &[&str] = &[
    "notes.txt",
    "summary.pdf",
    "budget.xlsx",
    "plan.docx",
    "photo.jpg",
    "readme.md",
];

const TREE_JS: &str = r#"
document.querySelectorAll('[role=treeitem][aria-expanded]').forEach(t => t.addEventListener('click', e => {
  if (e.target.closest('[role=group]')) return;
  const open = t.getAttribute('aria-expanded') !== 'true';
  t.setAttribute('aria-expanded', open ? 'true' : 'false');
  t.querySelector('[role=group]').hidden = !open;
}));
"#;

pub const TREE: Family = Family {
    name: "tree",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let folders = pick(rng, FOLDERS, 3..5);
        let contents: Vec<Vec<&str>> = folders.iter().map(|_| pick(rng, FILES, 2..4)).collect();
        let at = rng.usize(..folders.len());
        let folder = folders[at];
        let file = one(rng, &contents[at]);
        let goal = say(
            rng,
            &[
                format!("Open {file} in the {folder} folder."),
                format!("Expand {folder} and open {file}."),
            ],
        );
        let page = chrome.page("Files", html! {
            ul role="tree" aria-label="Files" {
                @for (f, files) in folders.iter().zip(&contents) {
                    li role="treeitem" aria-expanded="false" {
                        span { (f) }
                        ul role="group" hidden {
                            @for x in files { li role="treeitem" { a href={ "open?folder=" (f) "&file=" (x) } { (x) } } }
                        }
                    }
                }
            }
            script { (PreEscaped(TREE_JS)) }
        });
        let c = chrome.clone();
        Spec {
            goal,
            start: String::new(),
            site: Box::new(move |hit| match hit.path.as_str() {
                "" => Reply::Page(page.clone()),
                "open" => Reply::Page(c.page("File", html! { p { "Preview unavailable." } })),
                _ => Reply::NotFound,
            }),
            check: Box::new(move |hits, _| {
                let opened: Vec<_> = hits.iter().filter(|h| h.path == "open").collect();
                opened.len() == 1
                    && opened[0].get("folder") == Some(folder)
                    && opened[0].get("file") == Some(file)
            }),
        }
    },
};

pub const SCROLL: Family = Family {
    name: "scroll",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let people: Vec<String> = (0..60)
            .map(|_| person(rng))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let mut people = people;
        rng.shuffle(&mut people);
        let target = people[rng.usize(people.len() * 2 / 3..people.len())].clone();
        let button = one(rng, &["Invite", "Select", "Add"]);
        let goal = say(
            rng,
            &[
                format!("Click {button} next to {target}."),
                format!("Find {target} in the list and click {button} for them."),
                format!("{button} {target}."),
            ],
        );
        let page = chrome.page(
            "People",
            html! {
                p { "Everyone in your organisation." }
                ul {
                    @for p in &people {
                        li style="padding:10px 0" {
                            span { (p) } " "
                            form method="post" action="pick" style="display:inline" {
                                input type="hidden" name="who" value=(p);
                                button type="submit" { (button) }
                            }
                        }
                    }
                }
            },
        );
        let t = target.clone();
        Spec {
            goal,
            start: String::new(),
            site: form_site(page, chrome, "pick", "Done."),
            check: Box::new(move |hits, _| {
                let picks: Vec<_> = hits.iter().filter(|h| h.post && h.path == "pick").collect();
                picks.len() == 1 && picks[0].get("who") == Some(t.as_str())
            }),
        }
    },
};

const ORDINALS: &[(&str, usize)] = &[
    ("first", 1),
    ("second", 2),
    ("third", 3),
    ("4th", 4),
    ("last", 6),
];

pub const SEARCH_NTH: Family = Family {
    name: "search-nth",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let query = one(rng, THINGS).to_lowercase();
        let (word, n) = one(rng, ORDINALS);
        let variants = [
            "classic", "pro", "lite", "deluxe", "mini", "travel", "eco", "XL",
        ];
        let results: Vec<String> = pick(rng, &variants, 6..7)
            .iter()
            .map(|v| format!("{query} {v}"))
            .collect();
        let expected = results[n - 1].clone();
        let goal = say(
            rng,
            &[
                format!("Search for {query} and open the {word} result."),
                format!("Search for \"{query}\", then open the {word} result."),
            ],
        );
        let c = chrome.clone();
        let search = html! {
            form method="get" action="search" role="search" {
                input type="search" name="q" aria-label="Search";
                button type="submit" { "Search" }
            }
        };
        let home = chrome.page("Shop", html! { (search) p { "Popular this week: " a href="item?name=gift+card" { "gift card" } } });
        let q = query.clone();
        Spec {
            goal,
            start: String::new(),
            site: Box::new(move |hit| match hit.path.as_str() {
                "" => Reply::Page(home.clone()),
                "search" => {
                    let asked = hit.get("q").unwrap_or("").trim().to_lowercase();
                    let list: Vec<&String> = if asked == q {
                        results.iter().collect()
                    } else {
                        Vec::new()
                    };
                    Reply::Page(c.page("Search results", html! {
                        (search)
                        p { (list.len()) " results for “" (asked) "”" }
                        ol { @for r in &list { li { a href={ "item?name=" (r.replace(' ', "+")) } { (r) } " — in stock" } } }
                    }))
                }
                "item" => Reply::Page(c.page(
                    hit.get("name").unwrap_or(""),
                    html! { p { "A fine product." } },
                )),
                _ => Reply::NotFound,
            }),
            check: Box::new(move |hits, _| {
                hits.iter()
                    .filter(|h| h.path == "item")
                    .map(|h| h.get("name"))
                    .collect::<Vec<_>>()
                    == [Some(expected.as_str())]
            }),
        }
    },
};

pub const PAGINATION: Family = Family {
    name: "pagination",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let mut titles: Vec<String> = Vec::new();
        while titles.len() < 32 {
            let t = format!("{} {}", one(rng, TOPICS), rng.u32(2..99));
            if !titles.contains(&t) {
                titles.push(t);
            }
        }
        let target = titles[rng.usize(8..32)].clone();
        let goal = say(
            rng,
            &[
                format!("Open the article \"{target}\"."),
                format!("Find \"{target}\" in the list and open it."),
                format!("Go to the article titled \"{target}\"."),
            ],
        );
        let c = chrome.clone();
        let t = target.clone();
        Spec {
            goal,
            start: "list".into(),
            site: Box::new(move |hit| match hit.path.as_str() {
                "list" => {
                    let page: usize = hit
                        .get("page")
                        .and_then(|p| p.parse().ok())
                        .unwrap_or(1)
                        .clamp(1, 4);
                    let items = &titles[(page - 1) * 8..page * 8];
                    Reply::Page(c.page("Articles", html! {
                        ul { @for i in items { li { a href={ "article?title=" (i.replace(' ', "+")) } { (i) } } } }
                        nav aria-label="Pages" {
                            @if page > 1 { a href={ "list?page=" (page - 1) } { "Previous" } " " }
                            @for p in 1..=4 { @if p == page { span { (p) } } @else { a href={ "list?page=" (p) } { (p) } } " " }
                            @if page < 4 { a href={ "list?page=" (page + 1) } { "Next" } }
                        }
                    }))
                }
                "article" => Reply::Page(c.page(
                    hit.get("title").unwrap_or(""),
                    html! { p { "Lorem ipsum." } },
                )),
                _ => Reply::NotFound,
            }),
            check: Box::new(move |hits, _| {
                hits.iter()
                    .filter(|h| h.path == "article")
                    .map(|h| h.get("title"))
                    .collect::<Vec<_>>()
                    == [Some(t.as_str())]
            }),
        }
    },
};

pub const TABLE_ROW: Family = Family {
    name: "table-row",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let mut names: Vec<String> = Vec::new();
        while names.len() < rng.usize(5..9) {
            let n = person(rng);
            if !names.contains(&n) {
                names.push(n);
            }
        }
        let target = one(rng, &names);
        let action = one(rng, &["Edit", "Delete", "Suspend"]);
        let goal = say(
            rng,
            &[
                format!("{action} the row for {target}."),
                format!("Click {action} in the row for {target}."),
                format!("{action} {target}."),
            ],
        );
        let page = chrome.page("Users", html! {
            table {
                thead { tr { th { "Name" } th { "Role" } th { "Actions" } } }
                tbody {
                    @for (i, n) in names.iter().enumerate() {
                        tr {
                            td { (n) }
                            td { (["Admin", "Editor", "Viewer"][i % 3]) }
                            td {
                                form method="post" action="row" {
                                    input type="hidden" name="id" value=(n);
                                    button type="submit" name="do" value="Edit" { "Edit" } " "
                                    button type="submit" name="do" value="Delete" { "Delete" } " "
                                    button type="submit" name="do" value="Suspend" { "Suspend" }
                                }
                            }
                        }
                    }
                }
            }
        });
        let t = target.clone();
        Spec {
            goal,
            start: String::new(),
            site: form_site(page, chrome, "row", "Done."),
            check: Box::new(move |hits, _| {
                let rows: Vec<_> = hits.iter().filter(|h| h.post && h.path == "row").collect();
                rows.len() == 1
                    && rows[0].get("id") == Some(t.as_str())
                    && rows[0].get("do") == Some(action)
            }),
        }
    },
};
