//! The cart's forms and placing an order. Every change answers with a redirect (303), so a
//! reload of the page that follows never repeats it.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::Form;
use serde::Deserialize;

use super::browse::render_product;
use super::not_found_page;
use crate::demo_shop::catalog;
use crate::demo_shop::pages::{self, BuyBox};
use crate::demo_shop::state::{CartError, MAX_QUANTITY};
use crate::demo_shop::visitor::Visitor;
use crate::demo_shop::DemoShop;

pub async fn show(State(shop): State<DemoShop>, visitor: Visitor) -> Response {
    let items = shop.store().cart(&visitor.sid);
    visitor.page(StatusCode::OK, pages::cart(&visitor.chrome(""), &items))
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct AddForm {
    product: String,
    quantity: String,
}

pub async fn add(
    State(shop): State<DemoShop>,
    visitor: Visitor,
    Form(form): Form<AddForm>,
) -> Response {
    let Some(product) = catalog::find(&form.product) else {
        return not_found_page(
            &visitor,
            &format!("There is no product \"{}\" to add.", form.product),
        );
    };
    let problem = match form.quantity.trim().parse::<u32>() {
        Ok(quantity @ 1..=MAX_QUANTITY) => {
            match shop.store().add_to_cart(&visitor.sid, product, quantity) {
                Ok(()) => return visitor.see_other("/shop/cart"),
                Err(CartError::TooMany { in_cart }) => format!(
                    "Your cart already holds {in_cart}; it takes at most {MAX_QUANTITY} of one product."
                ),
                Err(CartError::NotEnoughStock { left }) => format!("Only {left} left."),
            }
        }
        _ => format!("Quantity must be a whole number from 1 to {MAX_QUANTITY}."),
    };
    let buy = BuyBox {
        layout: shop.layout(),
        label: None,
        product,
        left: shop.store().stock_left(product),
        seq: shop.stock().latest_seq(),
        error: Some(&problem),
        quantity: &form.quantity,
    };
    render_product(&shop, &visitor, &buy, StatusCode::UNPROCESSABLE_ENTITY)
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct RemoveForm {
    product: String,
}

pub async fn remove(
    State(shop): State<DemoShop>,
    visitor: Visitor,
    Form(form): Form<RemoveForm>,
) -> Response {
    shop.store().remove_from_cart(&visitor.sid, &form.product);
    visitor.see_other("/shop/cart")
}

pub async fn place_order(State(shop): State<DemoShop>, visitor: Visitor) -> Response {
    match shop.store().place_order(&visitor.sid) {
        Some(order) => visitor.see_other(&format!("/shop/orders/{}", order.number)),
        // Nothing to order: the cart page says it is empty.
        None => visitor.see_other("/shop/cart"),
    }
}

pub async fn order(
    State(shop): State<DemoShop>,
    visitor: Visitor,
    Path(number): Path<String>,
) -> Response {
    let order = number
        .parse()
        .ok()
        .and_then(|n| shop.store().order(&visitor.sid, n));
    match order {
        Some(order) => visitor.page(
            StatusCode::OK,
            pages::order_placed(&visitor.chrome(""), &order),
        ),
        None => not_found_page(&visitor, &format!("There is no order #{number} of yours.")),
    }
}
