//! The agent end to end: a goal typed in the real side panel becomes a task in the real host,
//! which drives the demo shop (`itinero::demo_shop`) in real Chromium and shows its answer in
//! the panel. The model is the scripted backend (`ITINERO_BACKEND=scripted:FILE`, passed to the
//! host through Chromium's environment), whose steps also check what the prompt showed; its
//! replies name elements by index, as the shop's pages number them (header first: brand 0,
//! search box 1, Search 2, Home 3, Contact 4, Cart 5, Sign in 6).

use anyhow::Result;
use itinero::demo_shop::{DemoShop, ShopOptions};
use itinero::harness::panel::{log, result, type_goal};
use itinero::harness::{Harness, LaunchOptions, PageExt, WAIT};

/// Starts everything with the script as the model and the demo shop at `path` (under `/shop/`)
/// in a tab; returns the harness, the script's directory, the panel and the shop's tab.
async fn start(
    script: &str,
    shop: &DemoShop,
    path: &str,
) -> Result<(
    Harness,
    tempfile::TempDir,
    chromiumoxide::Page,
    chromiumoxide::Page,
)> {
    let dir = tempfile::tempdir()?;
    let script_path = dir.path().join("script.json");
    std::fs::write(&script_path, script)?;
    let h = Harness::start_full(LaunchOptions::scripted(&script_path), shop.router()).await?;
    let panel = h.connected_panel().await?;
    let tab = h.chromium.open(&h.fixture_url(path)).await?;
    tab.wait_for("document.readyState === 'complete'", WAIT)
        .await?;
    Ok((h, dir, panel, tab))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_goal_in_the_panel_searches_the_shop_and_shows_the_answer() -> Result<()> {
    let shop = DemoShop::new(ShopOptions::default());
    let (_h, _dir, panel, tab) = start(
        r#"[
          {"expect": ["Goal: What do wool socks cost?", "[1]<input type=search name=\"Search products\"", "All products — featured"],
           "reply": "{\"thought\": \"Search for them.\", \"action\": \"type\", \"index\": 1, \"text\": \"wool socks\", \"submit\": true}"},
          {"expect": ["Results for wool socks", "Wool socks</a>", "12.99 EUR", "1. type [1] input"],
           "reply": "{\"thought\": \"The price is listed.\", \"action\": \"done\", \"answer\": \"Wool socks cost 12.99 EUR.\"}"}
        ]"#,
        &shop,
        "shop/",
    )
    .await?;
    type_goal(&panel, "What do wool socks cost?").await?;
    let (heading, answer) = result(&panel, WAIT).await?;
    assert_eq!(answer, "Wool socks cost 12.99 EUR.");
    assert_eq!(heading, "Done");
    let searched: String = tab
        .run_js("return new URLSearchParams(location.search).get('q');")
        .await?;
    assert_eq!(
        searched, "wool socks",
        "the search was submitted in the tab"
    );
    assert_eq!(shop.searches(), ["wool socks"], "and reached the shop");
    let joined = log(&panel).await?.join("\n");
    assert!(
        joined.contains("1. type [1] \"Search products\" \"wool socks\" — Search for them. (llm)"),
        "{joined}"
    );
    assert!(
        joined.contains("2. Saw Results for wool socks — Demo Shop — "),
        "{joined}"
    );
    // Run is back, Stop is gone.
    let idle: bool = panel
        .run_js("return !document.querySelector('#run').hidden && document.querySelector('#stop').hidden;")
        .await?;
    assert!(idle);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn buying_waits_for_approval_and_deny_stops_the_purchase() -> Result<()> {
    let shop = DemoShop::new(ShopOptions::default());
    let (_h, _dir, panel, tab) = start(
        r#"[{"expect": ["Goal: Buy wool socks", "Your cart", "Wool socks</a>", "Total: 12.99 EUR", "[9]<button>Place order</button>"],
             "reply": "{\"thought\": \"Order them.\", \"action\": \"click\", \"index\": 9}"}]"#,
        &shop,
        "shop/product/wool-socks",
    )
    .await?;
    // Into the cart through the product page, as a person would.
    tab.find_element("#buy-box button").await?.click().await?;
    tab.wait_for(
        "location.pathname === '/shop/cart' && document.readyState === 'complete'",
        WAIT,
    )
    .await?;
    type_goal(&panel, "Buy wool socks").await?;
    let question = panel
        .wait_for("!document.querySelector('#ask').hidden && document.querySelector('#ask-text').textContent", WAIT)
        .await?;
    assert!(
        question
            .as_str()
            .unwrap_or_default()
            .contains("Place order"),
        "{question}"
    );
    let approval_shown: bool = panel
        .run_js("return !document.querySelector('#ask-approval').hidden && document.querySelector('#ask-question').hidden;")
        .await?;
    assert!(approval_shown);
    panel.find_element("#ask-deny").await?.click().await?;
    let (status, text) = result(&panel, WAIT).await?;
    assert_eq!(status, "Stopped");
    assert!(text.contains("you did not allow click [9]"), "{text}");
    assert!(shop.orders().is_empty(), "nothing was bought");
    let cart = shop.cart_items();
    assert_eq!(cart.len(), 1, "{cart:?}");
    assert_eq!((cart[0].slug.as_str(), cart[0].quantity), ("wool-socks", 1));
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_model_server_the_panel_says_how_to_start_one() -> Result<()> {
    // Nothing listens on the discard port: Ollama is "not running".
    let options = LaunchOptions {
        host_env: vec![
            ("ITINERO_BACKEND".into(), "ollama".into()),
            ("OLLAMA_HOST".into(), "127.0.0.1:9".into()),
        ],
        ..Default::default()
    };
    let shop = DemoShop::default();
    let h = Harness::start_full(options, shop.router()).await?;
    let panel = h.connected_panel().await?;
    let tab = h.chromium.open(&h.fixture_url("shop/")).await?;
    tab.wait_for("document.readyState === 'complete'", WAIT)
        .await?;
    type_goal(&panel, "find the invoice").await?;
    let (status, text) = result(&panel, WAIT).await?;
    assert_eq!(status, "Failed");
    assert!(
        text.contains("Ollama is not reachable at http://127.0.0.1:9/"),
        "{text}"
    );
    assert!(text.contains("ollama serve"), "{text}");
    Ok(())
}
