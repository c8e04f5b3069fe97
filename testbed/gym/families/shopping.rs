//! Shopping pages: a quantity in a cart row, a list sorted by a column, a total read back.

use maud::html;

use super::super::page::{one, pick, Chrome, THINGS};
use super::super::{answer_holds, Family, Spec};
use super::{form_site, posted, say, static_page};

fn cents(rng: &mut fastrand::Rng) -> u32 {
    rng.u32(300..9000)
}

fn money(c: u32) -> String {
    format!("{}.{:02} EUR", c / 100, c % 100)
}

pub const QUANTITY: Family = Family {
    name: "quantity",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let things = pick(rng, THINGS, 3..6);
        let thing = one(rng, &things);
        let n = rng.u32(2..10);
        let goal = say(
            rng,
            &[
                format!(
                    "Set the quantity of the {} to {n}, then click Update cart.",
                    thing.to_lowercase()
                ),
                format!(
                    "Change the {} quantity to {n} and press Update cart.",
                    thing.to_lowercase()
                ),
            ],
        );
        let key = |t: &str| t.to_lowercase().replace(' ', "_");
        let page = chrome.page("Your cart", html! {
            form method="post" action="update" {
                table {
                    thead { tr { th { "Item" } th { "Price" } th { "Quantity" } } }
                    tbody {
                        @for t in &things {
                            tr {
                                td { (t) }
                                td { (money(cents(rng))) }
                                td { input type="number" min="0" name={ "qty_" (key(t)) } value="1" aria-label={ "Quantity for " (t) }; }
                            }
                        }
                    }
                }
                button type="submit" { "Update cart" }
            }
        });
        let want: Vec<(String, String)> = things
            .iter()
            .map(|t| {
                (
                    format!("qty_{}", key(t)),
                    if *t == thing {
                        n.to_string()
                    } else {
                        "1".into()
                    },
                )
            })
            .collect();
        Spec {
            goal,
            start: String::new(),
            site: form_site(page, chrome, "update", "Cart updated."),
            check: Box::new(move |hits, _| {
                posted(hits, "update")
                    .is_some_and(|h| want.iter().all(|(k, v)| h.get(k) == Some(v.as_str())))
            }),
        }
    },
};

const COLUMNS: &[&str] = &["Name", "Price", "Rating", "Newest", "Popularity"];

pub const SORT: Family = Family {
    name: "sort",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let columns = pick(rng, COLUMNS, 3..5);
        let column = one(rng, &columns);
        let goal = say(
            rng,
            &[
                format!("Sort the list by {}.", column.to_lowercase()),
                format!("Sort by {column}."),
                format!("Click {column} to sort the list."),
            ],
        );
        let things = pick(rng, THINGS, 4..7);
        let page = chrome.page("Catalogue", html! {
            p { "Sort by: " @for c in &columns { a href={ "?sort=" (c.to_lowercase()) } { (c) } " " } }
            ul { @for t in &things { li { (t) } } }
        });
        let want = column.to_lowercase();
        Spec {
            goal,
            start: String::new(),
            site: static_page(page),
            check: Box::new(move |hits, _| {
                hits.iter().any(|h| h.get("sort") == Some(want.as_str()))
            }),
        }
    },
};

pub const TOTAL: Family = Family {
    name: "read-total",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let (sub, ship, discount) = (cents(rng) * 3, rng.u32(0..1500), rng.u32(0..500));
        let total = sub + ship - discount.min(sub);
        let goal = say(
            rng,
            &[
                "What is the total?".to_owned(),
                "How much is the total?".to_owned(),
                "What is the price of the order in total?".to_owned(),
            ],
        );
        let page = chrome.page(
            "Order summary",
            html! {
                ul {
                    li { "Subtotal: " (money(sub)) }
                    li { "Shipping: " (money(ship)) }
                    li { "Discount: -" (money(discount.min(sub))) }
                    li { strong { "Total: " (money(total)) } }
                }
                form method="post" action="pay" { button type="submit" { "Pay now" } }
            },
        );
        let value = money(total);
        Spec {
            goal,
            start: String::new(),
            site: form_site(page, chrome, "pay", "Paid."),
            check: Box::new(move |hits, answer| {
                answer_holds(answer, &value) && posted(hits, "pay").is_none()
            }),
        }
    },
};
