//! The chrome around a gym task's content: a site name, a navigation bar of distractor links,
//! side notes and a footer, all drawn from the task's seed, so that no two tasks look alike and
//! the agent has to find the task's controls among others.

use maud::{html, Markup, PreEscaped, DOCTYPE};

const SITES: &[&str] = &[
    "Northwind",
    "Bluebird",
    "Acme Works",
    "Harbour & Co",
    "Pinecrest",
    "Lumen",
    "Copperfield",
    "Meridian",
    "Oakline",
    "Riverside Office",
];
const NAV: &[&str] = &[
    "Home",
    "About us",
    "Blog",
    "Careers",
    "Help centre",
    "Pricing",
    "Contact",
    "Press",
    "Status",
    "Partners",
    "Events",
    "Community",
    "Docs",
    "Store locator",
    "Gift cards",
];
const NOTES: &[&str] = &[
    "Free returns within 30 days.",
    "Our support team answers within one working day.",
    "New: dark mode is here.",
    "Scheduled maintenance on Sunday night.",
    "Members save 10% on every order.",
    "Follow us for news and offers.",
];

/// How a task's pages are dressed.
#[derive(Clone)]
pub struct Chrome {
    site: &'static str,
    nav: Vec<&'static str>,
    note: Option<&'static str>,
    side_nav: bool,
    accent: &'static str,
}

impl Chrome {
    pub fn new(rng: &mut fastrand::Rng) -> Self {
        let mut nav = NAV.to_vec();
        rng.shuffle(&mut nav);
        let n = rng.usize(2..6);
        nav.truncate(n);
        Self {
            site: SITES[rng.usize(..SITES.len())],
            nav,
            note: rng.bool().then(|| NOTES[rng.usize(..NOTES.len())]),
            side_nav: rng.bool(),
            accent: ["#2563eb", "#059669", "#b45309", "#7c3aed", "#dc2626"][rng.usize(..5)],
        }
    }

    /// A whole page: `title` as its heading, `body` inside the chrome.
    pub fn page(&self, title: &str, body: Markup) -> String {
        let nav = html! {
            nav aria-label="Site" {
                @for item in &self.nav {
                    a href={ "#" (item.to_lowercase().replace(' ', "-")) } { (item) } " "
                }
            }
        };
        html! {
            (DOCTYPE)
            html lang="en" {
                head {
                    meta charset="utf-8";
                    title { (title) " — " (self.site) }
                    style { (PreEscaped(format!(
                        "body{{font-family:sans-serif;margin:0}}header{{background:{};color:#fff;padding:8px 16px}}\
                         header a{{color:#fff;margin-right:12px}}main{{padding:16px;max-width:760px}}\
                         .side{{float:right;width:180px;padding:8px;background:#f3f4f6}}\
                         label{{display:block;margin:6px 0}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:4px 8px}}\
                         .hidden{{display:none}}",
                        self.accent
                    ))) }
                }
                body {
                    header { strong { (self.site) } " " @if !self.side_nav { (nav) } }
                    @if self.side_nav { aside class="side" { (nav) } }
                    main {
                        h1 { (title) }
                        @if let Some(note) = self.note { p class="note" { (note) } }
                        (body)
                    }
                    footer { p { "© 2026 " (self.site) ". All rights reserved." } }
                }
            }
        }
        .into_string()
    }
}

/// Picks a number of distinct items of `pool` in `count`, in a seeded order.
pub fn pick<T: Clone>(
    rng: &mut fastrand::Rng,
    pool: &[T],
    count: std::ops::Range<usize>,
) -> Vec<T> {
    let n = rng.usize(count);
    let mut v = pool.to_vec();
    rng.shuffle(&mut v);
    v.truncate(n.min(pool.len()));
    v
}

/// One item of `pool`.
pub fn one<T: Clone>(rng: &mut fastrand::Rng, pool: &[T]) -> T {
    pool[rng.usize(..pool.len())].clone()
}

pub const FIRST: &[&str] = &[
    "Ana", "Bruno", "Chloe", "Dmitri", "Elif", "Farah", "Goran", "Hana", "Ivo", "Jonas", "Keiko",
    "Lena", "Marek", "Nadia", "Omar", "Priya", "Quentin", "Rosa", "Sven", "Tariq", "Uma", "Viktor",
];
pub const LAST: &[&str] = &[
    "Ruiz",
    "Okafor",
    "Lindqvist",
    "Novak",
    "Haddad",
    "Moreau",
    "Tanaka",
    "Costa",
    "Petrov",
    "Brennan",
    "Osei",
    "Keller",
    "Varga",
    "Iqbal",
    "Silva",
    "Dubois",
];
pub const THINGS: &[&str] = &[
    "Wool socks",
    "Rain jacket",
    "Desk lamp",
    "Coffee grinder",
    "Hiking boots",
    "Yoga mat",
    "Water bottle",
    "Travel mug",
    "Notebook",
    "Backpack",
    "Sun hat",
    "Bike light",
    "Tea kettle",
    "Phone case",
    "Scarf",
    "Gloves",
    "Umbrella",
    "Headphones",
    "Blender",
    "Candle",
];
pub const COLOURS: &[&str] = &[
    "Red", "Green", "Blue", "Yellow", "Black", "White", "Orange", "Purple", "Grey", "Teal",
];
pub const CITIES: &[&str] = &[
    "Lisbon",
    "Porto",
    "Lyon",
    "Leipzig",
    "Linz",
    "Ljubljana",
    "Lublin",
    "Leeds",
    "Lille",
    "Lucerne",
    "Lausanne",
    "Limerick",
];
pub const TOPICS: &[&str] = &[
    "Quarterly report",
    "Team lunch",
    "Server upgrade",
    "Holiday plans",
    "Invoice question",
    "Project kickoff",
    "Office move",
    "Budget review",
    "Hiring update",
    "Training session",
];

/// A person's full name.
pub fn person(rng: &mut fastrand::Rng) -> String {
    format!("{} {}", one(rng, FIRST), one(rng, LAST))
}

/// A price in euros, as the page shows it.
pub fn price(rng: &mut fastrand::Rng) -> String {
    format!("{}.{:02} EUR", rng.u32(3..180), rng.u32(0..100))
}
