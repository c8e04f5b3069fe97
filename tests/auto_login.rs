//! Auto-login end to end (real Chromium, extension, host and store; the demo shop; the scripted
//! backend as the model, with every prompt checked for the secrets): the host signs in by
//! itself on the one-step form, the two-step form and its TOTP code, after the user's one-time
//! consent; a locked vault asks the user; a skill captured from a run that signed in replays
//! with the vault signing in again; and pages built to get the password out (a prompt
//! injection, hidden fields, another origin's frame, a field that turns into plain text, an
//! unencrypted or look-alike origin) get nothing. Afterwards no secret is in any file of the
//! profile (store, logs), the extension's storage, the panel, a skill or an export.

use std::io::Write;
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};
use itinero::demo_shop::{Account, ShopOptions, SignIn};
use itinero::harness::panel::{click, fill, log};
use itinero::harness::secrets::assert_nowhere;
use itinero::harness::shop_session::{expect_done, step, Session};
use itinero::harness::{host_binary, PageExt, WAIT};
use itinero_host::store::Store;
use serde_json::{json, Value};

const PASSWORD: &str = "s3cret-horse-battery";
const SEED: &str = "JBSWY3DPEHPK3PXP";
const PASSPHRASE: &str = "tr0ub4dor&3 tr0ub4dor";

/// `itinero-host ARGS` on the session's host data, secrets on standard input; its stdout.
fn host(s: &Session, args: &[&str], stdin: &str) -> Result<String> {
    let mut child = Command::new(host_binary()?)
        .args(args)
        .env("ITINERO_DATA_DIR", s.h.host_data_dir())
        .env("ITINERO_VAULT_KEYRING", "off")
        .env("ITINERO_VAULT_PASSPHRASE", PASSPHRASE)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    child
        .stdin
        .take()
        .context("no stdin")?
        .write_all(stdin.as_bytes())?;
    let out = child.wait_with_output()?;
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    if !out.status.success() {
        bail!("itinero-host {args:?} failed: {stderr}");
    }
    Ok(stdout)
}

/// Saves alice's sign-in for `origin` (with the TOTP seed).
fn save(s: &Session, origin: &str) -> Result<()> {
    host(
        s,
        &["vault", "add", origin, "alice", "--totp"],
        &format!("{PASSWORD}\n{SEED}\n"),
    )?;
    Ok(())
}

fn origin(url: &str) -> String {
    itinero_host::store::origin_of(url).expect("a web URL")
}

/// A model call whose prompt must not hold a secret.
fn secretless(expect: &[&str], reply: Value) -> Value {
    let mut s = step(expect, reply);
    s["reject"] = json!([PASSWORD, SEED, PASSPHRASE]);
    s
}

fn done(expect: &[&str], answer: &str) -> Value {
    secretless(expect, json!({"action": "done", "answer": answer}))
}

/// Waits for the panel's question, checks it, and answers with the button `button`.
async fn answer_with(s: &Session, has: &str, button: &str) -> Result<()> {
    let q = s.question().await?;
    if !q.contains(has) {
        bail!("asked {q:?}, not about {has:?}\n{}", s.log().await?);
    }
    click(&s.panel, button).await
}

/// Waits for the panel's question and types `reply`.
async fn answer_text(s: &Session, has: &str, reply: &str) -> Result<()> {
    let q = s.question().await?;
    if !q.contains(has) {
        bail!("asked {q:?}, not about {has:?}\n{}", s.log().await?);
    }
    fill(&s.panel, "#ask-input", reply).await?;
    click(&s.panel, "#ask-send").await
}

async fn sign_out(s: &Session) -> Result<()> {
    let _: Value = s
        .tab
        .run_js("await fetch('/shop/logout', {method: 'POST'}); return null;")
        .await?;
    Ok(())
}

fn successes(s: &Session) -> usize {
    s.shop
        .sign_ins()
        .iter()
        .filter(|i| {
            **i == SignIn {
                username: "alice".into(),
                success: true,
            }
        })
        .count()
}

/// The latest run's id.
fn last_run(s: &Session) -> Result<String> {
    let store = Store::open(&s.h.host_data_dir().join("itinero.sqlite3"))?;
    Ok(store
        .recent_runs(1)?
        .first()
        .context("no run stored")?
        .id
        .to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_host_signs_in_on_one_and_two_step_forms_with_a_code_and_no_secret_gets_out(
) -> Result<()> {
    let account = Account::new("alice", PASSWORD).with_totp(SEED);
    let s = Session::start(ShopOptions::default().account(account), "shop/").await?;
    let shop = origin(&s.url("shop/"));
    save(&s, &shop)?;
    host(&s, &["vault", "unlock"], "")?;

    // One step: the model opens the sign-in page; the host asks once, then signs in.
    s.script(vec![
        secretless(
            &["Goal: Sign in to the shop"],
            json!({"action": "click", "index": "{{a 'Sign in'}}"}),
        ),
        done(
            &[&format!("signed in to {shop}"), "Signed in as alice"],
            "You are signed in.",
        ),
    ])?;
    s.run("Sign in to the shop").await?;
    answer_with(&s, &format!("Sign in to {shop} as alice"), "#ask-always").await?;
    expect_done(&s.h, &s.panel, "You are signed in.").await?;
    assert_eq!(successes(&s), 1);
    let one_step = last_run(&s)?;

    // A CAPTCHA: the host fills the form, and the user solves it and sends the form.
    sign_out(&s).await?;
    s.open("auto_login/captcha.html").await?;
    s.script(vec![done(
        &[&format!("signed in to {shop}")],
        "Signed in past the CAPTCHA.",
    )])?;
    s.run("Sign in").await?;
    let q = s.question().await?;
    assert!(q.contains("shows a CAPTCHA"), "{q}");
    let filled: String = s
        .tab
        .run_js("return document.getElementById('username').value;")
        .await?;
    assert_eq!(filled, "alice");
    let _: Value = s
        .tab
        .run_js("document.getElementById('not-robot').click(); document.querySelector('form').requestSubmit(); return null;")
        .await?;
    // The user answers once the shop has let them in.
    s.tab
        .wait_for(
            "location.pathname === '/shop/' && document.readyState === 'complete'",
            WAIT,
        )
        .await?;
    answer_text(&s, "shows a CAPTCHA", "solved").await?;
    expect_done(&s.h, &s.panel, "Signed in past the CAPTCHA.").await?;
    assert_eq!(successes(&s), 2);

    // Two steps and a TOTP code, from the two-step page, without asking again.
    sign_out(&s).await?;
    s.open("shop/signin").await?;
    s.script(vec![done(
        &[&format!("signed in to {shop}")],
        "Signed in with the code.",
    )])?;
    s.run("Sign in with the two-step form").await?;
    expect_done(&s.h, &s.panel, "Signed in with the code.").await?;
    assert_eq!(successes(&s), 3);
    let steps = s.log().await?;
    for said in [
        "the host filled in the saved username",
        "the host filled in the saved password",
        "the host filled in the saved one-time code",
        &format!("signed in to {shop}"),
    ] {
        assert!(steps.contains(said), "{said:?} not in\n{steps}");
    }
    // No picture of a page the host typed a secret into.
    let two_step = last_run(&s)?;
    let shown: Value =
        serde_json::from_str(&host(&s, &["runs", "show", &two_step, "--json"], "")?)?;
    let signed_in: Vec<u64> = shown["steps"]
        .as_array()
        .context("no steps")?
        .iter()
        .filter(|step| {
            step["strategy"] == "vault"
                && step["outcome_text"]
                    .as_str()
                    .is_some_and(|t| t.contains("filled in the saved"))
        })
        .filter_map(|step| step["n"].as_u64())
        .collect();
    assert!(!signed_in.is_empty(), "no sign-in step in {shown}");
    for n in &signed_in {
        let picture = shown["pictures"]
            .as_array()
            .and_then(|p| p.iter().find(|p| p["n"].as_u64() == Some(*n)))
            .with_context(|| format!("step {n} has no picture record in {shown}"))?;
        assert_eq!(picture["bytes"], 0, "step {n} was pictured");
        assert_eq!(picture["withheld"], "a saved secret was typed in this step");
    }
    let audit = host(&s, &["vault", "audit"], "")?;
    for what in ["consented", "filled", "signed in"] {
        assert!(audit.contains(what), "{what} not in\n{audit}");
    }

    // The run as a skill and its exports hold no secret, and no step of the host's sign-in.
    host(
        &s,
        &["skills", "capture", &one_step, "--name", "Sign in"],
        "",
    )?;
    let mut exported = String::new();
    for format in ["markdown", "json", "playwright"] {
        exported += &host(&s, &["skills", "export", "Sign in", "--format", format], "")?;
    }
    assert!(exported.contains("Sign in"), "{exported}");
    assert!(!exported.contains("filled in the saved"), "{exported}");
    for secret in [PASSWORD, SEED] {
        assert!(!exported.contains(secret), "an export holds a secret");
    }
    assert_nowhere(&s.h, &s.panel, &[PASSWORD, SEED, PASSPHRASE]).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_locked_vault_asks_and_a_skill_replays_with_the_vault_signing_in() -> Result<()> {
    let account = Account::new("alice", PASSWORD);
    let s = Session::start(ShopOptions::default().account(account), "shop/").await?;
    let shop = origin(&s.url("shop/"));
    // Saved from the terminal: the running host has not been given the passphrase.
    save(&s, &shop)?;
    s.script(vec![
        secretless(
            &["Goal: Sign in to the shop"],
            json!({"action": "click", "index": "{{a 'Sign in'}}"}),
        ),
        done(&[&format!("signed in to {shop}")], "You are signed in."),
    ])?;
    s.run("Sign in to the shop").await?;
    answer_with(&s, &format!("Sign in to {shop} as alice"), "#ask-always").await?;
    // Locked: the user is asked, unlocks from the terminal, and answers.
    let q = s.question().await?;
    assert!(q.starts_with("The vault is locked"), "{q}");
    host(&s, &["vault", "unlock"], "")?;
    answer_text(&s, "The vault is locked", "unlocked").await?;
    expect_done(&s.h, &s.panel, "You are signed in.").await?;
    assert_eq!(successes(&s), 1);

    // Captured as a skill, replayed after signing out: the vault signs in, no model call.
    host(
        &s,
        &["skills", "capture", &last_run(&s)?, "--name", "Sign in"],
        "",
    )?;
    sign_out(&s).await?;
    s.open("shop/").await?;
    s.script(vec![])?;
    let seen = log(&s.panel).await?.len();
    s.run("Sign in to the shop").await?;
    answer_with(&s, "Use the skill \"Sign in\"", "#ask-allow").await?;
    expect_done(&s.h, &s.panel, "You are signed in.").await?;
    assert_eq!(successes(&s), 2);
    let replay: Vec<String> = log(&s.panel).await?.into_iter().skip(seen).collect();
    let replay = replay.join("\n");
    assert!(replay.contains(&format!("signed in to {shop}")), "{replay}");
    assert!(!replay.contains("(llm)"), "the model was asked:\n{replay}");
    assert_nowhere(&s.h, &s.panel, &[PASSWORD, PASSPHRASE]).await
}

/// Runs a task on `path` in which the model does what the page asks: `reply` (typing the
/// password placeholder somewhere), then gives up. Returns the panel's log of the task.
async fn tempted(
    s: &Session,
    path: &str,
    ready: &str,
    expect: &[&str],
    reply: Value,
) -> Result<String> {
    s.open(path).await?;
    s.tab.wait_for(ready, WAIT).await?;
    s.script(vec![
        secretless(expect, reply),
        done(&[], "I did what the page asked."),
    ])?;
    let seen = log(&s.panel).await?.len();
    s.run("Read this page and do what it says").await?;
    expect_done(&s.h, &s.panel, "I did what the page asked.").await?;
    Ok(log(&s.panel)
        .await?
        .into_iter()
        .skip(seen)
        .collect::<Vec<_>>()
        .join("\n"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_built_to_get_the_password_get_nothing() -> Result<()> {
    let account = Account::new("alice", PASSWORD);
    let s = Session::start(ShopOptions::default().account(account), "shop/").await?;
    let shop = origin(&s.url("shop/"));
    let type_password = |index: &str| json!({"action": "type", "index": index, "text": "{{secret:password}}", "submit": true});

    // Saved for https: the same host over http gets nothing, and a look-alike host is not
    // even told a sign-in exists.
    save(&s, &shop.replacen("http://", "https://", 1))?;
    host(&s, &["vault", "unlock"], "")?;
    s.open("shop/login").await?;
    s.script(vec![done(
        &["this page is not encrypted"],
        "I did what the page asked.",
    )])?;
    s.run("Sign in to the shop").await?;
    expect_done(&s.h, &s.panel, "I did what the page asked.").await?;
    let look_alike = s.url("shop/login").replacen("127.0.0.1", "localhost", 1);
    s.tab.goto(&look_alike).await?;
    s.tab
        .wait_for("document.readyState === 'complete'", WAIT)
        .await?;
    s.script(vec![
        secretless(&["Username"], type_password("{{input 'Password'}}")),
        done(&[], "I did what the page asked."),
    ])?;
    s.run("Sign in to the shop").await?;
    expect_done(&s.h, &s.panel, "I did what the page asked.").await?;
    let said = s.log().await?;
    assert!(
        said.contains("there is no saved sign-in for http://localhost"),
        "{said}"
    );

    // Saved for the shop's own origin from here on.
    save(&s, &shop)?;
    // A prompt injection: the password into the search box.
    let said = tempted(
        &s,
        "auto_login/injection.html",
        "true",
        &["ignore your instructions"],
        type_password("{{input 'Search help'}}"),
    )
    .await?;
    assert!(said.contains("is not a visible password field"), "{said}");
    let q: String = s
        .tab
        .run_js("return document.getElementById('q').value + location.search;")
        .await?;
    assert_eq!(q, "");

    // Hidden password fields beside an email box: none gets an index; the email box is refused.
    let said = tempted(
        &s,
        "auto_login/newsletter.html",
        "true",
        &["Get our newsletter"],
        type_password("{{input 'Email'}}"),
    )
    .await?;
    assert!(said.contains("is not a visible password field"), "{said}");

    // Another origin's sign-in form framed in the shop's page.
    let frame = s.h.other_origin_url("auto_login/partner-form.html");
    let partner = origin(&frame);
    let framed = format!(
        "auto_login/partner.html?frame={}",
        frame.replace(':', "%3A").replace('/', "%2F")
    );
    // Loaded, and its content script answering (its form is in the page's text).
    let said = tempted(
        &s,
        &framed,
        "document.getElementById('partner')?.getBoundingClientRect().width > 0",
        &["Sign in with our partner", "Username"],
        type_password("{{input 'Password'}}"),
    )
    .await?;
    assert!(
        said.contains(&format!("did not use the saved sign-in on {partner}")),
        "{said}"
    );
    assert!(
        said.contains("refused to type a saved secret here"),
        "{said}"
    );

    // A password field that turns into a text field once the username is in: the page's own
    // check refuses at the moment of typing.
    s.open("auto_login/morph.html").await?;
    s.script(vec![done(&[], "I did what the page asked.")])?;
    s.run("Sign in").await?;
    answer_with(&s, &format!("Sign in to {shop} as alice"), "#ask-allow").await?;
    expect_done(&s.h, &s.panel, "I did what the page asked.").await?;
    let said = s.log().await?;
    assert!(
        said.contains(
            "refused to type the saved password: a field of type \"text\" does not take a password"
        ),
        "{said}"
    );
    let shown: String = s
        .tab
        .run_js("return document.getElementById('password').value;")
        .await?;
    assert_eq!(shown, "");

    // A sign-in form that says it sends with GET: the password would be in the next page's
    // address, so the page's own check refuses it.
    s.open("auto_login/get-form.html").await?;
    s.script(vec![done(&[], "I did what the page asked.")])?;
    s.run("Sign in").await?;
    answer_with(&s, &format!("Sign in to {shop} as alice"), "#ask-allow").await?;
    expect_done(&s.h, &s.panel, "I did what the page asked.").await?;
    let said = s.log().await?;
    assert!(
        said.contains("refused to type the saved password: its form sends with GET"),
        "{said}"
    );
    let (address, typed): (String, String) = s
        .tab
        .run_js("return [location.href, document.getElementById('password').value];")
        .await?;
    assert!(!address.contains("password="), "{address}");
    assert_eq!(typed, "");

    let audit = host(&s, &["vault", "audit", "--limit", "100"], "")?;
    assert!(audit.matches("refused").count() >= 6, "{audit}");
    assert!(!audit.contains(" filled "), "{audit}");
    assert_eq!(s.shop.sign_ins(), []);

    // A form that says nothing of how it is sent and that no script sends: the password is
    // typed, but the browser's own GET sending of it is held back.
    s.open("auto_login/bare-form.html").await?;
    s.script(vec![done(&[], "I did what the page asked.")])?;
    s.run("Sign in").await?;
    answer_with(&s, &format!("Sign in to {shop} as alice"), "#ask-allow").await?;
    expect_done(&s.h, &s.panel, "I did what the page asked.").await?;
    let (address, typed): (String, String) = s
        .tab
        .run_js("return [location.href, document.getElementById('password').value];")
        .await?;
    assert_eq!(typed, PASSWORD, "the password was not typed");
    assert!(
        !address.contains('?'),
        "the form was sent with GET: {address}"
    );
    assert_nowhere(&s.h, &s.panel, &[PASSWORD, PASSPHRASE]).await
}

/// Attempts on the members site: (member, promo code, accepted).
type Attempts = std::sync::Arc<std::sync::Mutex<Vec<(String, String, bool)>>>;

/// A site the generic form finder gets wrong: a promo-code box sits between the member number
/// and the PIN, and nothing says "username". Its home page has no form; `/members/enter` has.
fn members_site(attempts: Attempts) -> axum::Router {
    use axum::response::Html;
    use axum::routing::get;
    use std::collections::HashMap;
    const FORM: &str = r#"<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Members area</title></head>
<body><h1>Members area</h1>{error}<form method="post" action="/members/enter">
<label for="member">Member number</label> <input id="member" name="member" type="text">
<label for="promo">Promo code</label> <input id="promo" name="promo" type="text">
<label for="pin">PIN</label> <input id="pin" name="pin" type="password">
<button type="submit">Enter</button></form></body></html>"#;
    axum::Router::new()
        .route(
            "/members/",
            get(|| async {
                Html("<!doctype html><html lang=\"en\"><head><title>Members</title></head><body><h1>Members only</h1><p>Our offers are for members.</p></body></html>")
            }),
        )
        .route(
            "/members/enter",
            get(|| async { Html(FORM.replace("{error}", "")) }).post(
                move |axum::Form(f): axum::Form<HashMap<String, String>>| async move {
                    let field = |k: &str| f.get(k).cloned().unwrap_or_default();
                    let ok = field("member") == "alice" && field("pin") == PASSWORD;
                    attempts
                        .lock()
                        .unwrap()
                        .push((field("member"), field("promo"), ok));
                    if ok {
                        Html("<!doctype html><html lang=\"en\"><head><title>Members</title></head><body><p>Welcome, member alice.</p></body></html>".to_owned())
                    } else {
                        Html(FORM.replace("{error}", "<p>Wrong member number or PIN.</p>"))
                    }
                },
            ),
        )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_site_override_names_the_fields_and_the_success_check() -> Result<()> {
    let attempts = Attempts::default();
    let s = Session::start_with(
        ShopOptions::default(),
        "members/",
        members_site(attempts.clone()),
    )
    .await?;
    let site = origin(&s.url("members/"));
    let enter = s.url("members/enter");
    std::fs::write(
        s.h.host_data_dir().join("sites.toml"),
        format!(
            "[[site]]\norigin = \"{site}\"\nlogin_url = \"{enter}\"\nusername = {{ id = \"member\" }}\npassword = {{ name = \"pin\" }}\nsubmit = {{ label = \"Enter\" }}\nsuccess = {{ text = \"Welcome, member\" }}\n"
        ),
    )?;
    save(&s, &site)?;
    host(&s, &["vault", "unlock"], "")?;
    s.script(vec![
        secretless(
            &[&format!("open {enter} and the host signs in there")],
            json!({"action": "navigate", "url": enter}),
        ),
        done(
            &[&format!("signed in to {site}"), "Welcome, member"],
            "You are in the members area.",
        ),
    ])?;
    s.run("Sign in to the members area").await?;
    answer_with(&s, &format!("Sign in to {site} as alice"), "#ask-allow").await?;
    expect_done(&s.h, &s.panel, "You are in the members area.").await?;
    assert_eq!(
        *attempts.lock().unwrap(),
        [("alice".to_owned(), String::new(), true)]
    );

    // A broken file is reported in the panel; the task goes on without it.
    std::fs::write(
        s.h.host_data_dir().join("sites.toml"),
        "[[site]]\norigin = 7\n",
    )?;
    s.script(vec![done(&[], "Nothing to do.")])?;
    s.run("Say hello").await?;
    expect_done(&s.h, &s.panel, "Nothing to do.").await?;
    let said = s.log().await?;
    assert!(
        said.contains("sites.toml is not valid")
            && said.contains("signing in without the overrides"),
        "{said}"
    );
    assert_nowhere(&s.h, &s.panel, &[PASSWORD, PASSPHRASE]).await
}
