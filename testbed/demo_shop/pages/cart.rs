//! The cart and the page that confirms an order.

use maud::{html, Markup};

use super::layout::{page, Chrome};
use crate::demo_shop::money::Cents;
use crate::demo_shop::records::{LineItem, Order};

pub fn cart(chrome: &Chrome<'_>, items: &[LineItem]) -> Markup {
    let total: Cents = items.iter().map(|i| i.line_total).sum();
    let main = html! {
        h1 { "Your cart" }
        @if items.is_empty() {
            p { "Your cart is empty." }
        } @else {
            table class="cart" {
                thead {
                    tr {
                        th scope="col" { "Product" }
                        th scope="col" { "Quantity" }
                        th scope="col" { "Price" }
                        th scope="col" { "Remove" }
                    }
                }
                tbody {
                    @for item in items {
                        tr {
                            td { a href={ "/shop/product/" (item.slug) } { (item.name) } }
                            td { (item.quantity) }
                            td { (item.line_total) }
                            td {
                                form method="post" action="/shop/cart/remove" {
                                    input type="hidden" name="product" value=(item.slug);
                                    button type="submit" class="secondary" aria-label={ "Remove " (item.name) } { "Remove" }
                                }
                            }
                        }
                    }
                }
            }
            p class="total" { "Total: " (total) }
            form method="post" action="/shop/order" {
                button type="submit" { "Place order" }
            }
        }
        p { a href="/shop/" { "Continue shopping" } }
    };
    page(chrome, "Your cart", main, None)
}

pub fn order_placed(chrome: &Chrome<'_>, order: &Order) -> Markup {
    let main = html! {
        h1 { "Thank you!" }
        p { "Order #" (order.number) " is placed. Total: " (order.total) }
        ul {
            @for item in &order.items {
                li { (item.quantity) " × " (item.name) " — " (item.line_total) }
            }
        }
        p { a href="/shop/" { "Continue shopping" } }
    };
    page(chrome, &format!("Order #{}", order.number), main, None)
}
