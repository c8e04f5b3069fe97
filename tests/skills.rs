//! Skills end to end (real Chromium, real extension, real host and store, the demo shop; the
//! scripted backend as the model): a run saved as a skill with the real `itinero-host skills
//! capture` replays for another product with no model call, also after the shop restyled its
//! buy box; a button that now means something else is not clicked (the model takes over and the
//! skill heals); a missing page stops the replay saying where.

use anyhow::{bail, Context, Result};
use itinero::demo_shop::{Layout, ShopOptions};
use itinero::harness::panel::log;
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

/// `itinero-host skills run` with `args`, against the session's host: (success, stdout, stderr).
async fn cli_run(s: &Session, args: &[&str]) -> Result<(bool, String, String)> {
    let out = tokio::time::timeout(
        WAIT * 4,
        tokio::process::Command::new(host_binary()?)
            .args(["skills", "run"])
            .args(args)
            .env("ITINERO_DATA_DIR", s.h.host_data_dir())
            .stdin(std::process::Stdio::null())
            .output(),
    )
    .await
    .context("skills run did not finish")??;
    Ok((
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_runs_from_the_command_line_with_new_parameters() -> Result<()> {
    let s = Session::start(ShopOptions::default(), "shop/").await?;
    record(&s).await?;
    s.script(vec![])?;

    let (ok, _, err) = cli_run(&s, &[NAME]).await?;
    assert!(!ok && err.contains("search_products"), "{err}");
    let (ok, _, err) = cli_run(&s, &["No such skill"]).await?;
    assert!(
        !ok && err.contains("there is no skill \"No such skill\""),
        "{err}"
    );

    let (ok, out, err) = cli_run(&s, &[NAME, "--param", "search_products=cotton socks"]).await?;
    assert!(ok, "{out}{err}");
    assert!(
        out.starts_with("Running \"Add to cart\" in tab ")
            && out.contains(": Add cotton socks to my cart\n"),
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
    let store = Store::open(&s.h.host_data_dir().join("itinero.sqlite3"))?;
    let skill = store.skill_by_name(NAME)?.context("skill gone")?;
    let stats = store.skill_summary(skill.id)?.context("no summary")?.stats;
    assert_eq!((stats.runs, stats.succeeded), (1, 1));
    Ok(())
}
