//! The host drives the browser: `itinero-host tabs|observe|act`, run as a separate process the
//! way a person runs it, reaches the host that Chromium started through its control socket,
//! and the host reaches the page through the extension's background and content script.
//! The control socket is a Unix socket.
#![cfg(unix)]

use std::path::PathBuf;
use std::process::{Output, Stdio};

use anyhow::{bail, Context, Result};
use axum::response::Redirect;
use axum::routing::get;
use chromiumoxide::Page;
use itinero::harness::tree::{find_by_id as find, flatten};
use itinero::harness::{host_binary, Harness, PageExt, WAIT};
use itinero_host::control::connect_in;
use itinero_shared::messages::TabInfo;
use itinero_shared::observation::{DomNode, Observation};
use serde_json::{json, Value};
use tokio::process::Command;

/// The end of a log, for a failure message.
fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// The CLI, pointed at the data directory of the harness's host.
struct Cli {
    bin: PathBuf,
    data_dir: PathBuf,
}

impl Cli {
    /// Waits until the host that Chromium started listens on its control socket.
    async fn for_harness(h: &Harness) -> Result<Self> {
        let data_dir = h.host_data_dir();
        let run_dir = data_dir.join("run");
        let deadline = std::time::Instant::now() + WAIT;
        while connect_in(&run_dir, None).await.is_err() {
            if std::time::Instant::now() > deadline {
                // Both logs: whether the background tried to start the host, and how far it got.
                bail!(
                    "the host never opened its control socket in {}\n--- chromium log ---\n{}\n--- host log ---\n{}",
                    run_dir.display(),
                    last_lines(&h.chromium.log(), 40),
                    last_lines(&h.chromium.host_log(), 40)
                );
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        Ok(Self {
            bin: host_binary()?,
            data_dir,
        })
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(&self.bin);
        cmd.args(args)
            .env("ITINERO_DATA_DIR", &self.data_dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        cmd
    }

    async fn run(&self, args: &[&str]) -> Result<Output> {
        let out = tokio::time::timeout(WAIT * 2, self.command(args).output())
            .await
            .with_context(|| format!("itinero-host {args:?} did not finish"))??;
        Ok(out)
    }

    /// Runs a command that must succeed; its stdout.
    async fn ok(&self, args: &[&str]) -> Result<String> {
        let out = self.run(args).await?;
        let stdout = String::from_utf8(out.stdout)?;
        if !out.status.success() {
            bail!(
                "itinero-host {args:?} failed ({}): {}{stdout}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Ok(stdout)
    }

    /// Runs a command that must fail; its stderr.
    async fn fails(&self, args: &[&str]) -> Result<String> {
        let out = self.run(args).await?;
        let stderr = String::from_utf8(out.stderr)?;
        if out.status.success() {
            bail!(
                "itinero-host {args:?} should have failed; it printed {}{stderr}",
                String::from_utf8_lossy(&out.stdout)
            );
        }
        Ok(stderr)
    }

    async fn tabs(&self) -> Result<Vec<TabInfo>> {
        Ok(serde_json::from_str(&self.ok(&["tabs", "--json"]).await?)?)
    }

    async fn observe(&self, tab: i64) -> Result<Observation> {
        let tab = tab.to_string();
        Ok(serde_json::from_str(
            &self.ok(&["observe", "--tab", &tab, "--json"]).await?,
        )?)
    }

    /// `act --json`: the control socket's response.
    async fn act(&self, tab: i64, action: &Value) -> Result<Value> {
        let (tab, action) = (tab.to_string(), action.to_string());
        Ok(serde_json::from_str(
            &self.ok(&["act", "--tab", &tab, "--json", &action]).await?,
        )?)
    }
}

/// Opens a fixture in the foreground tab and finds its tab id through the CLI.
async fn open(h: &Harness, cli: &Cli, path: &str) -> Result<(Page, i64, String)> {
    let url = h.fixture_url(path);
    let page = h.chromium.open(&url).await?;
    page.wait_for("document.readyState === 'complete'", WAIT)
        .await?;
    // The agent works on the tab the user sees; background tabs skip rendering work.
    page.bring_to_front().await?;
    let tabs = cli.tabs().await?;
    let tab = tabs
        .iter()
        .find(|t| t.url == url)
        .with_context(|| format!("{url} is not among the tabs: {tabs:?}"))?;
    Ok((page, tab.tab_id, url))
}

/// The full target (index and fingerprint) of the element with this DOM id.
fn target(obs: &Observation, id: &str) -> Result<Value> {
    let node = find(&obs.root, id).with_context(|| format!("#{id} is not in the observation"))?;
    Ok(json!({
        "index": node.index.with_context(|| format!("#{id} has no index"))?,
        "fingerprint": node.fingerprint,
    }))
}

fn outcome_of(response: &Value) -> &Value {
    &response["outcome"]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_lists_observes_and_clicks_in_the_fixture_tab() -> Result<()> {
    let h = Harness::start().await?;
    let cli = Cli::for_harness(&h).await?;
    let (page, tab, url) = open(&h, &cli, "link/buttons.html").await?;

    let table = cli.ok(&["tabs"]).await?;
    let line = table
        .lines()
        .find(|l| l.ends_with(&url))
        .with_context(|| format!("no line for the fixture in:\n{table}"))?;
    assert!(line.contains(&tab.to_string()), "{line}");
    assert!(line.contains("Link fixture"), "{line}");

    // The compact form the model reads.
    let compact = cli.ok(&["observe", "--tab", &tab.to_string()]).await?;
    for expected in [
        "Page: Link fixture",
        "<button id=change>Change the text</button>",
        "Not changed yet",
        "<a id=new-tab href=\"/link/landing.html?via=blank\">Open the landing page in a new tab</a>",
        "<button id=slow>Start a slow change</button>",
    ] {
        assert!(compact.contains(expected), "{expected:?} missing in:\n{compact}");
    }

    // A bare index: the CLI looks the fingerprint up in a fresh observation.
    let obs = cli.observe(tab).await?;
    let index = target(&obs, "change")?["index"].clone();
    let printed = cli
        .ok(&[
            "act",
            "--tab",
            &tab.to_string(),
            &json!({"kind": "click", "target": index}).to_string(),
        ])
        .await?;
    assert!(printed.starts_with("done (in the browser "), "{printed}");
    assert_eq!(page.text_of("#message").await?, "Changed 1 time(s)");

    let response = cli
        .act(
            tab,
            &json!({"kind": "click", "target": target(&obs, "change")?}),
        )
        .await?;
    assert_eq!(outcome_of(&response)["kind"], "done", "{response}");
    assert!(
        response["round_trip_ms"].as_f64().unwrap() > 0.0,
        "{response}"
    );
    assert!(response["elapsed_ms"].is_u64(), "{response}");
    assert_eq!(page.text_of("#message").await?, "Changed 2 time(s)");

    // A second host appears (another browser profile): the CLI asks which one.
    let run_dir = cli.data_dir.join("run");
    let other = std::os::unix::net::UnixListener::bind(run_dir.join("host-1.sock"))?;
    let several = cli.fails(&["tabs"]).await?;
    assert!(
        several.contains("several itinero hosts are running (pids 1, ")
            && several.contains("choose one with --host PID"),
        "{several}"
    );
    let pid = std::fs::read_dir(&run_dir)?
        .flatten()
        .filter_map(|e| itinero_host::control::pid_of_socket(e.file_name().to_str()?))
        .find(|p| *p != 1)
        .context("the host's socket")?;
    let chosen = cli.ok(&["tabs", "--host", &pid.to_string()]).await?;
    assert!(chosen.contains(&url), "{chosen}");
    // A socket whose host is gone is skipped and removed.
    drop(other);
    assert!(cli.ok(&["tabs"]).await?.contains(&url));
    assert!(!run_dir.join("host-1.sock").exists());
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opening_a_tab_and_leaving_the_page_are_reported_with_real_urls() -> Result<()> {
    let routes = axum::Router::new().route(
        "/link/redirect",
        get(|| async { Redirect::temporary("/link/landing.html?via=redirect") }),
    );
    let h = Harness::start_with_routes(routes).await?;
    let cli = Cli::for_harness(&h).await?;
    let (_page, tab, _) = open(&h, &cli, "link/buttons.html").await?;
    let obs = cli.observe(tab).await?;

    let response = cli
        .act(
            tab,
            &json!({"kind": "click", "target": target(&obs, "new-tab")?}),
        )
        .await?;
    let outcome = outcome_of(&response);
    assert_eq!(outcome["kind"], "opened_tab", "{response}");
    let landing = h.fixture_url("link/landing.html?via=blank");
    assert_eq!(outcome["url"], landing.as_str(), "{response}");
    let opened = outcome["tab_id"].as_i64().unwrap();
    assert_ne!(opened, tab);
    let tabs = cli.tabs().await?;
    assert!(
        tabs.iter().any(|t| t.tab_id == opened),
        "the opened tab {opened} is not listed: {tabs:?}"
    );

    // The page only knows it is going to /link/redirect; the report says where it landed.
    let response = cli
        .act(
            tab,
            &json!({"kind": "click", "target": target(&obs, "full-nav")?}),
        )
        .await?;
    let outcome = outcome_of(&response);
    assert_eq!(outcome["kind"], "navigated", "{response}");
    assert_eq!(
        outcome["url"],
        h.fixture_url("link/landing.html?via=redirect").as_str(),
        "{response}"
    );
    // The tab really is there, and can be observed again.
    let after = cli.observe(tab).await?;
    assert!(after.text.contains("via redirect"), "{}", after.text);

    // A `navigate` action is answered before the navigation starts; it is followed all the same.
    let response = cli
        .act(
            tab,
            &json!({"kind": "navigate", "url": h.fixture_url("link/redirect")}),
        )
        .await?;
    assert_eq!(
        outcome_of(&response)["url"],
        h.fixture_url("link/landing.html?via=redirect").as_str(),
        "{response}"
    );
    // A fragment does not load a document: the page's own word stands, without waiting.
    let fragment = h.fixture_url("link/landing.html?via=redirect#below");
    let response = cli
        .act(tab, &json!({"kind": "navigate", "url": fragment}))
        .await?;
    assert_eq!(
        outcome_of(&response)["url"],
        fragment.as_str(),
        "{response}"
    );
    assert!(
        response["elapsed_ms"].as_u64().unwrap() < 5_000,
        "it waited for a commit that never comes: {response}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_tabs_and_pages_without_the_content_script_are_clear_errors() -> Result<()> {
    let h = Harness::start().await?;
    let cli = Cli::for_harness(&h).await?;

    let missing = cli.fails(&["observe", "--tab", "999999"]).await?;
    assert!(
        missing.contains("there is no tab with id 999999"),
        "{missing}"
    );
    let click = json!({"kind": "click", "target": {"index": 1, "fingerprint": {}}}).to_string();
    let missing = cli.fails(&["act", "--tab", "999999", &click]).await?;
    assert!(
        missing.contains("there is no tab with id 999999"),
        "{missing}"
    );

    let _internal = h.chromium.open("chrome://version/").await?;
    let tabs = cli.tabs().await?;
    let internal = tabs
        .iter()
        .find(|t| t.url.starts_with("chrome://version"))
        .with_context(|| format!("chrome://version is not among {tabs:?}"))?
        .tab_id
        .to_string();
    for args in [
        vec!["observe", "--tab", &internal],
        vec!["act", "--tab", &internal, &click],
    ] {
        let refused = cli.fails(&args).await?;
        assert!(
            refused.contains(&format!(
                "tab {internal} shows chrome://version/, where extensions cannot run"
            )),
            "{refused}"
        );
    }

    // Without any running host, the CLI says what to do.
    let empty = tempfile::tempdir()?;
    let out = Command::new(&cli.bin)
        .arg("tabs")
        .env("ITINERO_DATA_DIR", empty.path())
        .output()
        .await?;
    assert!(!out.status.success());
    let stderr = String::from_utf8(out.stderr)?;
    assert!(
        stderr.contains(
            "no running itinero host — open Chromium with the itinero extension installed"
        ),
        "{stderr}"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tab_closed_or_a_client_killed_mid_action_leaves_the_host_serving() -> Result<()> {
    let h = Harness::start().await?;
    let cli = Cli::for_harness(&h).await?;
    let (page, tab, url) = open(&h, &cli, "link/buttons.html").await?;
    let obs = cli.observe(tab).await?;
    let slow = json!({"kind": "click", "target": target(&obs, "slow")?}).to_string();
    let tab_arg = tab.to_string();

    // The client goes away while the page is still settling (1.5 s of changes).
    let mut client = cli.command(&["act", "--tab", &tab_arg, &slow]).spawn()?;
    page.wait_for(
        "document.querySelector('#slow-state').textContent !== 'idle'",
        WAIT,
    )
    .await?;
    client.kill().await?;
    assert!(
        page.text_of("#slow-state").await? != "finished",
        "the action ended before the client was killed; the test proves nothing"
    );
    // The host answers the next client, in the same tab, as if nothing happened.
    let response = cli
        .act(
            tab,
            &json!({"kind": "click", "target": target(&obs, "change")?}),
        )
        .await?;
    assert_eq!(outcome_of(&response)["kind"], "done", "{response}");
    assert!(cli.tabs().await?.iter().any(|t| t.url == url));

    // The tab goes away while its page is still settling: an error that says so.
    page.wait_for(
        "document.querySelector('#slow-state').textContent === 'finished'",
        WAIT,
    )
    .await?;
    let acting = cli.command(&["act", "--tab", &tab_arg, &slow]).spawn()?;
    page.wait_for(
        "document.querySelector('#slow-state').textContent !== 'finished'",
        WAIT,
    )
    .await?;
    page.close().await?;
    let out = tokio::time::timeout(WAIT, acting.wait_with_output()).await??;
    assert!(!out.status.success());
    let stderr = String::from_utf8(out.stderr)?;
    assert!(
        stderr.contains(&format!("tab {tab} was closed")),
        "{stderr}"
    );
    assert!(cli.tabs().await?.iter().all(|t| t.tab_id != tab));
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cross_origin_frame_is_stitched_in_and_its_form_filled_and_sent() -> Result<()> {
    use std::sync::{Arc, Mutex};
    let received = Arc::new(Mutex::new(Vec::<(String, String)>::new()));
    let store = received.clone();
    let routes = axum::Router::new().route(
        "/submit",
        axum::routing::post(
            move |headers: axum::http::HeaderMap, body: String| async move {
                let host = headers
                    .get("host")
                    .and_then(|h| h.to_str().ok())
                    .unwrap_or_default()
                    .to_owned();
                store.lock().unwrap().push((host, body));
                axum::response::Html("<p>Booked</p>")
            },
        ),
    );
    let h = Harness::start_with_routes(routes).await?;
    let cli = Cli::for_harness(&h).await?;
    let inner = h.other_origin_url("observe/frame-form.html");
    let cross = inner.replace(':', "%3A").replace('/', "%2F");
    let (page, tab, _) = open(&h, &cli, &format!("observe/iframes.html?cross={cross}")).await?;
    // The cross-origin frame has loaded and its content script answers.
    page.wait_for(
        "document.getElementById('frame-cross')?.getBoundingClientRect().width > 0",
        WAIT,
    )
    .await?;

    let obs = cli.observe(tab).await?;
    let mut nodes = Vec::new();
    flatten(&obs.root, &mut nodes);
    let all = |keep: &dyn Fn(&DomNode) -> bool| -> Vec<&DomNode> {
        nodes.iter().copied().filter(|n| keep(n)).collect()
    };
    let indexed = all(&|n| n.index.is_some());
    let mut indices: Vec<u32> = indexed.iter().filter_map(|n| n.index).collect();
    indices.sort_unstable();
    indices.dedup();
    assert_eq!(
        indices.len(),
        indexed.len(),
        "indices are unique across frames"
    );

    // The frame's own form, placed where its iframe is (x 640..1160, y 80..360).
    let framed = all(&|n| n.frame_id.is_some() && n.index.is_some());
    let names: Vec<_> = framed.iter().filter_map(|n| n.name.as_deref()).collect();
    assert_eq!(
        names,
        ["Guest name", "Room type", "Book now"],
        "{framed:#?}"
    );
    let frame_id = framed[0].frame_id.unwrap();
    assert!(frame_id > 0, "a child frame's id: {frame_id}");
    for n in &framed {
        assert_eq!(n.frame_id, Some(frame_id));
        assert!(
            n.rect.x >= 640.0 && n.rect.x < 1160.0 && n.rect.y >= 80.0 && n.rect.y < 360.0,
            "{:?} at {:?}",
            n.name,
            n.rect
        );
        assert!(n.in_viewport && !n.occluded);
        let fp = n.fingerprint.as_ref().unwrap();
        assert_eq!(fp.frame_path, vec![frame_id]);
    }
    // The placeholder now holds the frame's content; the same-origin copy is walked in place.
    let placeholders = all(&|n| n.tag == "iframe" && n.frame_id == Some(frame_id));
    assert_eq!(placeholders.len(), 1);
    let same_origin = all(&|n| n.frame_id.is_none() && n.name.as_deref() == Some("Guest name"));
    assert_eq!(
        same_origin.len(),
        1,
        "the same-origin frame's field: {:#?}",
        indexed
            .iter()
            .map(|n| (n.index, n.name.clone(), n.frame_id))
            .collect::<Vec<_>>()
    );
    assert!(obs.text.contains("Book a room"));

    // Acting in the frame: the index the model saw, sent to that frame.
    let frame = frame_id.to_string();
    let tab_arg = tab.to_string();
    let target = |n: &DomNode| json!({"index": n.index, "fingerprint": n.fingerprint});
    let typed: Value = serde_json::from_str(
        &cli.ok(&[
            "act",
            "--tab",
            &tab_arg,
            "--frame",
            &frame,
            "--json",
            &json!({"kind": "type", "target": target(framed[0]), "text": "Ada Lovelace"})
                .to_string(),
        ])
        .await?,
    )?;
    assert_eq!(outcome_of(&typed)["kind"], "done", "{typed}");
    let clicked: Value = serde_json::from_str(
        &cli.ok(&[
            "act",
            "--tab",
            &tab_arg,
            "--frame",
            &frame,
            "--json",
            &json!({"kind": "click", "target": target(framed[2])}).to_string(),
        ])
        .await?,
    )?;
    // The frame navigates to the form's answer; the top page stays.
    let kind = outcome_of(&clicked)["kind"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(kind == "navigated" || kind == "done", "{clicked}");
    let deadline = std::time::Instant::now() + WAIT;
    while received.lock().unwrap().is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the form never reached the server"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let (host, body) = received.lock().unwrap()[0].clone();
    assert_eq!(body, "name=Ada+Lovelace&room=double");
    assert_eq!(
        host,
        inner
            .trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap(),
        "sent from the frame's own origin"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn back_forward_and_wait_are_reported_with_where_the_tab_is() -> Result<()> {
    let h = Harness::start().await?;
    let cli = Cli::for_harness(&h).await?;
    let (_page, tab, url) = open(&h, &cli, "link/buttons.html").await?;
    let landing = h.fixture_url("link/landing.html?via=typed");
    let response = cli
        .act(tab, &json!({"kind": "navigate", "url": landing}))
        .await?;
    assert_eq!(outcome_of(&response)["url"], landing.as_str(), "{response}");

    for (kind, to, shown) in [
        ("back", &url, "Not changed yet"),
        ("forward", &landing, "via typed"),
    ] {
        let response = cli.act(tab, &json!({ "kind": kind })).await?;
        let outcome = outcome_of(&response);
        assert_eq!(outcome["kind"], "navigated", "{response}");
        assert_eq!(outcome["url"], to.as_str(), "{response}");
        let there = cli.observe(tab).await?;
        assert!(there.text.contains(shown), "{kind}: {}", there.text);
    }

    let response = cli.act(tab, &json!({"kind": "wait", "ms": 300})).await?;
    assert_eq!(outcome_of(&response)["kind"], "done", "{response}");
    assert!(
        response["elapsed_ms"].as_u64().unwrap() >= 300,
        "{response}"
    );
    Ok(())
}
