//! Pages that list products: the home page (a category, in an order) and search results.

use maud::{html, Markup};

use super::layout::{page, Chrome};
use super::newsletter::NewsletterModal;
use crate::demo_shop::catalog::{Category, Product, Sort};

pub fn home(
    chrome: &Chrome<'_>,
    category: Option<Category>,
    sort: Sort,
    products: &[&Product],
    newsletter: Option<NewsletterModal<'_>>,
) -> Markup {
    let shown = category.map_or("All products", Category::label);
    let heading = format!("{shown} — {}", sort.heading());
    let sort_param = match sort {
        Sort::Featured => String::new(),
        other => format!("sort={}", other.slug()),
    };
    let category_href = |c: Option<Category>| {
        let params: Vec<String> = c
            .map(|c| format!("category={}", c.slug()))
            .into_iter()
            .chain((!sort_param.is_empty()).then(|| sort_param.clone()))
            .collect();
        if params.is_empty() {
            "/shop/".to_string()
        } else {
            format!("/shop/?{}", params.join("&"))
        }
    };
    let main = html! {
        h1 { (heading) }
        nav class="categories" aria-label="Categories" {
            ul {
                li {
                    a href=(category_href(None)) aria-current=[category.is_none().then_some("page")] { "All" }
                }
                @for c in Category::ALL {
                    li {
                        a href=(category_href(Some(c))) aria-current=[(category == Some(c)).then_some("page")] {
                            (c.label())
                        }
                    }
                }
            }
        }
        form class="sort" method="get" action="/shop/" {
            @if let Some(c) = category {
                input type="hidden" name="category" value=(c.slug());
            }
            label for="sort" { "Sort by" }
            select id="sort" name="sort" onchange="this.form.requestSubmit()" {
                @for s in Sort::ALL {
                    option value=(s.slug()) selected[s == sort] { (s.label()) }
                }
            }
            button type="submit" { "Apply" }
        }
        (grid(products))
    };
    page(chrome, &heading, main, newsletter.map(|m| m.render()))
}

pub fn search(chrome: &Chrome<'_>, query: &str, products: &[&Product]) -> Markup {
    let main = if query.trim().is_empty() {
        html! {
            h1 { "Search" }
            p { "Type what you are looking for into the search box." }
        }
    } else {
        html! {
            h1 { "Results for " (query) }
            @if products.is_empty() {
                p { "No products match \"" (query) "\"." }
            } @else {
                (grid(products))
            }
            p { a href="/shop/" { "Back to all products" } }
        }
    };
    let title = if query.trim().is_empty() {
        "Search".to_string()
    } else {
        format!("Results for {query}")
    };
    page(chrome, &title, main, None)
}

fn grid(products: &[&Product]) -> Markup {
    html! {
        p class="count" {
            (products.len()) @if products.len() == 1 { " product" } @else { " products" }
        }
        ul class="products" {
            @for p in products {
                li class="card" {
                    h2 { a href={ "/shop/product/" (p.slug) } { (p.name) } }
                    p class="price" { (p.price) }
                }
            }
        }
    }
}
