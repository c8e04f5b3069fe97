//! The frame around every page: the header an agent finds the same on every page (brand,
//! search, navigation with the cart count and the sign-in state) and the footer.

use maud::{html, Markup, PreEscaped, DOCTYPE};

const STYLE: &str = include_str!("style.css");

/// What the header shows about the visitor.
pub struct Chrome<'a> {
    pub cart_count: u32,
    pub user: Option<&'a str>,
    /// The search box's value: the query on a results page, empty elsewhere.
    pub query: &'a str,
}

/// A whole page. `overlay` is painted above everything (the newsletter dialog).
pub fn page(chrome: &Chrome<'_>, title: &str, main: Markup, overlay: Option<Markup>) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " — Demo Shop" }
                style { (PreEscaped(STYLE)) }
            }
            body {
                (header(chrome))
                main id="main" { (main) }
                footer { p { "Demo Shop is itinero's test site. Prices include VAT." } }
                @if let Some(overlay) = overlay { (overlay) }
            }
        }
    }
}

fn header(chrome: &Chrome<'_>) -> Markup {
    html! {
        header class="site-header" {
            a class="brand" href="/shop/" { "Demo Shop" }
            form class="search" role="search" method="get" action="/shop/search" {
                input type="search" name="q" aria-label="Search products" value=(chrome.query);
                button type="submit" { "Search" }
            }
            nav aria-label="Main" {
                ul {
                    li { a href="/shop/" { "Home" } }
                    li { a href="/shop/contact" { "Contact" } }
                    li { a href="/shop/cart" { "Cart (" (chrome.cart_count) ")" } }
                    @match chrome.user {
                        Some(user) => {
                            li { "Signed in as " (user) }
                            li {
                                form method="post" action="/shop/logout" {
                                    button type="submit" class="secondary" { "Sign out" }
                                }
                            }
                        }
                        None => {
                            li { a href="/shop/login" { "Sign in" } }
                        }
                    }
                }
            }
        }
    }
}

pub fn not_found(chrome: &Chrome<'_>, message: &str) -> Markup {
    page(
        chrome,
        "Not found",
        html! {
            h1 { "Not found" }
            p { (message) }
            p { a href="/shop/" { "Back to all products" } }
        },
        None,
    )
}
