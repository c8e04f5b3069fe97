//! The demo shop in real Chromium, for what its router tests cannot see: the newsletter
//! overlay really covers the page for the extension's occlusion check, and the restock hook's
//! script really replaces the buy box with new nodes before the hook answers.

use anyhow::{Context, Result};
use chromiumoxide::Page;
use itinero::demo_shop::{DemoShop, NewsletterChoice, ShopOptions};
use itinero::harness::tree::flatten;
use itinero::harness::{Harness, LaunchOptions, PageExt, WAIT};
use itinero_shared::observation::Observation;
use serde_json::json;

/// Opens `path` of the shop in the foreground tab.
async fn open(h: &Harness, path: &str) -> Result<Page> {
    let tab = h.chromium.open(&h.fixture_url(path)).await?;
    tab.wait_for("document.readyState === 'complete'", WAIT)
        .await?;
    tab.bring_to_front().await?;
    Ok(tab)
}

/// The content script's observation of the shop's tab, asked from the panel.
async fn observe(h: &Harness, panel: &Page) -> Result<Observation> {
    let obs = panel
        .tab_message_when_ready(&h.fixture_url("shop/*"), &json!({"kind": "observe"}))
        .await?;
    serde_json::from_value(obs).context("reading the observation")
}

/// Accessible names of the elements that got an index, in index order.
fn indexed_names(obs: &Observation) -> Vec<String> {
    let mut nodes = Vec::new();
    flatten(&obs.root, &mut nodes);
    let mut indexed: Vec<_> = nodes
        .into_iter()
        .filter_map(|n| Some((n.index?, n.name.clone().unwrap_or_default())))
        .collect();
    indexed.sort();
    indexed.into_iter().map(|(_, name)| name).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_newsletter_overlay_covers_the_page_until_dismissed() -> Result<()> {
    let shop = DemoShop::new(ShopOptions::default().newsletter_modal(true));
    let h = Harness::start_full(LaunchOptions::default(), shop.router()).await?;
    let panel = h.open_panel().await?;
    let tab = open(&h, "shop/?category=socks").await?;

    let covered = indexed_names(&observe(&h, &panel).await?);
    assert_eq!(
        covered,
        ["Email", "Subscribe", "No thanks"],
        "only the dialog can be used"
    );

    tab.find_element("#newsletter button.secondary")
        .await?
        .click()
        .await?;
    tab.wait_for(
        "location.search === '?category=socks' && document.readyState === 'complete' \
         && !document.querySelector('#newsletter')",
        WAIT,
    )
    .await?;
    let open_page = indexed_names(&observe(&h, &panel).await?);
    assert_eq!(open_page[..3], ["Demo Shop", "Search products", "Search"]);
    assert!(open_page.iter().any(|n| n == "Wool socks"), "{open_page:?}");
    let dismissals = shop.newsletter_dismissals();
    assert_eq!(dismissals.len(), 1);
    assert_eq!(dismissals[0].choice, NewsletterChoice::Declined);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restock_replaces_the_buy_box_with_new_nodes() -> Result<()> {
    let shop = DemoShop::new(ShopOptions::default().test_hooks(true));
    let h = Harness::start_full(LaunchOptions::default(), shop.router()).await?;
    let tab = open(&h, "shop/product/wool-socks").await?;
    // The hook is called from the page itself, which keeps the old button to compare.
    let (status, text, button, old_connected): (u16, String, String, bool) = tab
        .run_js(
            "window.oldButton = document.querySelector('#buy-box button');
             const r = await fetch('/shop/_test/restock?product=wool-socks&left=3');
             return [r.status, await r.text(),
                     document.querySelector('#buy-box button').textContent,
                     window.oldButton.isConnected];",
        )
        .await?;
    assert_eq!(status, 200, "{text}");
    assert_eq!(button, "Add to cart (3 left)");
    assert!(!old_connected, "the old button left the page");

    // The new box works: its form posts to the cart.
    tab.find_element("#buy-box button").await?.click().await?;
    tab.wait_for("location.pathname === '/shop/cart'", WAIT)
        .await?;
    let cart = shop.cart_items();
    assert_eq!((cart[0].slug.as_str(), cart[0].quantity), ("wool-socks", 1));
    Ok(())
}
