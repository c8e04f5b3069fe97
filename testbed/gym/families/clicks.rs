//! Pressing a named control: buttons, links, icons known only by their accessible name, tabs,
//! menus and dialogs.

use maud::{html, PreEscaped};

use super::super::page::{one, pick, Chrome};
use super::super::{Family, Reply, Spec};
use super::{form_site, posted, say, visited};

const ACTIONS: &[&str] = &[
    "Archive",
    "Export",
    "Duplicate",
    "Share",
    "Print",
    "Refresh",
    "Publish",
    "Preview",
    "Rename",
    "Move",
    "Download",
    "Subscribe",
];

pub const BUTTON: Family = Family {
    name: "click-button",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let buttons = pick(rng, ACTIONS, 4..8);
        let target = one(rng, &buttons);
        let goal = say(
            rng,
            &[
                format!("Click {target}."),
                format!("Press the {target} button."),
                format!("Hit {target}"),
                format!("Please click on the \"{target}\" button"),
            ],
        );
        let page = chrome.page(
            "Document 42",
            html! {
                p { "Quarterly figures, draft 3. Last edited yesterday." }
                div role="toolbar" {
                    @for b in &buttons {
                        form method="post" action="act" style="display:inline" {
                            button type="submit" name="action" value=(b) { (b) }
                        }
                    }
                }
            },
        );
        Spec {
            goal,
            start: String::new(),
            site: form_site(page, chrome, "act", "Done."),
            check: Box::new(move |hits, _| {
                let acts: Vec<_> = hits.iter().filter(|h| h.post && h.path == "act").collect();
                acts.len() == 1 && acts[0].get("action") == Some(target)
            }),
        }
    },
};

const PAGES: &[&str] = &[
    "Billing history",
    "Team members",
    "API keys",
    "Notifications",
    "Privacy",
    "Integrations",
    "Usage",
    "Audit log",
    "Shipping addresses",
    "Saved searches",
];

pub const LINK: Family = Family {
    name: "click-link",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let links = pick(rng, PAGES, 4..8);
        let target = one(rng, &links);
        let slug = target.to_lowercase().replace(' ', "-");
        let goal = say(
            rng,
            &[
                format!("Open the {target} page."),
                format!("Go to {target}."),
                format!("Follow the link to {}.", target.to_lowercase()),
                format!("Show me the {} page", target.to_lowercase()),
            ],
        );
        let page = chrome.page("Account", html! {
            p { "Manage everything about your account here." }
            ul { @for l in &links { li { a href=(l.to_lowercase().replace(' ', "-")) { (l) } } } }
        });
        let c = chrome.clone();
        Spec {
            goal,
            start: String::new(),
            site: Box::new(move |hit| match hit.path.as_str() {
                "" => Reply::Page(page.clone()),
                p if PAGES
                    .iter()
                    .any(|x| x.to_lowercase().replace(' ', "-") == p) =>
                {
                    Reply::Page(c.page(p, html! { p { "Nothing here yet." } }))
                }
                _ => Reply::NotFound,
            }),
            check: Box::new(move |hits, _| visited(hits, &slug)),
        }
    },
};

const ICONS: &[(&str, &str)] = &[
    ("Add to favourites", "★"),
    ("Share", "⤴"),
    ("Print", "⎙"),
    ("Delete", "✖"),
    ("Download", "⬇"),
    ("Edit", "✎"),
    ("Settings", "⚙"),
    ("Notifications", "♪"),
];

pub const ICON: Family = Family {
    name: "click-icon",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let icons = pick(rng, ICONS, 4..7);
        let target = one(rng, &icons).0;
        let goal = say(
            rng,
            &[
                format!("Press the {target} button."),
                format!("Click {}.", target.to_lowercase()),
                format!("Click the {target} icon."),
            ],
        );
        let page = chrome.page("Photo: harbour at dusk", html! {
            p { "Uploaded by Lena Keller, 3 days ago." }
            form method="post" action="icon" {
                @for (label, glyph) in &icons {
                    button type="submit" name="icon" value=(label) aria-label=(label) title=(label) { (glyph) }
                    " "
                }
            }
        });
        Spec {
            goal,
            start: String::new(),
            site: form_site(page, chrome, "icon", "Done."),
            check: Box::new(move |hits, _| {
                let acts: Vec<_> = hits.iter().filter(|h| h.post && h.path == "icon").collect();
                acts.len() == 1 && acts[0].get("icon") == Some(target)
            }),
        }
    },
};

const TAB_NAMES: &[&str] = &[
    "Overview",
    "Billing",
    "Security",
    "Team",
    "Integrations",
    "Reports",
];

/// Shows the panel of the clicked tab and hides the others.
const TABS_JS: &str = r#"
document.querySelectorAll('[role=tab]').forEach(t => t.addEventListener('click', () => {
  document.querySelectorAll('[role=tab]').forEach(o => o.setAttribute('aria-selected', o === t ? 'true' : 'false'));
  document.querySelectorAll('[role=tabpanel]').forEach(p => p.hidden = p.id !== t.getAttribute('aria-controls'));
}));
"#;

pub const TABS: Family = Family {
    name: "tabs",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let tabs = pick(rng, TAB_NAMES, 3..6);
        let target = one(rng, &tabs[1..]);
        let button = one(rng, &["Export", "Download CSV", "Reset"]);
        let goal = say(
            rng,
            &[
                format!("Go to the {target} tab and click {button}."),
                format!("Switch to the {target} tab, then press {button}."),
                format!("Open the {target} tab and hit {button} there."),
            ],
        );
        let page = chrome.page("Workspace settings", html! {
            div role="tablist" {
                @for (i, t) in tabs.iter().enumerate() {
                    button type="button" role="tab" aria-selected=(if i == 0 { "true" } else { "false" }) aria-controls={ "p-" (t) } { (t) }
                }
            }
            @for (i, t) in tabs.iter().enumerate() {
                div role="tabpanel" id={ "p-" (t) } hidden[i != 0] {
                    p { (t) " settings for this workspace." }
                    form method="post" action="tab" {
                        input type="hidden" name="tab" value=(t);
                        button type="submit" { (button) }
                    }
                }
            }
            script { (PreEscaped(TABS_JS)) }
        });
        Spec {
            goal,
            start: String::new(),
            site: form_site(page, chrome, "tab", "Done."),
            check: Box::new(move |hits, _| {
                posted(hits, "tab").is_some_and(|h| h.get("tab") == Some(target))
                    && hits.iter().filter(|h| h.post).count() == 1
            }),
        }
    },
};

const MENU_JS: &str = r#"
const b = document.getElementById('menu-button'), m = document.getElementById('menu');
b.addEventListener('click', () => { const open = m.hidden; m.hidden = !open; b.setAttribute('aria-expanded', open ? 'true' : 'false'); });
"#;

pub const MENU: Family = Family {
    name: "menu",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let items = pick(rng, ACTIONS, 4..7);
        let target = one(rng, &items);
        let menu = one(rng, &["Actions", "More", "Options"]);
        let goal = say(
            rng,
            &[
                format!("Open the {menu} menu and click {target}."),
                format!("Click {menu}, then choose {target}."),
                format!("Choose {target} from the {menu} menu."),
            ],
        );
        let page = chrome.page("Invoice 2291", html! {
            p { "Issued to Globex, 3 items." }
            button type="button" id="menu-button" aria-haspopup="menu" aria-expanded="false" aria-controls="menu" { (menu) " ▾" }
            form method="post" action="menu" {
                div role="menu" id="menu" hidden {
                    @for i in &items {
                        button type="submit" role="menuitem" name="item" value=(i) { (i) }
                    }
                }
            }
            script { (PreEscaped(MENU_JS)) }
        });
        Spec {
            goal,
            start: String::new(),
            site: form_site(page, chrome, "menu", "Done."),
            check: Box::new(move |hits, _| {
                posted(hits, "menu").is_some_and(|h| h.get("item") == Some(target))
            }),
        }
    },
};

const DIALOG_JS: &str = r#"
const d = document.getElementById('confirm');
document.getElementById('open').addEventListener('click', () => d.showModal());
document.getElementById('cancel').addEventListener('click', () => d.close());
"#;

pub const DIALOG: Family = Family {
    name: "dialog",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let (opener, thing) = one(
            rng,
            &[
                ("Delete project", "project"),
                ("Remove member", "member"),
                ("Cancel subscription", "subscription"),
                ("Close account", "account"),
            ],
        );
        let confirm = one(rng, &["Confirm", "Yes", "Continue", "I am sure"]);
        let goal = say(
            rng,
            &[
                format!("Click {opener}, then click {confirm} in the dialog."),
                format!("Press {opener} and confirm with {confirm}."),
            ],
        );
        let page = chrome.page(
            "Settings",
            html! {
                p { "Changes here cannot be undone." }
                button type="button" { "Export data" } " "
                button type="button" id="open" { (opener) }
                dialog id="confirm" aria-label={ "Confirm: " (opener) } {
                    p { "Really " (opener.to_lowercase()) "? The " (thing) " goes for good." }
                    form method="post" action="confirm" {
                        button type="button" id="cancel" { "Cancel" } " "
                        button type="submit" name="do" value="yes" { (confirm) }
                    }
                }
                script { (PreEscaped(DIALOG_JS)) }
            },
        );
        Spec {
            goal,
            start: String::new(),
            site: form_site(page, chrome, "confirm", "Done."),
            check: Box::new(move |hits, _| posted(hits, "confirm").is_some()),
        }
    },
};
