//! The tools an MCP client sees. Each opens its own connection to the host's control socket,
//! so a long run does not hold up an observation asked for meanwhile.

use base64::Engine as _;
use itinero_shared::messages::TaskStatus;
use itinero_shared::observation::Observation;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::service::RequestContext;
use rmcp::{tool, tool_handler, tool_router, ErrorData, RoleServer, ServerHandler};

use super::follow::{self, Progress};
use super::params::{
    self, ActParams, ListSkillsParams, RunParams, RunSkillParams, ShowRunParams, SkillParams,
    TabParams,
};
use crate::agent::render::{render, RenderOptions};
use crate::control::protocol::{Request, Response};
use crate::control::{self, ControlClient};
use crate::report::{self, MarkdownPictures};
use crate::skills;
use crate::store::Store;

/// Pictures `show_run` attaches unless asked for another number, and the most it attaches.
const PICTURES_SHOWN: u32 = 3;
const MOST_PICTURES: u32 = 10;

const INSTRUCTIONS: &str = "itinero works in the user's own browser, signed in as the user. \
list_tabs, then observe_tab shows a page with its elements numbered [n]; act does one thing \
on an element by its number. run_task hands a whole goal to itinero's own agent; run_skill \
replays a saved skill; show_run reports a run step by step with pictures of its pages. Risky steps (buying, sending, deleting, leaving the site with page \
data) wait for the user's approval in itinero's side panel. Sign-ins are typed as \
{{secret:username}}, {{secret:password}} or {{secret:totp}}; you never see them.";

/// The server: which host to reach (by pid, when several run) and the tool list.
#[derive(Clone)]
pub struct Itinero {
    host: Option<u32>,
    tool_router: ToolRouter<Self>,
}

/// A tool's result that the calling model reads as a failure, with why.
fn failed(text: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

fn ok(text: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text)])
}

/// The calling program as the panel names it: the client's own name from its handshake.
fn program(ctx: &RequestContext<RoleServer>) -> String {
    match ctx.peer.peer_info() {
        Some(info) if !info.client_info.name.trim().is_empty() => {
            format!("the MCP client {}", info.client_info.name.trim())
        }
        _ => "an MCP client".to_owned(),
    }
}

#[tool_router]
impl Itinero {
    pub fn new(host: Option<u32>) -> Self {
        Self {
            host,
            tool_router: Self::tool_router(),
        }
    }

    /// The tools' own steps fail with the words of why, which become the tool's error result.
    async fn connect(&self) -> Result<ControlClient, String> {
        control::connect(self.host).await.map_err(|e| e.to_string())
    }

    /// One request, one response; a refusal (no such tab, …) becomes the tool's error.
    async fn call(&self, request: &Request) -> Result<Response, String> {
        let mut client = self.connect().await?;
        match client.call(request).await {
            Ok(Response::Error { message, .. }) => Err(message),
            Ok(response) => Ok(response),
            Err(e) => Err(e.to_string()),
        }
    }

    async fn observation(&self, tab_id: i64) -> Result<Observation, String> {
        match self.call(&Request::Observe { tab_id }).await? {
            Response::Observation { observation, .. } => Ok(observation),
            other => Err(format!("unexpected answer to observe: {other:?}")),
        }
    }

    /// Starts a task with `request` and follows it to its end.
    async fn run(
        &self,
        request: Request,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<follow::Ended, String> {
        let mut client = self.connect().await?;
        client.send(&request).await.map_err(|e| e.to_string())?;
        let mut progress = Progress::new(ctx.peer.clone(), ctx.meta.get_progress_token());
        // Cancelling the call closes the connection, which stops the task.
        tokio::select! {
            ended = follow::follow(&mut client, &mut progress) => ended,
            () = ctx.ct.cancelled() => Err("cancelled: the task was stopped".to_owned()),
        }
    }

    #[tool(description = "The browser's open tabs: id, whether active, title and address.")]
    async fn list_tabs(&self) -> Result<CallToolResult, ErrorData> {
        let tabs = match self.call(&Request::Tabs).await {
            Ok(Response::Tabs { tabs, .. }) => tabs,
            Ok(other) => return Ok(failed(format!("unexpected answer to tabs: {other:?}"))),
            Err(refused) => return Ok(failed(refused)),
        };
        let lines: Vec<String> = tabs
            .iter()
            .map(|t| {
                let active = if t.active { " (active)" } else { "" };
                format!("tab {}{active}: {} — {}", t.tab_id, t.title, t.url)
            })
            .collect();
        Ok(ok(if lines.is_empty() {
            "no tabs are open".to_owned()
        } else {
            lines.join("\n")
        }))
    }

    #[tool(
        description = "The page in a tab as itinero's agent reads it: its text and controls in paint order, each control numbered [n] for act."
    )]
    async fn observe_tab(
        &self,
        Parameters(p): Parameters<TabParams>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(match self.observation(p.tab_id).await {
            Ok(obs) => ok(render(&obs, &RenderOptions::default()).text),
            Err(refused) => failed(refused),
        })
    }

    #[tool(
        description = "Does one thing in a tab: click, type, select, check, hover, scroll, press_key, navigate, back, forward or wait. Elements are named by their observe_tab number. A risky step waits for the user's approval in itinero's side panel; the result says what happened."
    )]
    async fn act(
        &self,
        Parameters(p): Parameters<ActParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let page = match self.observation(p.tab_id).await {
            Ok(obs) => obs,
            Err(refused) => return Ok(failed(refused)),
        };
        let action = match params::action(&p, &page) {
            Ok(a) => a,
            Err(why) => return Ok(failed(why)),
        };
        let request = Request::Perform {
            tab_id: p.tab_id,
            actions: vec![action],
            for_program: Some(program(&ctx)),
        };
        Ok(match self.run(request, &ctx).await {
            Ok(ended) => {
                let text = match &ended.outcome {
                    Some(o) => format!("{}\nOutcome: {o}", ended.text()),
                    None => ended.text(),
                };
                if ended.status == TaskStatus::Succeeded {
                    ok(text)
                } else {
                    failed(text)
                }
            }
            Err(refused) => failed(refused),
        })
    }

    #[tool(
        description = "Hands a goal to itinero's own agent, which works in the tab step by step (with its action cache, skills and auto sign-in) and answers. Progress is reported as it goes; risky steps wait for the user's approval in the side panel."
    )]
    async fn run_task(
        &self,
        Parameters(p): Parameters<RunParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let request = Request::Run {
            goal: p.goal,
            tab_id: p.tab_id,
            for_program: Some(program(&ctx)),
        };
        Ok(ended(self.run(request, &ctx).await))
    }

    #[tool(
        description = "itinero's saved skills (recorded tasks that replay without a model): name, site, goal, parameters and how their runs went."
    )]
    async fn list_skills(
        &self,
        Parameters(p): Parameters<ListSkillsParams>,
    ) -> Result<CallToolResult, ErrorData> {
        let listed = on_store(move |s| Ok(s.list_skills(p.search.as_deref())?)).await;
        Ok(match listed {
            Ok(list) if list.is_empty() => ok("no skills match"),
            Ok(list) => ok(serde_json::to_string_pretty(&list).unwrap_or_default()),
            Err(why) => failed(why),
        })
    }

    #[tool(description = "A saved skill's parameters and steps.")]
    async fn show_skill(
        &self,
        Parameters(p): Parameters<SkillParams>,
    ) -> Result<CallToolResult, ErrorData> {
        let name = p.name.clone();
        let found = on_store(move |s| Ok(s.skill_by_name(&name)?)).await;
        Ok(match found {
            Ok(Some(stored)) => ok(skills::to_markdown(&stored.skill)),
            Ok(None) => failed(format!(
                "there is no skill named {:?}; list_skills gives their names",
                p.name
            )),
            Err(why) => failed(why),
        })
    }

    #[tool(
        description = "A run's report: its goal, result and every step (the action, what decided it, what happened, the timings), with pictures of the page after its last steps."
    )]
    async fn show_run(
        &self,
        Parameters(p): Parameters<ShowRunParams>,
    ) -> Result<CallToolResult, ErrorData> {
        let wanted = p.pictures.unwrap_or(PICTURES_SHOWN).min(MOST_PICTURES) as usize;
        let found = on_store(move |s| {
            let id = match p.run_id {
                Some(id) => itinero_shared::records::RunId(id),
                None => match s.recent_runs(1)?.first() {
                    Some(run) => run.id,
                    None => anyhow::bail!("no run has been recorded yet"),
                },
            };
            let Some(detail) = s.run_detail(id)? else {
                anyhow::bail!("there is no run {id}");
            };
            let mut pictures = Vec::new();
            for pic in detail
                .pictures
                .iter()
                .rev()
                .filter(|p| p.is_kept())
                .take(wanted)
            {
                if let Some(jpeg) = s.picture(id, pic.n)? {
                    pictures.push((pic.n, jpeg));
                }
            }
            pictures.reverse();
            Ok((detail, pictures))
        })
        .await;
        let (detail, pictures) = match found {
            Ok(found) => found,
            Err(why) => return Ok(failed(why)),
        };
        let attached: Vec<u32> = pictures.iter().map(|(n, _)| *n).collect();
        let mut content = vec![ContentBlock::text(report::markdown(
            &detail,
            MarkdownPictures::Attached(&attached),
        ))];
        for (n, jpeg) in pictures {
            content.push(ContentBlock::text(format!("The page after step {n}:")));
            content.push(ContentBlock::image(
                base64::engine::general_purpose::STANDARD.encode(jpeg),
                "image/jpeg",
            ));
        }
        Ok(CallToolResult::success(content))
    }

    #[tool(
        description = "Replays a saved skill with a value for each parameter; the model takes over only where the page changed. Risky steps wait for the user's approval in the side panel."
    )]
    async fn run_skill(
        &self,
        Parameters(p): Parameters<RunSkillParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let request = Request::RunSkill {
            skill: p.name,
            params: p.params.into_iter().collect(),
            tab_id: p.tab_id,
            for_program: Some(program(&ctx)),
        };
        Ok(ended(self.run(request, &ctx).await))
    }
}

/// A run's result: an error result unless it succeeded, so the caller does not take a stopped
/// or failed run for done.
fn ended(run: Result<follow::Ended, String>) -> CallToolResult {
    match run {
        Ok(e) if e.status == TaskStatus::Succeeded => ok(e.text()),
        Ok(e) => failed(e.text()),
        Err(refused) => failed(refused),
    }
}

/// `f` on the store (the skills), off the async threads; why not, in words.
async fn on_store<T: Send + 'static>(
    f: impl FnOnce(&Store) -> anyhow::Result<T> + Send + 'static,
) -> Result<T, String> {
    tokio::task::spawn_blocking(move || {
        let store =
            Store::open_default().map_err(|e| format!("cannot open itinero's store: {e:#}"))?;
        f(&store).map_err(|e| format!("{e:#}"))
    })
    .await
    .map_err(|e| format!("reading the store failed: {e}"))?
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Itinero {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("itinero", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }
}
