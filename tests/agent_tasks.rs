//! Tasks on the demo shop, end to end: goals typed into the real side panel, run by the real host
//! in real Chromium, with the scripted backend as the model. Each test asserts what the shop's
//! server saw (searches, carts, messages, orders) as well as what the panel showed.
//!
//! The session, the script steps and the gate are `itinero::harness::shop_session`'s.

use std::time::Duration;

use anyhow::Result;
use itinero::demo_shop::{NewsletterChoice, ShopOptions};
use itinero::harness::panel::type_goal;
use itinero::harness::shop_session::{expect_done, step, step_after, Session};
use itinero::harness::{PageExt, WAIT};
use serde_json::{json, Value};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filtering_by_category_and_sorting_by_price_finds_the_cheapest_hat() -> Result<()> {
    let s = Session::start(ShopOptions::default(), "shop/").await?;
    s.script(vec![
        step(
            &["Goal: Which hat is the cheapest?", "Hats</a>"],
            json!({"thought": "Show the hats.", "action": "click", "index": "{{a 'Hats'}}"}),
        ),
        step(
            &["Hats — featured", "Sort by"],
            json!({"thought": "Sort them by price.", "action": "select", "index": "{{select 'Sort by'}}", "value": "Price: low to high"}),
        ),
        // Choosing an order submits the form: the select's action ends on another page.
        step(
            &["Hats — price: low to high", "Bobble hat"],
            json!({"thought": "The first is the cheapest.", "action": "done", "answer": "The cheapest hat is the Bobble hat, 16.99 EUR."}),
        ),
    ])?;
    s.run("Which hat is the cheapest?").await?;
    expect_done(&s.h, &s.panel, "Bobble hat, 16.99 EUR").await?;
    assert_eq!(s.tab_query("category").await?, "hats");
    assert_eq!(s.tab_query("sort").await?, "price-asc");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_contact_form_is_filled_and_sent_after_the_user_allows_it() -> Result<()> {
    let s = Session::start(ShopOptions::default(), "shop/contact").await?;
    let goal = "Ask the shop when order 1001 ships. I am Ana, ana@example.org";
    s.script(vec![
        step(
            &["Contact"],
            json!({"action": "type", "index": "{{input 'name'}}", "text": "Ana"}),
        ),
        step(
            &["value=\"Ana\""],
            json!({"action": "type", "index": "{{input 'email'}}", "text": "ana@example.org"}),
        ),
        step(
            &[],
            json!({"action": "select", "index": "{{select 'Topic'}}", "value": "Order question"}),
        ),
        step(
            &[],
            json!({"action": "type", "index": "{{textarea 'Message'}}", "text": "When does order 1001 ship?"}),
        ),
        step(
            &["value=\"ana@example.org\""],
            json!({"thought": "Send it.", "action": "click", "index": "{{button 'Send message'}}"}),
        ),
        step(
            &["Thanks, Ana! We will reply to ana@example.org."],
            json!({"action": "done", "answer": "I asked the shop; they will reply to ana@example.org."}),
        ),
    ])?;
    s.run(goal).await?;
    // Sending a message is a risky step: the user is asked first.
    let q = s.question().await?;
    assert!(q.contains("Send message"), "{q}");
    s.panel.find_element("#ask-allow").await?.click().await?;
    expect_done(&s.h, &s.panel, "they will reply").await?;
    let sent = s.shop.contact_messages();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(
        (
            sent[0].name.as_str(),
            sent[0].email.as_str(),
            sent[0].message.as_str()
        ),
        ("Ana", "ana@example.org", "When does order 1001 ship?")
    );
    assert_eq!(sent[0].topic.label(), "Order question");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_planned_goal_puts_two_items_in_the_cart_and_reports_the_total() -> Result<()> {
    let s = Session::start(ShopOptions::default(), "shop/product/wool-socks").await?;
    let goal = "Put wool socks in my cart, then cotton socks, then tell me the total";
    s.script(vec![
        // The goal chains three parts: the planner's call comes first.
        step(
            &[&format!("Goal: {goal}"), "\"subgoals\""],
            json!({"subgoals": ["Add wool socks to the cart", "Add cotton socks to the cart", "Report the cart's total"]}),
        ),
        step(
            &["1. Add wool socks to the cart ← now", "Wool socks"],
            json!({"action": "click", "index": "{{button 'Add to cart'}}", "subgoal_done": 1}),
        ),
        step(
            &["1. Add wool socks to the cart (done)", "Total: 12.99 EUR"],
            json!({"action": "type", "index": "{{input 'Search products'}}", "text": "cotton socks", "submit": true}),
        ),
        step(
            &["Results for cotton socks"],
            json!({"action": "click", "index": "{{a 'Cotton socks'}}"}),
        ),
        step(
            &["7.50 EUR"],
            json!({"action": "click", "index": "{{button 'Add to cart'}}", "subgoal_done": 2}),
        ),
        step(
            &["3. Report the cart's total ← now", "Total: 20.49 EUR"],
            json!({"action": "done", "answer": "The total is 20.49 EUR.", "subgoal_done": 3}),
        ),
    ])?;
    s.run(goal).await?;
    expect_done(&s.h, &s.panel, "20.49 EUR").await?;
    let mut cart: Vec<(String, u32)> = s
        .shop
        .cart_items()
        .into_iter()
        .map(|l| (l.slug, l.quantity))
        .collect();
    cart.sort();
    assert_eq!(
        cart,
        [("cotton-socks".to_owned(), 1), ("wool-socks".to_owned(), 1)]
    );
    let plan: Vec<String> = s
        .panel
        .run_js("return [...document.querySelectorAll('#plan-list li')].map(li => li.className + ':' + li.textContent);")
        .await?;
    assert_eq!(
        plan,
        [
            "done:Add wool socks to the cart",
            "done:Add cotton socks to the cart",
            "done:Report the cart's total"
        ]
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_newsletter_modal_is_dismissed_before_the_page_behind_it_is_used() -> Result<()> {
    let s = Session::start(ShopOptions::default().newsletter_modal(true), "shop/").await?;
    s.script(vec![
        // Behind the overlay nothing has an index, and its text is left out.
        step(
            &["Join our newsletter", "No thanks</button>"],
            json!({"thought": "Close the newsletter box first.", "action": "click", "index": "{{button 'No thanks'}}"}),
        ),
        step(
            &["Scarves</a>"],
            json!({"action": "click", "index": "{{a 'Scarves'}}"}),
        ),
        step(
            &["Silk scarf"],
            json!({"action": "done", "answer": "The scarves are shown: silk, chunky and linen."}),
        ),
    ])?;
    s.run("Show me the scarves").await?;
    expect_done(&s.h, &s.panel, "scarves are shown").await?;
    let dismissals = s.shop.newsletter_dismissals();
    assert_eq!(dismissals.len(), 1);
    assert!(matches!(dismissals[0].choice, NewsletterChoice::Declined));
    assert_eq!(s.tab_query("category").await?, "scarves");
    // The first prompt showed the overlay only.
    let log = s.log().await?;
    assert!(log.contains("1. Saw "), "{log}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_button_re_rendered_while_the_model_thinks_is_found_again() -> Result<()> {
    let s = Session::start(
        ShopOptions::default().test_hooks(true),
        "shop/product/wool-socks",
    )
    .await?;
    s.script(vec![
        // The shop re-renders the buy box (new nodes, "Add to cart (3 left)") before the reply.
        step_after(
            &s.url("shop/_test/restock?product=wool-socks&left=3"),
            &["Add to cart</button>"],
            json!({"action": "click", "index": "{{button 'Add to cart'}}"}),
        ),
        step(
            &["Total: 12.99 EUR"],
            json!({"action": "done", "answer": "Wool socks are in the cart."}),
        ),
    ])?;
    s.run("Add wool socks to my cart").await?;
    expect_done(&s.h, &s.panel, "in the cart").await?;
    let cart = s.shop.cart_items();
    assert_eq!(cart.len(), 1, "{cart:?}");
    assert_eq!(cart[0].slug, "wool-socks");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relabelled_button_is_recovered_without_asking_the_model() -> Result<()> {
    let s = Session::start(
        ShopOptions::default().test_hooks(true),
        "shop/product/wool-socks",
    )
    .await?;
    s.script(vec![
        // This time the new button says something else: the content script refuses to guess,
        // and the host's recovery finds the closest control on the fresh page.
        step_after(
            &s.url("shop/_test/restock?product=wool-socks&left=3&label=Add%20to%20basket"),
            &["Add to cart</button>"],
            json!({"action": "click", "index": "{{button 'Add to cart'}}"}),
        ),
        // The next model call is after the recovered click.
        step(
            &["Total: 12.99 EUR"],
            json!({"action": "done", "answer": "Wool socks are in the cart."}),
        ),
    ])?;
    s.run("Add wool socks to my cart").await?;
    expect_done(&s.h, &s.panel, "in the cart").await?;
    let cart = s.shop.cart_items();
    assert_eq!(cart.len(), 1, "{cart:?}");
    let log = s.log().await?;
    assert!(log.contains("target detached"), "{log}");
    assert!(
        log.contains("trying the closest control") && log.contains("\"Add to basket\" (recovery)"),
        "{log}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_three_failed_steps_the_user_is_asked_and_the_answer_helps() -> Result<()> {
    let s = Session::start(ShopOptions::default(), "shop/").await?;
    // Three steps of three unusable replies each (each step re-asks twice).
    let mut steps: Vec<Value> = (0..9)
        .map(|_| json!({"reply": "I am not sure what to do here."}))
        .collect();
    steps.push(step(
        &["What the user said about this site before:\n- Use the search box at the top"],
        json!({"action": "type", "index": "{{input 'Search products'}}", "text": "wool socks", "submit": true}),
    ));
    steps.push(step(
        &["12.99 EUR"],
        json!({"action": "done", "answer": "Wool socks cost 12.99 EUR."}),
    ));
    s.script(steps)?;
    s.run("What do wool socks cost?").await?;
    let q = s.question().await?;
    assert!(q.contains("I am stuck"), "{q}");
    // The answer is kept for the site only because the user ticks the box.
    s.panel.find_element("#ask-remember").await?.click().await?;
    s.panel
        .find_element("#ask-input")
        .await?
        .click()
        .await?
        .type_str("Use the search box at the top")
        .await?
        .press_key("Enter")
        .await?;
    expect_done(&s.h, &s.panel, "12.99 EUR").await?;
    assert_eq!(s.shop.searches(), ["wool socks"]);
    let log = s.log().await?;
    assert!(log.contains("the model's reply could not be used"), "{log}");
    let store = itinero_host::store::Store::open(
        &s.h.host_data_dir()
            .join(itinero_host::paths::STORE_FILE_NAME),
    )?;
    let lessons: Vec<String> = store
        .lessons(None, 10)?
        .into_iter()
        .map(|l| l.text)
        .collect();
    assert_eq!(lessons, ["Use the search box at the top"]);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_while_the_model_thinks_ends_the_task_before_it_acts() -> Result<()> {
    let s = Session::start(ShopOptions::default(), "shop/").await?;
    s.script(vec![step_after(
        &s.url("test/gate"),
        &[],
        json!({"action": "click", "index": "{{a 'Hats'}}"}),
    )])?;
    s.run("Show me the hats").await?;
    s.gate.wait_arrived(1).await?;
    s.panel.find_element("#stop").await?.click().await?;
    // The host's note that it marked the task stopped, not the panel's own "Stopping…" (shown
    // as the request leaves, which the model's reply could still overtake).
    s.panel
        .wait_for(
            &format!(
                "[...document.querySelectorAll('#log li.note')].some(li => li.textContent === {:?})",
                itinero_shared::words::STOP_RECEIVED
            ),
            WAIT,
        )
        .await?;
    s.gate.open();
    let (heading, _) = s.result().await?;
    assert_eq!(heading, "Stopped");
    assert_eq!(s.tab_query("category").await?, "", "the click was not made");
    let idle: bool = s
        .panel
        .run_js("return !document.querySelector('#run').hidden && document.querySelector('#stop').hidden;")
        .await?;
    assert!(idle);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_tasks_run_in_two_tabs_at_once() -> Result<()> {
    let s = Session::start(ShopOptions::default(), "shop/").await?;
    // Both tasks read this script; each first reply waits until both tasks are waiting.
    s.script(vec![
        step_after(
            &s.url("test/barrier"),
            &["Goal: What do wool socks cost?"],
            json!({"action": "type", "index": "{{input 'Search products'}}", "text": "wool socks", "submit": true}),
        ),
        step(
            &["Results for wool socks", "12.99 EUR"],
            json!({"action": "done", "answer": "Wool socks cost 12.99 EUR."}),
        ),
    ])?;
    s.tab.bring_to_front().await?;
    s.run("What do wool socks cost?").await?;
    s.gate.wait_arrived(1).await?;
    // A second tab and a second panel; the panel works in the page used last.
    let other = s.h.chromium.open(&s.url("shop/?category=hats")).await?;
    other
        .wait_for("document.readyState === 'complete'", WAIT)
        .await?;
    other.bring_to_front().await?;
    let panel2 = s.h.connected_panel().await?;
    type_goal(&panel2, "What do wool socks cost?").await?;
    expect_done(&s.h, &s.panel, "12.99 EUR").await?;
    expect_done(&s.h, &panel2, "12.99 EUR").await?;
    assert_eq!(s.shop.searches(), ["wool socks", "wool socks"]);
    for tab in [&s.tab, &other] {
        let path: String = tab
            .run_js("return location.pathname + location.search;")
            .await?;
        assert_eq!(path, "/shop/search?q=wool+socks");
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_the_tab_mid_task_ends_it_with_a_clear_message() -> Result<()> {
    let s = Session::start(ShopOptions::default(), "shop/").await?;
    s.script(vec![step_after(
        &s.url("test/gate"),
        &[],
        json!({"action": "click", "index": "{{a 'Hats'}}"}),
    )])?;
    s.run("Show me the hats").await?;
    s.gate.wait_arrived(1).await?;
    s.tab.clone().close().await?;
    s.gate.open();
    let (heading, text) = s.result().await?;
    assert_eq!(heading, "Failed", "{text}");
    assert!(
        text.starts_with("could not read the page: the tab the task works in (")
            && text.ends_with(") was closed"),
        "{text}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_the_host_mid_task_ends_it_with_a_clear_message() -> Result<()> {
    let s = Session::start(ShopOptions::default(), "shop/").await?;
    s.script(vec![step_after(
        &s.url("test/gate"),
        &[],
        json!({"action": "click", "index": "{{a 'Hats'}}"}),
    )])?;
    s.run("Show me the hats").await?;
    s.gate.wait_arrived(1).await?;
    let pid = s.panel.text_of("#host-pid").await?;
    let pid = pid.trim_start_matches("pid ").trim();
    let killed = std::process::Command::new("kill")
        .args(["-KILL", pid])
        .status()?;
    assert!(killed.success(), "kill {pid}");
    let (heading, text) = s.result().await?;
    assert_eq!(heading, "Failed", "{text}");
    assert!(text.contains("native host disconnected"), "{text}");
    // The panel is usable again, and the background brings a new host up.
    let idle: bool = s
        .panel
        .run_js("return !document.querySelector('#run').hidden;")
        .await?;
    assert!(idle);
    s.panel
        .wait_for(
            "document.querySelector('#status').dataset.state === 'connected'",
            WAIT + Duration::from_secs(10),
        )
        .await?;
    s.gate.open();
    Ok(())
}

/// The steps that fill in and send the contact form as `name`.
fn contact_steps(name: &str, then: Value) -> Vec<Value> {
    vec![
        step(
            &[],
            json!({"action": "type", "index": "{{input 'name'}}", "text": name}),
        ),
        step(
            &[],
            json!({"action": "type", "index": "{{input 'email'}}", "text": "ana@example.org"}),
        ),
        step(
            &[],
            json!({"action": "type", "index": "{{textarea 'Message'}}", "text": "Hello"}),
        ),
        step(
            &[],
            json!({"action": "click", "index": "{{button 'Send message'}}"}),
        ),
        then,
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_allow_on_this_site_is_remembered_for_the_next_task() -> Result<()> {
    let s = Session::start(ShopOptions::default(), "shop/contact").await?;
    s.script(contact_steps(
        "Ana",
        step(
            &["Thanks, Ana!"],
            json!({"action": "done", "answer": "Sent."}),
        ),
    ))?;
    s.run("Send the shop a hello from Ana, ana@example.org")
        .await?;
    s.question().await?;
    let always_shown: bool = s
        .panel
        .run_js("return !document.querySelector('#ask-always').hidden;")
        .await?;
    assert!(always_shown, "the host offers \"always allow\"");
    s.panel.find_element("#ask-always").await?.click().await?;
    expect_done(&s.h, &s.panel, "Sent.").await?;

    // The next task on the same site sends without asking.
    let mut steps = vec![step(
        &[],
        json!({"action": "navigate", "url": s.url("shop/contact")}),
    )];
    steps.extend(contact_steps(
        "Bo",
        step(
            &["Thanks, Bo!"],
            json!({"action": "done", "answer": "Sent again."}),
        ),
    ));
    s.script(steps)?;
    s.run("Send the shop a hello from Bo").await?;
    expect_done(&s.h, &s.panel, "Sent again.").await?;
    let log = s.log().await?;
    assert_eq!(log.matches("Asks: ").count(), 1, "{log}");
    assert!(
        log.contains("allowed without asking: you always allow \"send\""),
        "{log}"
    );
    let names: Vec<String> = s
        .shop
        .contact_messages()
        .into_iter()
        .map(|m| m.name)
        .collect();
    assert_eq!(names, ["Ana", "Bo"]);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_s_questions_are_answered_off_the_shop_s_pages_with_no_model_step() -> Result<()> {
    // The grounding in front of the scripted model, as in front of any other, and an empty
    // script: a step that reached the model would find nothing to reply.
    let s = Session::start_env(
        ShopOptions::default(),
        "shop/product/wool-socks",
        axum::Router::new(),
        vec![("ITINERO_GROUNDING".into(), "on".into())],
    )
    .await?;
    s.script(vec![])?;
    for (page, goal, answer) in [
        (
            "shop/product/wool-socks",
            "What do these socks cost?",
            "12.99 EUR",
        ),
        ("shop/product/sun-hat", "How much is it?", "24.50 EUR"),
        (
            "shop/",
            "How much is the cheapest scarf?",
            "Linen scarf (21.60 EUR)",
        ),
        (
            "shop/",
            "Which scarves do you have?",
            "Silk scarf, Chunky scarf, Linen scarf",
        ),
        // The results of a search for "hat" miss the beanie and the cap; the front page's
        // Hats lists them all.
        (
            "shop/search?q=hat",
            "Which hats does the shop sell?",
            "Knitted beanie, Sun hat, Bobble hat, Flat cap",
        ),
    ] {
        s.open(page).await?;
        s.run(goal).await?;
        expect_done(&s.h, &s.panel, answer).await?;
    }
    // The page's own socks were not searched for.
    assert!(
        !s.shop.searches().iter().any(|q| q.contains("these")),
        "{:?}",
        s.shop.searches()
    );
    Ok(())
}
