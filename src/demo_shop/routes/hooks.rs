//! The stale-element test hook (only with `test_hooks`): a test restocks a product, and the
//! open product page re-renders its buy box with new nodes before the test's request returns.

use std::time::Duration;

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::{Form, Json};
use serde::Deserialize;
use tokio::time::{timeout, timeout_at, Instant};

use crate::demo_shop::catalog::{self, Product};
use crate::demo_shop::pages::{buy_box, BuyBox};
use crate::demo_shop::DemoShop;

/// How long one long-poll is held open before the page asks again.
const POLL: Duration = Duration::from_secs(25);

fn hooks_off() -> Response {
    (
        StatusCode::NOT_FOUND,
        "test hooks are off: start the shop with ShopOptions { test_hooks: true, .. }",
    )
        .into_response()
}

fn find(slug: &str) -> Result<&'static Product, Response> {
    catalog::find(slug).ok_or_else(|| {
        (
            StatusCode::NOT_FOUND,
            format!("there is no product {slug:?}"),
        )
            .into_response()
    })
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct EventsQuery {
    product: String,
    after: String,
}

/// A product page's long-poll: the first stock event for its product after `after`, or 204
/// when none came in time.
pub async fn stock_events(
    State(shop): State<DemoShop>,
    Query(query): Query<EventsQuery>,
) -> Response {
    if !shop.options().test_hooks {
        return hooks_off();
    }
    let product = match find(&query.product) {
        Ok(p) => p,
        Err(response) => return response,
    };
    let after = match query.after.as_str() {
        "" => 0,
        text => match text.parse::<u64>() {
            Ok(n) => n,
            Err(e) => {
                return (
                    StatusCode::BAD_REQUEST,
                    format!("after={text:?} is not an event number: {e}"),
                )
                    .into_response()
            }
        },
    };
    let _listening = shop.stock().listen(product.slug);
    match timeout(POLL, shop.stock().next_event(product.slug, after)).await {
        Ok(Some(event)) => Json(event).into_response(),
        _ => StatusCode::NO_CONTENT.into_response(),
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct AckForm {
    seq: String,
}

/// The page has replaced its buy box for this event.
pub async fn stock_ack(State(shop): State<DemoShop>, Form(form): Form<AckForm>) -> Response {
    if !shop.options().test_hooks {
        return hooks_off();
    }
    match form.seq.parse::<u64>() {
        Ok(seq) if shop.stock().ack(seq) => StatusCode::NO_CONTENT.into_response(),
        _ => (
            StatusCode::BAD_REQUEST,
            format!("seq={:?} names no stock event", form.seq),
        )
            .into_response(),
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct RestockQuery {
    product: String,
    left: String,
}

/// `GET /shop/_test/restock?product=<slug>&left=<n>`: answers once a product page has
/// re-rendered its buy box, or with 504 and what it was waiting for.
pub async fn restock(State(shop): State<DemoShop>, Query(query): Query<RestockQuery>) -> Response {
    if !shop.options().test_hooks {
        return hooks_off();
    }
    let product = match find(&query.product) {
        Ok(p) => p,
        Err(response) => return response,
    };
    let left = match query.left.parse::<u32>() {
        Ok(n) => n,
        Err(e) => {
            return (
                StatusCode::BAD_REQUEST,
                format!("left={:?} is not a number of items: {e}", query.left),
            )
                .into_response()
        }
    };
    let wait = shop.options().hook_wait;
    let deadline = Instant::now() + wait;
    let slug = product.slug;
    if timeout_at(deadline, shop.stock().wait_for_listener(slug))
        .await
        .is_err()
    {
        return (
            StatusCode::GATEWAY_TIMEOUT,
            format!(
                "restock of {slug}: no product page listened for stock events within {wait:?} \
                 (open /shop/product/{slug} in a tab first)"
            ),
        )
            .into_response();
    }
    shop.store().set_stock_left(product, left);
    let seq = shop.stock().publish(slug, left, |seq| {
        buy_box(&BuyBox {
            product,
            left: Some(left),
            seq,
            error: None,
            quantity: "1",
        })
        .into_string()
    });
    if timeout_at(deadline, shop.stock().wait_for_ack(seq))
        .await
        .is_err()
    {
        return (
            StatusCode::GATEWAY_TIMEOUT,
            format!(
                "restock of {slug}: the product page got stock event {seq} but did not \
                 acknowledge re-rendering its buy box within {wait:?}"
            ),
        )
            .into_response();
    }
    (
        StatusCode::OK,
        format!("restocked {slug}: {left} left; the product page re-rendered its buy box"),
    )
        .into_response()
}
