//! URL → handler, all under `/shop`. No fallback of its own: the fixture server that merges this
//! router keeps its fallback for files, so unknown shop paths get a catch-all route instead.

mod account;
mod browse;
mod cart;
mod contact;
mod hooks;
mod newsletter;

use axum::http::StatusCode;
use axum::response::{Redirect, Response};
use axum::routing::{get, post};
use axum::Router;

use super::pages;
use super::visitor::Visitor;
use super::DemoShop;

pub fn router(shop: DemoShop) -> Router {
    Router::new()
        .route("/shop", get(|| async { Redirect::permanent("/shop/") }))
        .route("/shop/", get(browse::home))
        .route("/shop/search", get(browse::search))
        .route("/shop/product/{slug}", get(browse::product))
        .route("/shop/cart", get(cart::show))
        .route("/shop/cart/add", post(cart::add))
        .route("/shop/cart/remove", post(cart::remove))
        .route("/shop/order", post(cart::place_order))
        .route("/shop/orders/{number}", get(cart::order))
        .route("/shop/contact", get(contact::form).post(contact::send))
        .route("/shop/login", get(account::form).post(account::sign_in))
        .route(
            "/shop/signin",
            get(account::signin_form).post(account::signin_username),
        )
        .route("/shop/signin/password", post(account::signin_password))
        .route(
            "/shop/signin/code",
            get(account::signin_code_form).post(account::signin_code),
        )
        .route("/shop/logout", post(account::sign_out))
        .route("/shop/newsletter", post(newsletter::choose))
        .route("/shop/api/stock-events", get(hooks::stock_events))
        .route("/shop/api/stock-ack", post(hooks::stock_ack))
        .route("/shop/_test/restock", get(hooks::restock))
        .route("/shop/{*rest}", get(not_found))
        .with_state(shop)
}

async fn not_found(visitor: Visitor) -> Response {
    not_found_page(&visitor, "There is no such page in the shop.")
}

fn not_found_page(visitor: &Visitor, message: &str) -> Response {
    visitor.page(
        StatusCode::NOT_FOUND,
        pages::not_found(&visitor.chrome(""), message),
    )
}
