//! Signing in and out against the one account the shop was given.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use axum::Form;

use crate::demo_shop::pages::{self, LoginForm};
use crate::demo_shop::visitor::Visitor;
use crate::demo_shop::DemoShop;

pub async fn form(visitor: Visitor) -> Response {
    visitor.page(StatusCode::OK, pages::login(&visitor.chrome(""), "", false))
}

pub async fn sign_in(
    State(shop): State<DemoShop>,
    mut visitor: Visitor,
    Form(form): Form<LoginForm>,
) -> Response {
    let username = form.username.trim();
    let account = &shop.options().account;
    let success = username == account.username && form.password == account.password;
    match shop.store().sign_in(&visitor.sid, username, success) {
        Some(fresh) => {
            visitor.switch_session(fresh, &shop);
            visitor.see_other("/shop/")
        }
        None => visitor.page(
            StatusCode::UNAUTHORIZED,
            pages::login(&visitor.chrome(""), username, true),
        ),
    }
}

pub async fn sign_out(State(shop): State<DemoShop>, visitor: Visitor) -> Response {
    shop.store().sign_out(&visitor.sid);
    visitor.see_other("/shop/")
}
