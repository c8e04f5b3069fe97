//! Memory end to end (real Chromium, real extension, real host with its SQLite store, the demo
//! shop; the scripted backend as the model): a repeated goal is done from the action cache with
//! no model call, and a cached step that no longer fits falls through to the model.

use anyhow::{bail, Result};
use itinero::demo_shop::ShopOptions;
use itinero::harness::panel::log;
use itinero::harness::shop_session::{add_wool_socks, expect_done, step, Session, ADD_WOOL_SOCKS};
use itinero::harness::PageExt;
use serde_json::json;

/// The "decided" lines of the panel's log since line `from`, each ending in what decided it.
async fn decided(s: &Session, from: usize) -> Result<Vec<String>> {
    Ok(log(&s.panel)
        .await?
        .into_iter()
        .skip(from)
        .filter(|l| l.contains(". ") && l.ends_with(')'))
        .filter(|l| l.ends_with("(llm)") || l.ends_with("(cache)"))
        .collect())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_goal_again_is_done_from_the_cache_with_no_model_call() -> Result<()> {
    let s = Session::start(ShopOptions::default(), "shop/").await?;
    s.script(add_wool_socks())?;
    s.run(ADD_WOOL_SOCKS).await?;
    expect_done(&s.h, &s.panel, "in your cart").await?;
    let first = decided(&s, 0).await?;
    assert_eq!(first.len(), 4, "{first:#?}");
    assert!(first.iter().all(|l| l.ends_with("(llm)")), "{first:#?}");
    assert_eq!(s.in_cart("wool-socks"), 1);

    // Again, from the front page, with a model that fails any call.
    s.open("shop/").await?;
    s.script(vec![])?;
    let seen = log(&s.panel).await?.len();
    s.run("  add wool socks to my cart. ").await?;
    let answer = expect_done(&s.h, &s.panel, "in your cart").await?;
    let second = decided(&s, seen).await?;
    if second.len() != 4 || !second.iter().all(|l| l.ends_with("(cache)")) {
        bail!("the second run was not all from the cache: {second:#?}\n{answer}");
    }
    assert!(
        second[0].contains("from the cache: no model call"),
        "{second:#?}"
    );
    assert_eq!(s.in_cart("wool-socks"), 2);
    assert_eq!(s.shop.searches(), ["wool socks", "wool socks"]);
    Ok(())
}

/// Sets how many wool socks are left; the product page's button then says so.
async fn restock(s: &Session, left: u32) -> Result<()> {
    s.open("shop/product/wool-socks").await?;
    let url = s.url(&format!(
        "shop/_test/restock?product=wool-socks&left={left}"
    ));
    // Asked from the product page itself: the hook answers once that page shows the new count.
    let (status, text): (u16, String) = s
        .tab
        .run_js(&format!(
            "const r = await fetch({url:?}); return [r.status, await r.text()];"
        ))
        .await?;
    if status >= 300 {
        bail!("restock failed ({status}): {text}");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cached_step_that_no_longer_fits_is_left_to_the_model() -> Result<()> {
    let s = Session::start(ShopOptions::default().test_hooks(true), "shop/").await?;
    restock(&s, 5).await?;
    s.open("shop/").await?;
    let mut script = add_wool_socks();
    script[2] = step(
        &["12.99 EUR"],
        json!({"action": "click", "index": "{{button 'Add to cart (5 left)'}}"}),
    );
    s.script(script)?;
    s.run(ADD_WOOL_SOCKS).await?;
    expect_done(&s.h, &s.panel, "in your cart").await?;

    // Three left now: the page is the same but for a count (the same cache key), yet the
    // remembered "Add to cart (5 left)" is not clicked as if it were this button: the model is
    // asked for that step only.
    restock(&s, 3).await?;
    s.open("shop/").await?;
    s.script(vec![step(
        &["Add to cart (3 left)"],
        json!({"action": "click", "index": "{{button 'Add to cart (3 left)'}}"}),
    )])?;
    let seen = log(&s.panel).await?.len();
    s.run(ADD_WOOL_SOCKS).await?;
    let answer = expect_done(&s.h, &s.panel, "in your cart").await?;
    let second = decided(&s, seen).await?;
    let sources: Vec<&str> = second
        .iter()
        .map(|l| {
            if l.ends_with("(cache)") {
                "cache"
            } else {
                "model"
            }
        })
        .collect();
    assert_eq!(
        sources,
        ["cache", "cache", "model", "cache"],
        "{second:#?}\n{answer}"
    );
    let notes = log(&s.panel).await?.join("\n");
    assert!(
        notes.contains(
            "the cached step does not fit: button \"Add to cart (5 left)\" is not on this page"
        ),
        "{notes}"
    );
    assert_eq!(s.in_cart("wool-socks"), 2);
    Ok(())
}
