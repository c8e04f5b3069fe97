//! Looking around: the home page's listing, search, and a product's page.

use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, Uri};
use axum::response::Response;
use serde::Deserialize;

use super::not_found_page;
use crate::demo_shop::catalog::{self, Category, Sort};
use crate::demo_shop::pages::{self, BuyBox, NewsletterModal};
use crate::demo_shop::visitor::Visitor;
use crate::demo_shop::{DemoShop, Layout};

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct HomeQuery {
    pub category: String,
    pub sort: String,
}

pub async fn home(
    State(shop): State<DemoShop>,
    visitor: Visitor,
    uri: Uri,
    Query(query): Query<HomeQuery>,
) -> Response {
    let back = uri
        .path_and_query()
        .map_or("/shop/", |pq| pq.as_str())
        .to_string();
    render_home(&shop, &visitor, &query, &back, None, StatusCode::OK)
}

/// The home page; also what the newsletter's form shows again when its email is missing.
pub fn render_home(
    shop: &DemoShop,
    visitor: &Visitor,
    query: &HomeQuery,
    back: &str,
    newsletter_error: Option<&str>,
    status: StatusCode,
) -> Response {
    let category = match query.category.as_str() {
        "" => None,
        slug => match Category::from_slug(slug) {
            Some(c) => Some(c),
            None => {
                return not_found_page(visitor, &format!("There is no category named \"{slug}\"."))
            }
        },
    };
    let sort = Sort::from_slug(&query.sort);
    let products = catalog::listing(category, sort);
    let modal = (shop.options().newsletter_modal && !visitor.view.newsletter_dismissed).then_some(
        NewsletterModal {
            back,
            error: newsletter_error,
        },
    );
    visitor.page(
        status,
        pages::home(&visitor.chrome(""), category, sort, &products, modal),
    )
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct SearchQuery {
    pub q: String,
}

pub async fn search(
    State(shop): State<DemoShop>,
    visitor: Visitor,
    Query(SearchQuery { q }): Query<SearchQuery>,
) -> Response {
    let query = q.trim();
    if !query.is_empty() {
        shop.store().record_search(query);
    }
    let found = catalog::search(query);
    visitor.page(
        StatusCode::OK,
        pages::search(&visitor.chrome(query), query, &found),
    )
}

pub async fn product(
    State(shop): State<DemoShop>,
    visitor: Visitor,
    Path(slug): Path<String>,
) -> Response {
    let Some(product) = catalog::find(&slug) else {
        return not_found_page(&visitor, &format!("There is no product \"{slug}\"."));
    };
    if shop.layout() == Layout::Discontinued {
        return not_found_page(&visitor, &format!("{} is no longer sold.", product.name));
    }
    let buy = BuyBox {
        layout: shop.layout(),
        label: None,
        product,
        left: shop.store().stock_left(product),
        seq: shop.stock().latest_seq(),
        error: None,
        quantity: "1",
    };
    render_product(&shop, &visitor, &buy, StatusCode::OK)
}

pub fn render_product(
    shop: &DemoShop,
    visitor: &Visitor,
    buy: &BuyBox<'_>,
    status: StatusCode,
) -> Response {
    visitor.page(
        status,
        pages::product(&visitor.chrome(""), buy, shop.options().test_hooks),
    )
}
