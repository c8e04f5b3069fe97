//! A product's page and its buy box, which the restock hook re-renders on its own.

use maud::{html, Markup, PreEscaped};

use super::layout::{page, Chrome};
use crate::demo_shop::catalog::Product;
use crate::demo_shop::state::MAX_QUANTITY;
use crate::demo_shop::Layout;

/// Long-polls for stock events and swaps the buy box; only on pages of a shop with test hooks.
const STOCK_SCRIPT: &str = include_str!("stock.js");

pub struct BuyBox<'a> {
    pub product: &'a Product,
    /// Set by the restock hook; `None`: not limited.
    pub left: Option<u32>,
    /// The last stock event when rendered; the page listens for later ones.
    pub seq: u64,
    pub error: Option<&'a str>,
    /// The quantity field's value.
    pub quantity: &'a str,
    /// The button's text in place of "Add to cart (N left)": a shop that renames its controls
    /// in a re-render (set by the restock hook's `label`).
    pub label: Option<&'a str>,
    pub layout: Layout,
}

/// The quantity field and the button, as one element that can be replaced whole: after a
/// restock every node in it is new, as a framework's re-render would make them.
pub fn buy_box(b: &BuyBox<'_>) -> Markup {
    let max = b.left.unwrap_or(MAX_QUANTITY).min(MAX_QUANTITY);
    let sold_out = b.left == Some(0);
    let restyled = b.layout == Layout::Restyled;
    let (form_id, form_class, qty_id) = if restyled {
        ("purchase-7f3", "panel panel--buy", "qty-7f3")
    } else {
        ("buy-box", "buy-box", "quantity")
    };
    let quantity = html! {
        div class=(if restyled { "form-row" } else { "field" }) {
            label for=(qty_id) { "Quantity" }
            input id=(qty_id) type="number" name="quantity" value=(b.quantity)
                min="1" max=(max) required disabled[sold_out];
        }
    };
    let button = html! {
        @match (b.left, b.layout) {
            (Some(0), _) => { button type="submit" disabled { "Sold out" } }
            (_, Layout::Repurposed) => {
                // Same place and attributes as "Add to cart" had, another meaning.
                button type="button" onclick="this.textContent = 'Saved for later'" { "Save for later" }
            }
            (Some(left), _) => {
                button type="submit" {
                    @if let Some(label) = b.label { (label) } @else { "Add to cart (" (left) " left)" }
                }
            }
            (None, Layout::Restyled) => {
                button type="submit" id="cta-7f3" class="btn btn--primary" { "Add to cart" }
            }
            (None, _) => { button type="submit" { "Add to cart" } }
        }
    };
    html! {
        form id=(form_id) class=(form_class) method="post" action="/shop/cart/add"
            data-product=(b.product.slug) data-seq=(b.seq) {
            input type="hidden" name="product" value=(b.product.slug);
            @if restyled { (button) (quantity) } @else { (quantity) (button) }
            @if b.layout == Layout::Repurposed && !sold_out {
                button type="submit" class="basket" { "Put in basket" }
            }
            @if let Some(error) = b.error {
                p class="error" role="alert" { (error) }
            }
        }
    }
}

pub fn product(chrome: &Chrome<'_>, buy: &BuyBox<'_>, stock_script: bool) -> Markup {
    let p = buy.product;
    let main = html! {
        nav class="crumbs" aria-label="Breadcrumb" {
            ol {
                li { a href="/shop/" { "Home" } }
                li { a href={ "/shop/?category=" (p.category.slug()) } { (p.category.label()) } }
                li aria-current="page" { (p.name) }
            }
        }
        article class="product" {
            h1 { (p.name) }
            p class="price" { (p.price) }
            p { (p.description) }
            (buy_box(buy))
        }
        @if stock_script {
            script { (PreEscaped(STOCK_SCRIPT)) }
        }
    };
    page(chrome, p.name, main, None)
}
