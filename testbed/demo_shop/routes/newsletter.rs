//! The newsletter dialog's two buttons.

use axum::extract::{Query, State};
use axum::http::{StatusCode, Uri};
use axum::response::Response;
use axum::Form;
use serde::Deserialize;

use super::browse::{render_home, HomeQuery};
use crate::demo_shop::records::NewsletterChoice;
use crate::demo_shop::visitor::Visitor;
use crate::demo_shop::DemoShop;

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ChoiceForm {
    choice: String,
    email: String,
    back: String,
}

pub async fn choose(
    State(shop): State<DemoShop>,
    visitor: Visitor,
    Form(form): Form<ChoiceForm>,
) -> Response {
    // Only back into the shop: the field comes from the page and could say anything.
    let back_uri = form
        .back
        .parse::<Uri>()
        .ok()
        .filter(|uri| uri.scheme().is_none() && uri.path().starts_with("/shop/"));
    let back = back_uri
        .as_ref()
        .and_then(|uri| uri.path_and_query())
        .map_or("/shop/", |pq| pq.as_str());
    let email = form.email.trim();
    let choice = match form.choice.as_str() {
        "subscribe" if email.contains('@') => NewsletterChoice::Subscribed {
            email: email.to_string(),
        },
        "subscribe" => {
            let query = back_uri
                .as_ref()
                .and_then(|uri| Query::<HomeQuery>::try_from_uri(uri).ok())
                .map(|Query(q)| q)
                .unwrap_or_default();
            return render_home(
                &shop,
                &visitor,
                &query,
                back,
                Some("Enter your email address to subscribe."),
                StatusCode::UNPROCESSABLE_ENTITY,
            );
        }
        _ => NewsletterChoice::Declined,
    };
    shop.store().dismiss_newsletter(&visitor.sid, choice);
    visitor.see_other(back)
}
