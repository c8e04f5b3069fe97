//! Skills end to end (real Chromium, real extension, real host and store, the demo shop; the
//! scripted backend as the model): a run saved as a skill with the real `itinero-host skills
//! capture` replays for another product with no model call, also after the shop restyled its
//! buy box; a button that now means something else is not clicked (the model takes over and the
//! skill heals); a missing page stops the replay saying where.

use anyhow::{bail, Context, Result};
use itinero::demo_shop::{Layout, ShopOptions};
use itinero::harness::panel::{self, log};
use itinero::harness::shop_session::{add_wool_socks, expect_done, step, Session, ADD_WOOL_SOCKS};
use itinero::harness::{host_binary, PageExt, WAIT};
use itinero_host::store::Store;
use serde_json::json;

const NAME: &str = "Add to cart";

/// Runs "Add wool socks to my cart" with the model and saves it as the skill [`NAME`].
async fn record(s: &Session) -> Result<()> {
    s.script(add_wool_socks())?;
    s.run(ADD_WOOL_SOCKS).await?;
    expect_done(&s.h, &s.panel, "in your cart").await?;
    let store = Store::open(&s.h.host_data_dir().join("itinero.sqlite3"))?;
    let run = store.recent_runs(1)?.first().context("no run stored")?.id;
    let out = std::process::Command::new(host_binary()?)
        .args(["skills", "capture", &run.to_string(), "--name", NAME])
        .env("ITINERO_DATA_DIR", s.h.host_data_dir())
        .output()?;
    if !out.status.success() {
        bail!(
            "skills capture failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let skill = store
        .skill_by_name(NAME)?
        .context("the skill was not saved")?
        .skill;
    assert_eq!(skill.goal, "Add {search_products} to my cart");
    Ok(())
}

/// Types `goal` at the shop's front page and allows the skill the panel proposes.
async fn replay(s: &Session, goal: &str) -> Result<usize> {
    s.open("shop/").await?;
    let seen = log(&s.panel).await?.len();
    s.run(goal).await?;
    let q = s
        .panel
        .wait_for(
            "!document.querySelector('#ask').hidden && document.querySelector('#ask-text').textContent",
            WAIT,
        )
        .await?;
    let q = q.as_str().unwrap_or_default().to_owned();
    assert!(
        q.contains(&format!("Use the skill \"{NAME}\""))
            && q.contains("search_products = \"cotton socks\""),
        "{q}"
    );
    s.panel.find_element("#ask-allow").await?.click().await?;
    Ok(seen)
}

/// What decided each step since line `from` of the panel's log: `skill`, `llm`, `cache`.
async fn deciders(s: &Session, from: usize) -> Result<Vec<String>> {
    Ok(log(&s.panel)
        .await?
        .into_iter()
        .skip(from)
        .filter_map(|l| {
            let (_, source) = l.rsplit_once(" (")?;
            let source = source.strip_suffix(')')?;
            ["skill", "llm", "cache"]
                .contains(&source)
                .then(|| source.to_owned())
        })
        .collect())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_replays_for_another_product_with_no_model_call_even_after_a_restyle() -> Result<()>
{
    let s = Session::start(ShopOptions::default(), "shop/").await?;
    record(&s).await?;
    // No model from here on: any call fails the task.
    s.script(vec![])?;
    let from = replay(&s, "Add cotton socks to my cart").await?;
    let answer = expect_done(&s.h, &s.panel, "cotton socks are in your cart").await?;
    assert_eq!(deciders(&s, from).await?, ["skill"; 4], "{answer}");
    assert_eq!(s.in_cart("cotton-socks"), 1);
    assert_eq!(s.shop.searches(), ["wool socks", "cotton socks"]);

    // New ids and classes, the button moved above the quantity: still no model.
    s.shop.set_layout(Layout::Restyled);
    let from = replay(&s, "Add cotton socks to my cart").await?;
    expect_done(&s.h, &s.panel, "cotton socks are in your cart").await?;
    assert_eq!(deciders(&s, from).await?, ["skill"; 4]);
    assert_eq!(s.in_cart("cotton-socks"), 2);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_control_that_now_means_something_else_is_left_to_the_model_and_the_skill_heals(
) -> Result<()> {
    let s = Session::start(ShopOptions::default(), "shop/").await?;
    record(&s).await?;
    // "Add to cart" is now "Save for later" in the same place; adding is "Put in basket".
    s.shop.set_layout(Layout::Repurposed);
    s.script(vec![
        step(
            &["stopped at its step 3", "Put in basket"],
            json!({"action": "click", "index": "{{button 'Put in basket'}}"}),
        ),
        step(
            &["Cart (2)"],
            json!({"action": "done", "answer": "Cotton socks are in your cart."}),
        ),
    ])?;
    let from = replay(&s, "Add cotton socks to my cart").await?;
    let answer = expect_done(&s.h, &s.panel, "in your cart").await?;
    assert_eq!(
        deciders(&s, from).await?,
        ["skill", "skill", "llm", "llm"],
        "{answer}"
    );
    assert!(answer.contains("was updated from this run"), "{answer}");
    assert_eq!(s.in_cart("cotton-socks"), 1);
    let notes = log(&s.panel).await?.join("\n");
    assert!(
        notes.contains(
            "step 3 (click button \"Add to cart\"): button \"Add to cart\" is not on this page"
        ),
        "{notes}"
    );

    // Healed: the next replay clicks "Put in basket" with no model.
    s.script(vec![])?;
    let from = replay(&s, "Add cotton socks to my cart").await?;
    expect_done(&s.h, &s.panel, "in your cart").await?;
    assert_eq!(deciders(&s, from).await?, ["skill"; 4]);
    assert_eq!(s.in_cart("cotton-socks"), 2);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_page_stops_the_replay_saying_which_step_and_why() -> Result<()> {
    let s = Session::start(ShopOptions::default(), "shop/").await?;
    record(&s).await?;
    s.shop.set_layout(Layout::Discontinued);
    s.script(vec![])?;
    replay(&s, "Add cotton socks to my cart").await?;
    let (heading, text) = s.result().await?;
    assert_eq!(heading, "Failed", "{text}");
    assert!(
        text.contains("the skill \"Add to cart\" stopped: step 3 (click button \"Add to cart\")")
            && text.contains("no model could take over"),
        "{text}"
    );
    assert_eq!(s.in_cart("cotton-socks"), 0);
    Ok(())
}

/// `itinero-host` with `args`, against the session's host: (success, stdout, stderr).
async fn cli(s: &Session, args: &[&str]) -> Result<(bool, String, String)> {
    let out = tokio::time::timeout(
        WAIT * 4,
        tokio::process::Command::new(host_binary()?)
            .args(args)
            .env("ITINERO_DATA_DIR", s.h.host_data_dir())
            .stdin(std::process::Stdio::null())
            .output(),
    )
    .await
    .with_context(|| format!("itinero-host {args:?} did not finish"))??;
    Ok((
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn goals_and_skills_run_from_the_command_line() -> Result<()> {
    let s = Session::start(ShopOptions::default(), "shop/").await?;
    // `itinero-host run`: the model's run, printed step by step.
    s.script(add_wool_socks())?;
    let (ok, out, err) = cli(&s, &["run", ADD_WOOL_SOCKS]).await?;
    assert!(ok, "{out}{err}");
    assert!(
        out.contains("1. type \"wool socks\" into searchbox \"Search products\" and submit (llm)")
            && out.contains("Done: Wool socks are in your cart."),
        "{out}"
    );
    assert_eq!(s.in_cart("wool-socks"), 1);
    let store = Store::open(&s.h.host_data_dir().join("itinero.sqlite3"))?;
    let run = store.recent_runs(1)?.first().context("no run stored")?.id;
    let (ok, _, err) = cli(&s, &["skills", "capture", &run.to_string(), "--name", NAME]).await?;
    assert!(ok, "{err}");
    s.script(vec![])?;

    let (ok, _, err) = cli(&s, &["skills", "run", NAME]).await?;
    assert!(!ok && err.contains("search_products"), "{err}");
    let (ok, _, err) = cli(&s, &["skills", "run", "No such skill"]).await?;
    assert!(
        !ok && err.contains("there is no skill \"No such skill\""),
        "{err}"
    );

    let args = [
        "skills",
        "run",
        NAME,
        "--param",
        "search_products=cotton socks",
    ];
    let (ok, out, err) = cli(&s, &args).await?;
    assert!(ok, "{out}{err}");
    assert!(
        out.starts_with("Running in tab ") && out.contains(": Add cotton socks to my cart\n"),
        "{out}"
    );
    // Its steps (and the way to the skill's start page, as the tab was on the cart) are the
    // skill's: no model.
    let sources: Vec<&str> = out
        .lines()
        .filter(|l| {
            l.split_once(". ")
                .is_some_and(|(n, _)| n.parse::<u32>().is_ok())
        })
        .filter_map(|l| l.rsplit_once(" (")?.1.strip_suffix(')'))
        .collect();
    assert_eq!(sources, ["skill"; 5], "{out}");
    assert!(
        out.contains("Done: ") && out.contains("in your cart"),
        "{out}"
    );
    assert_eq!(s.in_cart("cotton-socks"), 1);

    // The run is the skill's, as if the panel had started it.
    let skill = store.skill_by_name(NAME)?.context("skill gone")?;
    let stats = store.skill_summary(skill.id)?.context("no summary")?.stats;
    assert_eq!((stats.runs, stats.succeeded), (1, 1));
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_panel_saves_a_run_as_a_skill_and_runs_edits_exports_deletes_and_imports_it(
) -> Result<()> {
    let s = Session::start(ShopOptions::default(), "shop/").await?;
    s.script(add_wool_socks())?;
    s.run(ADD_WOOL_SOCKS).await?;
    expect_done(&s.h, &s.panel, "in your cart").await?;

    // The success offers "Save as skill", named after the goal.
    s.panel
        .wait_for("!document.querySelector('#save-skill-open').hidden", WAIT)
        .await?;
    panel::click(&s.panel, "#save-skill-open").await?;
    let offered: String = s
        .panel
        .run_js("return document.querySelector('#save-skill-name').value;")
        .await?;
    assert_eq!(offered, "Add wool socks to my cart");
    panel::fill(&s.panel, "#save-skill-name", NAME).await?;
    panel::click(&s.panel, "#save-skill-save").await?;
    let saved = panel::text_with(&s.panel, "#save-skill-status", "Saved as the skill").await?;
    assert!(
        saved.contains("“Add to cart” (parameters {search_products})"),
        "{saved}"
    );

    // The library lists it and searches it.
    panel::click(&s.panel, "#nav-skills").await?;
    let card = panel::text_with(&s.panel, "#skills-list", NAME).await?;
    assert!(
        card.contains("Add {search_products} to my cart") && card.contains("never run"),
        "{card}"
    );
    panel::fill(&s.panel, "#skills-search", "umbrella").await?;
    panel::text_with(&s.panel, "#skills-status", "No skill matches.").await?;
    panel::fill(&s.panel, "#skills-search", "cart").await?;
    panel::text_with(&s.panel, "#skills-list", NAME).await?;

    // Open it; the parameter gets a better name.
    panel::click(&s.panel, "#skills-list li button").await?;
    panel::text_with(&s.panel, "#skill-title", NAME).await?;
    panel::fill(
        &s.panel,
        "#skill-params li[data-param='search_products'] input",
        "product",
    )
    .await?;
    panel::click(
        &s.panel,
        "#skill-params li[data-param='search_products'] button[data-edit='rename']",
    )
    .await?;
    panel::text_with(&s.panel, "#skill-goal", "Goal: Add {product} to my cart").await?;
    panel::text_with(&s.panel, "#skill-status", "Saved.").await?;

    // Run asks for the value first, then replays with no model on the Run page.
    s.script(vec![])?;
    panel::click(&s.panel, "#skill-run").await?;
    panel::text_with(&s.panel, "#skill-status", "Give a value for product.").await?;
    panel::fill(&s.panel, "#skill-param-product", "cotton socks").await?;
    let from = log(&s.panel).await?.len();
    panel::click(&s.panel, "#skill-run").await?;
    let answer = expect_done(&s.h, &s.panel, "cotton socks are in your cart").await?;
    let goal: String = s
        .panel
        .run_js("return document.querySelector('#goal').value;")
        .await?;
    assert_eq!(goal, "Add cotton socks to my cart");
    let used = deciders(&s, from).await?;
    assert!(
        !used.is_empty() && used.iter().all(|d| d == "skill"),
        "{used:?} {answer}"
    );
    assert_eq!(s.in_cart("cotton-socks"), 1);
    // A replay is a successful run like any other: it too can be saved (as a variant).
    assert!(
        s.panel
            .run_js::<bool>("return !document.querySelector('#save-skill-open').hidden;")
            .await?
    );

    // The statistics count the run.
    panel::click(&s.panel, "#nav-skills").await?;
    panel::text_with(&s.panel, "#skill-meta", "1 run · 100% succeeded · last").await?;

    // Rename and describe it.
    panel::fill(&s.panel, "#skill-name", "Add a product").await?;
    panel::fill(
        &s.panel,
        "#skill-edit-description",
        "Puts one product in the cart",
    )
    .await?;
    panel::click(&s.panel, "#skill-save").await?;
    panel::text_with(&s.panel, "#skill-title", "Add a product").await?;
    panel::text_with(
        &s.panel,
        "#skill-description",
        "Puts one product in the cart",
    )
    .await?;

    // Exports: the JSON (kept for the import below) and a Playwright script with the value in
    // the run form (the example, "wool socks", when it is empty).
    panel::fill(&s.panel, "#skill-param-product", "cotton socks").await?;
    panel::click(&s.panel, "#skill-export button[data-format='json']").await?;
    panel::text_with(
        &s.panel,
        "#skill-export-download",
        "Download add-a-product.skill.json",
    )
    .await?;
    let json: String = s
        .panel
        .run_js("return document.querySelector('#skill-export-text').value;")
        .await?;
    assert!(json.contains("\"name\": \"Add a product\""), "{json}");
    panel::click(&s.panel, "#skill-export button[data-format='playwright']").await?;
    panel::text_with(
        &s.panel,
        "#skill-export-download",
        "add-a-product.playwright.js",
    )
    .await?;
    let script: String = s
        .panel
        .run_js("return document.querySelector('#skill-export-text').value;")
        .await?;
    assert!(script.contains("cotton socks"), "{script}");

    // Delete takes two clicks; then the JSON comes back through the import box.
    panel::click(&s.panel, "#skill-delete").await?;
    panel::text_with(&s.panel, "#skill-delete", "Click again to delete").await?;
    panel::click(&s.panel, "#skill-delete").await?;
    panel::text_with(&s.panel, "#skills-status", "Skill deleted.").await?;
    let store = Store::open(&s.h.host_data_dir().join("itinero.sqlite3"))?;
    assert!(store.list_skills(None)?.is_empty());
    s.panel
        .run_js::<serde_json::Value>(
            "document.querySelector('#skills-import-box').open = true; return null;",
        )
        .await?;
    panel::fill(&s.panel, "#skills-import-text", &json).await?;
    panel::click(&s.panel, "#skills-import").await?;
    let imported =
        panel::text_with(&s.panel, "#skills-import-status", "Imported the skill").await?;
    assert!(
        imported.contains("\"Add a product\" (4 steps on http://"),
        "{imported}"
    );
    panel::text_with(&s.panel, "#skills-list", "Add a product").await?;
    let skill = store
        .skill_by_name("Add a product")?
        .context("not imported")?;
    assert_eq!(skill.skill.goal, "Add {product} to my cart");
    Ok(())
}
