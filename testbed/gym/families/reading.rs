//! Reading a value back: a price, a count, a date, a name. The check is that the answer states
//! the value the page showed for the thing asked about (and not a neighbour's).

use maud::html;

use super::super::page::{one, person, pick, price, Chrome, THINGS, TOPICS};
use super::super::{answer_holds, Family, Spec};
use super::{say, static_page};

pub const PRICE: Family = Family {
    name: "read-price",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let things = pick(rng, THINGS, 4..9);
        let prices: Vec<String> = things.iter().map(|_| price(rng)).collect();
        let at = rng.usize(..things.len());
        let (thing, value) = (things[at], prices[at].clone());
        let goal = say(
            rng,
            &[
                format!("What does the {} cost?", thing.to_lowercase()),
                format!("How much is the {}?", thing.to_lowercase()),
                format!("What is the price of the {}?", thing.to_lowercase()),
            ],
        );
        let page = chrome.page(
            "Products",
            html! {
                div {
                    @for (t, p) in things.iter().zip(&prices) {
                        div class="card" style="display:inline-block;width:200px;margin:8px" {
                            h3 { (t) }
                            p { "Price: " (p) }
                            button type="button" { "Add to cart" }
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

pub const COUNT: Family = Family {
    name: "read-count",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let things = pick(rng, THINGS, 4..8);
        let counts: Vec<u32> = things.iter().map(|_| rng.u32(0..250)).collect();
        let at = rng.usize(..things.len());
        let (thing, count) = (things[at], counts[at]);
        let goal = say(
            rng,
            &[
                format!("How many {} are in stock?", thing.to_lowercase()),
                format!("What is the stock count of the {}?", thing.to_lowercase()),
            ],
        );
        let page = chrome.page(
            "Inventory",
            html! {
                ul {
                    @for (t, c) in things.iter().zip(&counts) {
                        li { strong { (t) } " — in stock: " (c) }
                    }
                }
            },
        );
        Spec {
            goal,
            start: String::new(),
            site: static_page(page),
            check: Box::new(move |_, answer| {
                let numbers: Vec<&str> = answer
                    .split(|c: char| !c.is_ascii_digit())
                    .filter(|s| !s.is_empty())
                    .collect();
                numbers.first() == Some(&count.to_string().as_str())
            }),
        }
    },
};

pub const DATE: Family = Family {
    name: "read-date",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let numbers: Vec<u32> = (0..rng.usize(4..8))
            .map(|i| 1000 + i as u32 * 7 + rng.u32(0..7))
            .collect();
        let dates: Vec<String> = numbers
            .iter()
            .map(|_| format!("2027-{:02}-{:02}", rng.u32(1..13), rng.u32(1..29)))
            .collect();
        let at = rng.usize(..numbers.len());
        let (number, date) = (numbers[at], dates[at].clone());
        let goal = say(
            rng,
            &[
                format!("When is invoice {number} due?"),
                format!("What is the due date of invoice {number}?"),
            ],
        );
        let page = chrome.page(
            "Invoices",
            html! {
                @for (n, d) in numbers.iter().zip(&dates) {
                    div class="invoice" style="margin:8px 0" {
                        strong { "Invoice " (n) } br;
                        span { "Due: " (d) }
                    }
                }
            },
        );
        Spec {
            goal,
            start: String::new(),
            site: static_page(page),
            check: Box::new(move |_, answer| answer_holds(answer, &date)),
        }
    },
};

pub const NAME: Family = Family {
    name: "read-name",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let topics = pick(rng, TOPICS, 4..7);
        let senders: Vec<String> = topics.iter().map(|_| person(rng)).collect();
        let at = rng.usize(..topics.len());
        let (topic, sender) = (topics[at], senders[at].clone());
        let goal = say(
            rng,
            &[
                format!("Who sent the message about {}?", topic.to_lowercase()),
                format!("Who sent the \"{topic}\" message?"),
            ],
        );
        let page = chrome.page("Inbox", html! {
            ul {
                @for (t, s) in topics.iter().zip(&senders) {
                    li { strong { (t) } " — from " (s) ", " (one(rng, &["09:14", "11:02", "yesterday", "Monday"])) }
                }
            }
        });
        Spec {
            goal,
            start: String::new(),
            site: static_page(page),
            check: Box::new(move |_, answer| answer_holds(answer, &sender)),
        }
    },
};
