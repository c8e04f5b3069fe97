//! A skill exported as a Playwright script replays outside itinero: the script runs with Node
//! and `playwright-core` (installed into `tools/` by scripts/test) in Debian's Chromium against
//! the demo shop, with a parameter value other than the one the skill was captured with, and
//! the shop records the search and the cart it was asked for. A step whose control is gone
//! fails the script, naming the step.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use anyhow::{Context, Result};
use itinero::demo_shop::{DemoShop, ShopOptions};
use itinero::harness::{workspace_root, LaunchOptions};
use itinero_host::skills::{to_playwright, words};
use itinero_shared::action::{Action, Fingerprint, Target};
use itinero_shared::skills::{Param, Postcondition, Skill, SkillStep, SKILL_FORMAT};

/// The site the skill was captured on; the script is pointed at the test's shop by `BASE_URL`.
const CAPTURED_ON: &str = "https://shop.example";

fn target(fingerprint: Fingerprint) -> Target {
    Target {
        index: 0,
        fingerprint,
    }
}

fn step(action: Action, url: &str, expect: Option<&str>) -> SkillStep {
    SkillStep {
        note: words::action(&action),
        url: format!("{CAPTURED_ON}{url}"),
        expect: expect
            .map(|p| Postcondition::Url {
                pattern: format!("{CAPTURED_ON}{p}"),
            })
            .into_iter()
            .collect(),
        action,
    }
}

/// Search the shop, open the product, add it to the cart: the skill capture makes of that run,
/// with the fingerprints the content script gives these elements.
fn add_to_cart_skill(product: &str) -> Skill {
    Skill {
        format: SKILL_FORMAT,
        name: "Add socks to the cart".into(),
        description: "Search for wool socks and add them to the cart".into(),
        origin: CAPTURED_ON.into(),
        goal: "Search for {query} and add them to the cart".into(),
        start_url: format!("{CAPTURED_ON}/shop/"),
        params: vec![Param {
            name: "query".into(),
            example: "wool socks".into(),
        }],
        steps: vec![
            step(
                Action::Type {
                    target: target(Fingerprint {
                        tag: "input".into(),
                        role: Some("searchbox".into()),
                        name: Some("Search products".into()),
                        aria_label: Some("Search products".into()),
                        name_attr: Some("q".into()),
                        path: "html>body>header[0]>form[0]>input[0]".into(),
                        ..Fingerprint::default()
                    }),
                    text: "{query}".into(),
                    submit: true,
                    clear: true,
                },
                "/shop/",
                Some("/shop/search?q"),
            ),
            step(
                Action::Click {
                    target: target(Fingerprint {
                        tag: "a".into(),
                        role: Some("link".into()),
                        name: Some(product.into()),
                        text: Some(product.into()),
                        path: "html>body>main[0]>ul[0]>li[0]>h2[0]>a[0]".into(),
                        ..Fingerprint::default()
                    }),
                },
                "/shop/search?q",
                Some("/shop/product/wool-socks"),
            ),
            step(
                Action::Click {
                    target: target(Fingerprint {
                        tag: "button".into(),
                        role: Some("button".into()),
                        name: Some("Add to cart".into()),
                        text: Some("Add to cart".into()),
                        path: "html>body>main[0]>article[0]>form[0]>button[0]".into(),
                        ..Fingerprint::default()
                    }),
                },
                "/shop/product/wool-socks",
                Some("/shop/cart"),
            ),
            step(
                Action::Done {
                    answer: "Added {query} to the cart".into(),
                    success: true,
                },
                "/shop/cart",
                None,
            ),
        ],
    }
}

/// Node and playwright-core, or a panic that says how to get them: a test that cannot run
/// must not pass.
fn node_modules() -> PathBuf {
    let modules = workspace_root().join("tools/node_modules");
    let node = Command::new("node").arg("--version").output();
    assert!(
        node.is_ok_and(|o| o.status.success()),
        "node was not found: run scripts/test (it installs Node.js and the npm tools in tools/)"
    );
    assert!(
        modules.join("playwright-core/package.json").exists(),
        "{} has no playwright-core: run scripts/test (it runs `npm ci --prefix tools`)",
        modules.display()
    );
    modules
}

fn chromium() -> PathBuf {
    let path = LaunchOptions::default().chromium;
    assert!(
        path.exists(),
        "no browser was found at {}: run scripts/test (it finds or installs one and sets ITINERO_CHROMIUM), or set ITINERO_CHROMIUM to Chromium, Chrome for Testing, Brave or Edge",
        path.display()
    );
    path
}

/// Runs the script with Node against `base_url`.
fn run_script(script: &str, dir: &Path, base_url: &str) -> Result<Output> {
    let file = dir.join("skill.js");
    std::fs::write(&file, script)?;
    Command::new("node")
        .arg(&file)
        .env("NODE_PATH", node_modules())
        .env("CHROMIUM", chromium())
        .env("BASE_URL", base_url)
        .env("STEP_TIMEOUT_MS", "5000")
        .output()
        .context("running node")
}

/// The shop on a loopback port, served until the test ends.
async fn serve(shop: &DemoShop) -> Result<String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let router = shop.router();
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    Ok(format!("http://{addr}"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exported_script_replays_the_skill_with_another_value_against_the_demo_shop(
) -> Result<()> {
    let shop = DemoShop::new(ShopOptions::default());
    let base = serve(&shop).await?;
    let dir = tempfile::tempdir()?;
    let script = to_playwright(
        &add_to_cart_skill("Wool socks"),
        &[("query".to_owned(), "wool".to_owned())],
    )?;

    let out = tokio::task::spawn_blocking({
        let dir = dir.path().to_path_buf();
        move || run_script(&script, &dir, &base)
    })
    .await??;
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(
        out.status.success(),
        "the script failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(stdout.contains("done: Added wool to the cart"), "{stdout}");
    assert!(
        stdout.contains("skill \"Add socks to the cart\" replayed"),
        "{stdout}"
    );

    assert_eq!(
        shop.searches(),
        ["wool"],
        "the parameter's value was searched for"
    );
    let cart = shop.cart_items();
    assert_eq!(cart.len(), 1, "{cart:?}");
    assert_eq!((cart[0].slug.as_str(), cart[0].quantity), ("wool-socks", 1));
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_whose_control_is_gone_fails_the_script_naming_it() -> Result<()> {
    let shop = DemoShop::new(ShopOptions::default());
    let base = serve(&shop).await?;
    let dir = tempfile::tempdir()?;
    // The results have no such product: step 2 cannot find its link.
    let script = to_playwright(
        &add_to_cart_skill("Velvet socks"),
        &[("query".to_owned(), "wool socks".to_owned())],
    )?;
    let out = tokio::task::spawn_blocking({
        let dir = dir.path().to_path_buf();
        move || run_script(&script, &dir, &base)
    })
    .await??;
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr:\n{stderr}");
    assert!(
        stderr.contains(
            "failed: step 2 (click link \"Velvet socks\"): cannot find link \"Velvet socks\""
        ),
        "{stderr}"
    );
    assert_eq!(shop.searches(), ["wool socks"]);
    assert!(shop.cart_items().is_empty());
    Ok(())
}
