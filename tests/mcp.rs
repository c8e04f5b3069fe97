//! `itinero-host mcp` driven by the official MCP SDK's client, as another AI tool drives it:
//! the real server process reaches the host that the real Chromium started, through the real
//! extension, on the demo shop. It lists its tools, lists tabs, observes a page, types and
//! submits a search, runs a goal with itinero's agent (the scripted model) with progress
//! notifications, and a purchase waits for the user, who denies it in the side panel; then
//! `itinero-host stats` counts those tasks.
#![cfg(unix)]

use std::sync::{Arc, Mutex};

use anyhow::{bail, Context, Result};
use itinero::demo_shop::ShopOptions;
use itinero::harness::panel;
use itinero::harness::shop_session::{step, Session};
use itinero::harness::{host_binary, PageExt, WAIT};
use itinero_host::control::connect_in;
use rmcp::model::{CallToolRequestParams, CallToolResult, ProgressNotificationParam};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{json, Value};

/// The MCP client's side: it keeps every progress message it hears.
#[derive(Clone, Default)]
struct Client {
    heard: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for Client {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _: NotificationContext<RoleClient>,
    ) {
        if let Some(m) = params.message {
            self.heard.lock().unwrap().push(m);
        }
    }
}

/// Waits until the host Chromium started listens on its control socket, then starts
/// `itinero-host mcp` against it and completes the MCP handshake.
async fn connect(s: &Session, client: Client) -> Result<RunningService<RoleClient, Client>> {
    let data_dir = s.h.host_data_dir();
    let deadline = std::time::Instant::now() + WAIT;
    while connect_in(&data_dir.join("run"), None).await.is_err() {
        if std::time::Instant::now() > deadline {
            bail!("the host never opened its control socket");
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let mut cmd = tokio::process::Command::new(host_binary()?);
    cmd.arg("mcp").env("ITINERO_DATA_DIR", &data_dir);
    let transport = TokioChildProcess::new(cmd)?;
    Ok(client.serve(transport).await?)
}

async fn call(
    mcp: &RunningService<RoleClient, Client>,
    tool: &'static str,
    args: Value,
) -> Result<CallToolResult> {
    let Value::Object(args) = args else {
        bail!("arguments must be an object")
    };
    let call = mcp.call_tool(CallToolRequestParams::new(tool).with_arguments(args));
    Ok(tokio::time::timeout(WAIT * 2, call)
        .await
        .with_context(|| format!("{tool} did not answer"))??)
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The number observe_tab gives the element whose rendering starts with `start` (`<button>Place
/// order`).
fn index_of(page: &str, start: &str) -> Result<u32> {
    for line in page.lines() {
        let line = line.trim_start();
        if let Some(rest) = line.strip_prefix('[') {
            if let Some((n, tail)) = rest.split_once(']') {
                if tail.starts_with(start) {
                    return Ok(n.parse()?);
                }
            }
        }
    }
    bail!("no element {start:?} in:\n{page}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_client_drives_the_browser_through_itinero_with_approvals_intact() -> Result<()> {
    let s = Session::start(ShopOptions::default(), "shop/").await?;
    let client = Client::default();
    let mcp = tokio::time::timeout(WAIT, connect(&s, client.clone()))
        .await
        .context("the MCP handshake did not finish")??;

    let info = mcp.peer_info().context("no server info")?;
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("itinero")
    );
    let mut tools: Vec<String> = tokio::time::timeout(WAIT, mcp.list_all_tools())
        .await??
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    tools.sort();
    assert_eq!(
        tools,
        [
            "act",
            "list_skills",
            "list_tabs",
            "observe_tab",
            "run_skill",
            "run_task",
            "show_run",
            "show_skill"
        ]
    );

    // The shop's tab, by its address.
    let tabs = text(&call(&mcp, "list_tabs", json!({})).await?);
    let shop_url = s.url("shop/");
    let line = tabs
        .lines()
        .find(|l| l.ends_with(&shop_url))
        .with_context(|| format!("the shop's tab is not listed:\n{tabs}"))?;
    let tab: i64 = line
        .trim_start_matches("tab ")
        .split([' ', ':'])
        .next()
        .context("no id")?
        .parse()?;

    let page = text(&call(&mcp, "observe_tab", json!({"tab_id": tab})).await?);
    assert!(page.contains("Demo Shop"), "{page}");
    let search = index_of(&page, "<input type=search")?;

    // One step, as the calling model names it.
    let typed = call(
        &mcp,
        "act",
        json!({"tab_id": tab, "kind": "type", "index": search, "text": "wool socks", "submit": true}),
    )
    .await?;
    assert_ne!(typed.is_error, Some(true), "{}", text(&typed));
    assert_eq!(
        s.shop.searches(),
        ["wool socks"],
        "the search reached the shop"
    );
    let wrong = call(
        &mcp,
        "act",
        json!({"tab_id": tab, "kind": "click", "index": 999}),
    )
    .await?;
    assert_eq!(wrong.is_error, Some(true));
    assert!(text(&wrong).contains("[999]"), "{}", text(&wrong));

    // A goal for itinero's own agent, its steps heard as progress.
    s.open("shop/").await?;
    s.script(vec![
        step(
            &["Goal: What do wool socks cost?"],
            json!({"thought": "Search.", "action": "type", "index": 1, "text": "wool socks", "submit": true}),
        ),
        step(
            &["12.99 EUR"],
            json!({"thought": "Listed.", "action": "done", "answer": "Wool socks cost 12.99 EUR."}),
        ),
    ])?;
    let ran = call(
        &mcp,
        "run_task",
        json!({"goal": "What do wool socks cost?", "tab_id": tab}),
    )
    .await?;
    let said = text(&ran);
    assert_ne!(ran.is_error, Some(true), "{said}");
    assert!(
        said.starts_with("Done: Wool socks cost 12.99 EUR."),
        "{said}"
    );
    let heard = client.heard.lock().unwrap().join("\n");
    assert!(heard.contains("What do wool socks cost?"), "{heard}");
    assert!(heard.contains("type"), "{heard}");

    // The run's report, with the pictures the store kept of its last pages.
    let report = call(&mcp, "show_run", json!({"pictures": 2})).await?;
    let said = text(&report);
    assert_ne!(report.is_error, Some(true), "{said}");
    assert!(
        said.contains("What do wool socks cost?") && said.contains("### 1. type"),
        "{said}"
    );
    let store = itinero_host::store::Store::open(&s.h.host_data_dir().join("itinero.sqlite3"))?;
    let run = store.recent_runs(1)?.first().context("no run")?.id;
    let kept = store.pictures(run)?.iter().filter(|p| p.is_kept()).count();
    let images: Vec<&str> = report
        .content
        .iter()
        .filter_map(|c| c.as_image().map(|i| i.data.as_str()))
        .collect();
    assert!(kept >= 2, "the run kept {kept} pictures");
    assert_eq!(images.len(), 2, "{said}");
    assert!(
        images.iter().all(|b64| b64.starts_with("/9j/")),
        "JPEGs in base64"
    );

    // A purchase: it waits for the user in the side panel, who says no.
    s.open("shop/product/wool-socks").await?;
    s.tab.find_element("#buy-box button").await?.click().await?;
    s.tab
        .wait_for(
            "location.pathname === '/shop/cart' && document.readyState === 'complete'",
            WAIT,
        )
        .await?;
    let cart = text(&call(&mcp, "observe_tab", json!({"tab_id": tab})).await?);
    let order = index_of(&cart, "<button>Place order")?;
    let buying = tokio::spawn({
        let peer = mcp.peer().clone();
        async move {
            let args = json!({"tab_id": tab, "kind": "click", "index": order});
            let Value::Object(args) = args else {
                unreachable!()
            };
            peer.call_tool(CallToolRequestParams::new("act").with_arguments(args))
                .await
        }
    });
    let question = match tokio::time::timeout(WAIT, s.question()).await {
        Ok(q) => q?,
        Err(_) => bail!(
            "no question in the panel\n--- panel ---\n{}\n--- host log ---\n{}",
            s.log().await.unwrap_or_default(),
            s.h.chromium.host_log()
        ),
    };
    assert!(
        question.contains("Place order") && question.contains("MCP client"),
        "the panel says whose task asks and what: {question}"
    );
    // A DOM click: the panel is behind the shop's tab.
    panel::click(&s.panel, "#ask-deny").await?;
    let denied = tokio::time::timeout(WAIT, buying).await???;
    assert_eq!(denied.is_error, Some(true));
    assert!(
        text(&denied).contains("you did not allow"),
        "{}",
        text(&denied)
    );
    assert!(s.shop.orders().is_empty(), "nothing was bought");

    mcp.cancel().await?;

    // The three tasks in the statistics: two done, one stopped; the agent's two steps the
    // model's, the given ones and the end of each the "other" kind.
    let out = std::process::Command::new(host_binary()?)
        .args(["stats", "--json"])
        .env("ITINERO_DATA_DIR", s.h.host_data_dir())
        .output()?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let weeks: Vec<itinero_shared::records::UsagePeriod> = serde_json::from_slice(&out.stdout)?;
    // A run across midnight on a Sunday falls in two weeks.
    let sum =
        |f: fn(&itinero_shared::records::UsagePeriod) -> u64| weeks.iter().map(f).sum::<u64>();
    assert_eq!(sum(|w| u64::from(w.tasks)), 3, "{weeks:?}");
    assert_eq!(sum(|w| u64::from(w.succeeded)), 2, "{weeks:?}");
    assert_eq!(sum(|w| u64::from(w.steps.model)), 2, "{weeks:?}");
    assert_eq!(sum(|w| w.model_calls), 2, "{weeks:?}");
    Ok(())
}
