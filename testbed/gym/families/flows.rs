//! Flows over more than one page or layer: an overlay in the way, a cart to a checkout form,
//! and inbox actions (delete, reply to, forward the message from someone).

use maud::{html, Markup};

use super::super::page::{one, person, pick, price, Chrome, CITIES, FIRST, THINGS, TOPICS};
use super::super::{Family, Hit, Reply, Spec};
use super::{field, form_site, posted, say, thanks};

pub const OVERLAY: Family = Family {
    name: "overlay",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let buttons = pick(
            rng,
            &[
                "Download report",
                "Book a demo",
                "Start free trial",
                "Join the waitlist",
                "Get the app",
            ],
            3..4,
        );
        let target = one(rng, &buttons);
        let accept = one(rng, &["Accept all", "Got it", "OK"]);
        let goal = say(
            rng,
            &[
                format!("Click {target}."),
                format!("Press the {target} button."),
            ],
        );
        let page = chrome.page("Welcome", html! {
            p { "Tools for teams of every size." }
            form method="post" action="go" {
                @for b in &buttons { button type="submit" name="b" value=(b) { (b) } " " }
            }
            div role="dialog" aria-label="Cookies" style="position:fixed;inset:0;background:rgba(0,0,0,.6);display:flex;align-items:center;justify-content:center" id="cookies" {
                div style="background:#fff;padding:24px;max-width:400px" {
                    p { "We use cookies to improve your experience." }
                    button type="button" onclick="document.getElementById('cookies').remove()" { (accept) }
                    " " a href="#privacy" { "Privacy policy" }
                }
            }
        });
        Spec {
            goal,
            start: String::new(),
            site: form_site(page, chrome, "go", "Done."),
            check: Box::new(move |hits, _| {
                posted(hits, "go").is_some_and(|h| h.get("b") == Some(target))
            }),
        }
    },
};

pub const CHECKOUT: Family = Family {
    name: "checkout",
    build: |rng| {
        let chrome = Chrome::new(rng);
        let things = pick(rng, THINGS, 3..6);
        let prices: Vec<String> = things.iter().map(|_| price(rng)).collect();
        let thing = one(rng, &things);
        let name = person(rng);
        let city = one(rng, CITIES);
        let street = format!(
            "{} Street {}",
            one(rng, &["Harbour", "Station", "Mill", "Church"]),
            rng.u32(1..90)
        );
        let goal = say(
            rng,
            &[
                format!("Add the {} to the cart, go to the cart, click Checkout, fill in name {name}, address \"{street}\" and city {city}, then click Place order.", thing.to_lowercase()),
                format!("Buy the {}: add it to the cart, open the cart, press Checkout, enter name \"{name}\", address \"{street}\" and city {city}, and place the order.", thing.to_lowercase()),
            ],
        );
        let cart_link = html! { p { a href="cart" { "Cart" } } };
        let shop = chrome.page("Shop", html! {
            (cart_link)
            @for (t, p) in things.iter().zip(&prices) {
                div class="card" style="margin:8px 0" {
                    h3 { (t) } p { (p) }
                    form method="post" action="add" { input type="hidden" name="item" value=(t); button type="submit" { "Add to cart" } }
                }
            }
        });
        let c = chrome.clone();
        let cart: std::sync::Arc<std::sync::Mutex<Vec<String>>> = Default::default();
        let (n, s, ci, th) = (
            name.clone(),
            street.clone(),
            city.to_owned(),
            thing.to_owned(),
        );
        Spec {
            goal,
            start: String::new(),
            site: Box::new(move |hit| match hit.path.as_str() {
                "" => Reply::Page(shop.clone()),
                "add" => {
                    cart.lock()
                        .unwrap()
                        .extend(hit.get("item").map(str::to_owned));
                    Reply::Redirect(String::new())
                }
                "cart" => {
                    let items = cart.lock().unwrap().clone();
                    Reply::Page(c.page(
                        "Your cart",
                        html! {
                            @if items.is_empty() { p { "Your cart is empty." } }
                            ul { @for i in &items { li { (i) } } }
                            @if !items.is_empty() { a href="checkout" { "Checkout" } }
                        },
                    ))
                }
                "checkout" => Reply::Page(c.page(
                    "Checkout",
                    html! {
                        form method="post" action="order" {
                            (field("Name", "name", "text", ""))
                            (field("Address", "address", "text", ""))
                            (field("City", "city", "text", ""))
                            button type="submit" { "Place order" }
                        }
                    },
                )),
                "order" => {
                    let items = cart.lock().unwrap().join(",");
                    Reply::Page(c.page("Order placed", html! { p role="status" { "Thank you! Your order of " (items) " is on its way." } }))
                }
                _ => Reply::NotFound,
            }),
            check: Box::new(move |hits, _| {
                let added: Vec<_> = hits
                    .iter()
                    .filter(|h| h.post && h.path == "add")
                    .filter_map(|h| h.get("item"))
                    .collect();
                added == [th.as_str()]
                    && posted(hits, "order").is_some_and(|h| {
                        h.get("name") == Some(n.as_str())
                            && h.get("address") == Some(s.as_str())
                            && h.get("city") == Some(ci.as_str())
                    })
            }),
        }
    },
};

/// An inbox of messages, each with its own page that offers Reply, Forward and Delete.
struct Inbox {
    chrome: Chrome,
    messages: Vec<(String, &'static str)>,
}

impl Inbox {
    fn new(rng: &mut fastrand::Rng) -> Self {
        let topics = pick(rng, TOPICS, 4..7);
        let mut messages: Vec<(String, &'static str)> = Vec::new();
        for t in topics {
            let mut p = person(rng);
            while messages.iter().any(|m| m.0 == p) {
                p = person(rng);
            }
            messages.push((p, t));
        }
        Self {
            chrome: Chrome::new(rng),
            messages,
        }
    }

    fn list(&self) -> String {
        self.chrome.page(
            "Inbox",
            html! {
                ul {
                    @for (i, (from, topic)) in self.messages.iter().enumerate() {
                        li { a href={ "message?id=" (i) } { strong { (from) } " — " (topic) } }
                    }
                }
            },
        )
    }

    fn message(&self, id: usize) -> Reply {
        let Some((from, topic)) = self.messages.get(id) else {
            return Reply::NotFound;
        };
        Reply::Page(self.chrome.page(
            topic,
            html! {
                p { "From: " (from) }
                p { "Hello, about " (topic.to_lowercase()) ": shall we talk this week?" }
                form method="get" action="compose" style="display:inline" {
                    input type="hidden" name="id" value=(id);
                    button type="submit" name="mode" value="reply" { "Reply" } " "
                    button type="submit" name="mode" value="forward" { "Forward" }
                }
                " "
                form method="post" action="delete" style="display:inline" {
                    input type="hidden" name="id" value=(id);
                    button type="submit" { "Delete" }
                }
            },
        ))
    }

    fn compose(&self, hit: &Hit) -> Reply {
        let id: usize = hit
            .get("id")
            .and_then(|i| i.parse().ok())
            .unwrap_or(usize::MAX);
        let Some((from, topic)) = self.messages.get(id) else {
            return Reply::NotFound;
        };
        let reply = hit.get("mode") == Some("reply");
        let form: Markup = html! {
            form method="post" action="send" {
                input type="hidden" name="id" value=(id);
                input type="hidden" name="mode" value=(if reply { "reply" } else { "forward" });
                (field("To", "to", "email", &if reply { format!("{}@example.org", from.split(' ').next().unwrap_or("").to_lowercase()) } else { String::new() }))
                (field("Subject", "subject", "text", &format!("{}{topic}", if reply { "Re: " } else { "Fwd: " })))
                (field("Message", "body", "textarea", ""))
                button type="submit" { "Send" }
            }
        };
        Reply::Page(
            self.chrome
                .page(if reply { "Reply" } else { "Forward" }, form),
        )
    }

    fn site(self) -> Box<dyn Fn(&Hit) -> Reply + Send + Sync> {
        Box::new(move |hit| match hit.path.as_str() {
            "" => Reply::Page(self.list()),
            "message" => self.message(
                hit.get("id")
                    .and_then(|i| i.parse().ok())
                    .unwrap_or(usize::MAX),
            ),
            "compose" => self.compose(hit),
            "delete" | "send" => thanks(&self.chrome, "Done."),
            _ => Reply::NotFound,
        })
    }
}

pub const INBOX_DELETE: Family = Family {
    name: "inbox-delete",
    build: |rng| {
        let inbox = Inbox::new(rng);
        let at = rng.usize(..inbox.messages.len());
        let from = inbox.messages[at].0.clone();
        let goal = say(
            rng,
            &[
                format!("Delete the message from {from}."),
                format!("Remove the email from {from}."),
            ],
        );
        Spec {
            goal,
            start: String::new(),
            site: inbox.site(),
            check: Box::new(move |hits, _| {
                let deleted: Vec<_> = hits
                    .iter()
                    .filter(|h| h.post && h.path == "delete")
                    .collect();
                deleted.len() == 1 && deleted[0].get("id") == Some(at.to_string().as_str())
            }),
        }
    },
};

pub const INBOX_REPLY: Family = Family {
    name: "inbox-reply",
    build: |rng| {
        let inbox = Inbox::new(rng);
        let at = rng.usize(..inbox.messages.len());
        let from = inbox.messages[at].0.clone();
        let text = one(
            rng,
            &[
                "Thanks, Thursday works for me.",
                "Sounds good, see you then.",
                "Sorry, I am away this week.",
                "Yes, let us meet at noon.",
            ],
        );
        let goal = say(
            rng,
            &[
                format!("Reply to the message from {from} with \"{text}\"."),
                format!("Reply to {from} saying \"{text}\"."),
            ],
        );
        Spec {
            goal,
            start: String::new(),
            site: inbox.site(),
            check: Box::new(move |hits, _| {
                posted(hits, "send").is_some_and(|h| {
                    h.get("mode") == Some("reply")
                        && h.get("id") == Some(at.to_string().as_str())
                        && h.get("body").map(str::trim) == Some(text)
                })
            }),
        }
    },
};

pub const INBOX_FORWARD: Family = Family {
    name: "inbox-forward",
    build: |rng| {
        let inbox = Inbox::new(rng);
        let at = rng.usize(..inbox.messages.len());
        let from = inbox.messages[at].0.clone();
        let to = format!("{}@example.com", one(rng, FIRST).to_lowercase());
        let goal = say(
            rng,
            &[
                format!("Forward the message from {from} to {to}."),
                format!("Forward {from}'s message to {to}."),
            ],
        );
        Spec {
            goal,
            start: String::new(),
            site: inbox.site(),
            check: Box::new(move |hits, _| {
                posted(hits, "send").is_some_and(|h| {
                    h.get("mode") == Some("forward")
                        && h.get("id") == Some(at.to_string().as_str())
                        && h.get("to") == Some(to.as_str())
                })
            }),
        }
    },
};
