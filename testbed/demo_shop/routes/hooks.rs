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

/// A plain-text answer that says what went wrong: these endpoints are read by tests and by
/// the hook's script, not by people.
pub struct HookError(StatusCode, String);

impl IntoResponse for HookError {
    fn into_response(self) -> Response {
        (self.0, self.1).into_response()
    }
}

fn hooks_on(shop: &DemoShop) -> Result<(), HookError> {
    if shop.options().test_hooks {
        Ok(())
    } else {
        Err(HookError(
            StatusCode::NOT_FOUND,
            "test hooks are off: start the shop with ShopOptions { test_hooks: true, .. }".into(),
        ))
    }
}

fn find(slug: &str) -> Result<&'static Product, HookError> {
    catalog::find(slug).ok_or_else(|| {
        HookError(
            StatusCode::NOT_FOUND,
            format!("there is no product {slug:?}"),
        )
    })
}

fn number<T: std::str::FromStr>(name: &str, text: &str, what: &str) -> Result<T, HookError>
where
    T::Err: std::fmt::Display,
{
    text.parse().map_err(|e| {
        HookError(
            StatusCode::BAD_REQUEST,
            format!("{name}={text:?} is not {what}: {e}"),
        )
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
) -> Result<Response, HookError> {
    hooks_on(&shop)?;
    let product = find(&query.product)?;
    let after = match query.after.as_str() {
        "" => 0,
        text => number("after", text, "an event number")?,
    };
    let _listening = shop.stock().listen(product.slug);
    Ok(
        match timeout(POLL, shop.stock().next_event(product.slug, after)).await {
            Ok(Some(event)) => Json(event).into_response(),
            _ => StatusCode::NO_CONTENT.into_response(),
        },
    )
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct AckForm {
    seq: String,
}

/// The page has replaced its buy box for this event.
pub async fn stock_ack(
    State(shop): State<DemoShop>,
    Form(form): Form<AckForm>,
) -> Result<StatusCode, HookError> {
    hooks_on(&shop)?;
    let seq: u64 = number("seq", &form.seq, "an event number")?;
    if shop.stock().ack(seq) {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(HookError(
            StatusCode::BAD_REQUEST,
            format!("seq={seq} names no stock event"),
        ))
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct RestockQuery {
    product: String,
    left: String,
    /// The re-rendered button's text, when it should change more than its count.
    label: String,
}

/// `GET /shop/_test/restock?product=<slug>&left=<n>[&label=<text>]`: answers once a product page has
/// re-rendered its buy box, or with 504 and what it was waiting for.
pub async fn restock(
    State(shop): State<DemoShop>,
    Query(query): Query<RestockQuery>,
) -> Result<String, HookError> {
    hooks_on(&shop)?;
    let product = find(&query.product)?;
    let left: u32 = number("left", &query.left, "a number of items")?;
    let wait = shop.options().hook_wait;
    let deadline = Instant::now() + wait;
    let slug = product.slug;
    let gave_up = |waiting_for: String| {
        HookError(
            StatusCode::GATEWAY_TIMEOUT,
            format!("restock of {slug}: waited {wait:?}, but {waiting_for}"),
        )
    };
    timeout_at(deadline, shop.stock().wait_for_listener(slug))
        .await
        .map_err(|_| {
            gave_up(format!(
                "no product page listened for stock events (open /shop/product/{slug} in a tab first)"
            ))
        })?;
    shop.store().set_stock_left(product, left);
    let seq = shop.stock().publish(slug, left, |seq| {
        buy_box(&BuyBox {
            product,
            left: Some(left),
            seq,
            error: None,
            quantity: "1",
            label: Some(query.label.trim()).filter(|l| !l.is_empty()),
            layout: shop.layout(),
        })
        .into_string()
    });
    timeout_at(deadline, shop.stock().wait_for_ack(seq))
        .await
        .map_err(|_| {
            gave_up(format!(
                "the product page got stock event {seq} and did not acknowledge re-rendering its buy box"
            ))
        })?;
    Ok(format!(
        "restocked {slug}: {left} left; the product page re-rendered its buy box"
    ))
}
