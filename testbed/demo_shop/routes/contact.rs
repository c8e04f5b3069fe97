//! The contact form: shown, validated on the server, recorded.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use axum::Form;

use crate::demo_shop::pages::{self, ContactErrors, ContactForm};
use crate::demo_shop::visitor::Visitor;
use crate::demo_shop::DemoShop;

pub async fn form(visitor: Visitor) -> Response {
    visitor.page(
        StatusCode::OK,
        pages::contact(
            &visitor.chrome(""),
            &ContactForm::default(),
            &ContactErrors::default(),
        ),
    )
}

pub async fn send(
    State(shop): State<DemoShop>,
    visitor: Visitor,
    Form(form): Form<ContactForm>,
) -> Response {
    match form.validate() {
        Ok(message) => {
            let page = pages::contact_sent(&visitor.chrome(""), &message);
            shop.store().record_contact(message);
            visitor.page(StatusCode::OK, page)
        }
        Err(errors) => visitor.page(
            StatusCode::UNPROCESSABLE_ENTITY,
            pages::contact(&visitor.chrome(""), &form, &errors),
        ),
    }
}
