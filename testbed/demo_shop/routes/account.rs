//! Signing in and out against the one account the shop was given: in one step at
//! `/shop/login`, or in two at `/shop/signin` (the username, then the password, then a TOTP
//! code when the account has a seed).

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use axum::Form;
use serde::Deserialize;

use crate::demo_shop::pages::{self, LoginForm};
use crate::demo_shop::visitor::Visitor;
use crate::demo_shop::DemoShop;

pub async fn form(visitor: Visitor) -> Response {
    visitor.page(StatusCode::OK, pages::login(&visitor.chrome(""), "", false))
}

pub async fn sign_in(
    State(shop): State<DemoShop>,
    visitor: Visitor,
    Form(form): Form<LoginForm>,
) -> Response {
    let username = form.username.trim();
    let account = &shop.options().account;
    let success = username == account.username && form.password == account.password;
    finish(&shop, visitor, username, success, |v| {
        pages::login(&v.chrome(""), username, true)
    })
}

/// Records the attempt; signed in, the visit moves to a fresh session and the home page;
/// refused, the `again` page says why (401).
fn finish(
    shop: &DemoShop,
    mut visitor: Visitor,
    username: &str,
    right: bool,
    again: impl FnOnce(&Visitor) -> maud::Markup,
) -> Response {
    match shop.store().sign_in(&visitor.sid, username, right) {
        Some(fresh) => {
            visitor.switch_session(fresh, shop);
            visitor.see_other("/shop/")
        }
        None => visitor.page(StatusCode::UNAUTHORIZED, again(&visitor)),
    }
}

pub async fn sign_out(State(shop): State<DemoShop>, visitor: Visitor) -> Response {
    shop.store().sign_out(&visitor.sid);
    visitor.see_other("/shop/")
}

#[derive(Deserialize)]
pub struct UsernameForm {
    #[serde(default)]
    username: String,
}

#[derive(Deserialize)]
pub struct CodeForm {
    #[serde(default)]
    code: String,
}

pub async fn signin_form(visitor: Visitor) -> Response {
    visitor.page(
        StatusCode::OK,
        pages::signin_username(&visitor.chrome(""), None),
    )
}

pub async fn signin_username(
    State(shop): State<DemoShop>,
    visitor: Visitor,
    Form(form): Form<UsernameForm>,
) -> Response {
    let username = form.username.trim();
    if username != shop.options().account.username {
        return visitor.page(
            StatusCode::UNAUTHORIZED,
            pages::signin_username(&visitor.chrome(""), Some(username)),
        );
    }
    visitor.page(
        StatusCode::OK,
        pages::signin_password(&visitor.chrome(""), username, false),
    )
}

pub async fn signin_password(
    State(shop): State<DemoShop>,
    visitor: Visitor,
    Form(form): Form<LoginForm>,
) -> Response {
    let username = form.username.trim();
    let account = &shop.options().account;
    let right = username == account.username && form.password == account.password;
    if right && account.totp_seed.is_some() {
        shop.store().await_code(&visitor.sid, username);
        return visitor.see_other("/shop/signin/code");
    }
    finish(&shop, visitor, username, right, |v| {
        pages::signin_password(&v.chrome(""), username, true)
    })
}

pub async fn signin_code_form(State(shop): State<DemoShop>, visitor: Visitor) -> Response {
    if shop.store().awaiting_code(&visitor.sid).is_none() {
        return visitor.see_other("/shop/signin");
    }
    visitor.page(
        StatusCode::OK,
        pages::signin_code(&visitor.chrome(""), false),
    )
}

pub async fn signin_code(
    State(shop): State<DemoShop>,
    visitor: Visitor,
    Form(form): Form<CodeForm>,
) -> Response {
    let Some(username) = shop.store().awaiting_code(&visitor.sid) else {
        return visitor.see_other("/shop/signin");
    };
    let seed = shop.options().account.totp_seed.clone().unwrap_or_default();
    let right = crate::demo_shop::totp::accepts(&seed, form.code.trim());
    finish(&shop, visitor, &username, right, |v| {
        pages::signin_code(&v.chrome(""), true)
    })
}
