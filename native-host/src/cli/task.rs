//! `itinero-host run GOAL` and `itinero-host skills run NAME --param k=v`: a task in the
//! browser through the running host, as the panel's Run button starts one, printed as it
//! goes. The host runs and records it (and looks the skill up); this side only shows it and
//! answers its questions. Interrupting the command (Ctrl-C) closes the connection, which stops
//! the run.

use std::io::{BufRead, IsTerminal, Write};

use anyhow::{bail, Context, Result};
use clap::Args;
use itinero_shared::messages::{AskUser, TaskEventKind, TaskStatus};

use super::host::{self, HostArgs};
use crate::control::protocol::{Request, Response};
use crate::control::ControlClient;
use crate::skills::words;

#[derive(Debug, Args)]
pub struct GoalArgs {
    /// What to do, as typed in the panel, e.g. "Add wool socks to my cart".
    pub goal: String,
    /// The tab to run in (`itinero-host tabs` lists them); default: the active web page.
    #[arg(long = "tab", value_name = "TAB")]
    pub tab_id: Option<i64>,
    #[command(flatten)]
    pub follow: FollowArgs,
}

#[derive(Debug, Args)]
pub struct SkillArgs {
    /// The skill's name, as `skills list` shows it.
    pub name: String,
    /// A parameter's value, e.g. --param query="wool socks"; every parameter needs one.
    #[arg(long = "param", value_name = "NAME=VALUE", value_parser = parse_param)]
    pub params: Vec<(String, String)>,
    /// The tab to run in (`itinero-host tabs` lists them); default: the tab already on the
    /// skill's site (the active one first), else the active web page.
    #[arg(long = "tab", value_name = "TAB")]
    pub tab_id: Option<i64>,
    #[command(flatten)]
    pub follow: FollowArgs,
}

#[derive(Debug, Args)]
pub struct FollowArgs {
    /// Approve risky actions without asking (questions still stop the run when nobody can
    /// answer them).
    #[arg(long)]
    pub yes: bool,
    /// Print the host's responses as JSON lines instead of words.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub host: HostArgs,
}

/// A `--param NAME=VALUE` of `skills run`.
pub(super) fn parse_param(arg: &str) -> Result<(String, String), String> {
    match arg.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_owned(), value.to_owned()))
        }
        _ => Err(format!(
            "{arg:?} is not NAME=VALUE (e.g. query=\"wool socks\")"
        )),
    }
}

/// Runs the goal; `Ok(false)` when the run did not succeed (its answer says why).
pub fn run_goal(args: &GoalArgs) -> Result<bool> {
    let request = Request::Run {
        goal: args.goal.clone(),
        tab_id: args.tab_id,
        for_program: None,
    };
    start(&request, &args.follow)
}

/// Runs the skill; `Ok(false)` when the run did not succeed (its answer says why).
pub fn run_skill(args: &SkillArgs) -> Result<bool> {
    let request = Request::RunSkill {
        skill: args.name.clone(),
        params: args.params.clone(),
        tab_id: args.tab_id,
        for_program: None,
    };
    start(&request, &args.follow)
}

fn start(request: &Request, args: &FollowArgs) -> Result<bool> {
    host::block_on(async {
        let mut client = host::connect(&args.host).await?;
        client.send(request).await?;
        follow(&mut client, args).await
    })
}

async fn follow(client: &mut ControlClient, args: &FollowArgs) -> Result<bool> {
    let mut bar = ProgressLine::new(!args.json && std::io::stderr().is_terminal());
    loop {
        let response = client.receive().await?;
        if args.json {
            println!("{}", serde_json::to_string(&response)?);
        }
        match &response {
            Response::Event { event } => {
                if let TaskEventKind::Progress { label, .. } = &event.kind {
                    bar.show(label);
                    continue;
                }
                bar.clear();
            }
            _ => bar.clear(),
        }
        match response {
            Response::Started { tab_id, goal, .. } => {
                if !args.json {
                    println!("Running in tab {tab_id}: {goal}");
                }
            }
            Response::Event { event } => {
                if !args.json {
                    if let Some(line) = describe(event.step, &event.kind) {
                        println!("{line}");
                    }
                }
            }
            Response::Question { question } => {
                let reply = answer(&question, args.yes).await?;
                let request = match reply {
                    Some(reply) => Request::Reply {
                        question_id: question.question_id,
                        reply,
                    },
                    None => Request::Stop,
                };
                client.send(&request).await?;
            }
            Response::Finished { finished } => {
                let answer = finished.answer.unwrap_or_default();
                let ok = finished.status == TaskStatus::Succeeded;
                if !args.json {
                    println!("{}: {answer}", finished.status.heading());
                }
                return Ok(ok);
            }
            Response::Error { message, .. } => bail!("{message}"),
            other => bail!("unexpected response to a run: {other:?}"),
        }
    }
}

/// A line for the event, or `None` for those only the panel shows (observations, plans).
fn describe(step: u32, kind: &TaskEventKind) -> Option<String> {
    match kind {
        TaskEventKind::Decided { action, source, .. } => {
            Some(format!("{step}. {} ({source})", words::action(action)))
        }
        TaskEventKind::Acted {
            outcome,
            elapsed_ms,
        } => {
            let value = serde_json::to_value(outcome).unwrap_or_default();
            let kind = value["kind"].as_str().unwrap_or("?").replace('_', " ");
            Some(format!("   {kind} ({elapsed_ms} ms)"))
        }
        TaskEventKind::Note { text } => Some(format!("   {text}")),
        TaskEventKind::Started { .. }
        | TaskEventKind::Observed { .. }
        | TaskEventKind::Plan { .. }
        | TaskEventKind::Progress { .. } => None,
    }
}

/// A step's progress (a model loading, a long prompt read) on one line of a terminal's stderr,
/// rewritten as it moves and cleared before the next line; nothing where stderr is not a
/// terminal, whose reader wants the steps, not the waiting.
struct ProgressLine {
    on: bool,
    shown: bool,
}

impl ProgressLine {
    fn new(on: bool) -> Self {
        Self { on, shown: false }
    }

    fn show(&mut self, label: &str) {
        if self.on {
            eprint!("\r   {label}\x1b[K");
            self.shown = true;
        }
    }

    fn clear(&mut self) {
        if std::mem::take(&mut self.shown) {
            eprint!("\r\x1b[K");
        }
    }
}

/// The user's answer from the terminal; `None` stops the run (no terminal to ask, or no answer).
async fn answer(question: &AskUser, yes: bool) -> Result<Option<String>> {
    let approval = question.kind == "approval";
    if approval && yes {
        eprintln!("{} — yes (--yes)", question.question);
        return Ok(Some("yes".into()));
    }
    if !std::io::stdin().is_terminal() {
        eprintln!(
            "{}\nno terminal to answer on; stopping the run{}",
            question.question,
            if approval { " (--yes approves)" } else { "" }
        );
        return Ok(None);
    }
    let prompt = if approval {
        format!("{} [yes/no] ", question.question)
    } else {
        format!("{} ", question.question)
    };
    let line = tokio::task::spawn_blocking(move || -> std::io::Result<String> {
        let mut err = std::io::stderr();
        err.write_all(prompt.as_bytes())?;
        err.flush()?;
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line)?;
        Ok(line)
    })
    .await
    .context("reading the answer failed")??;
    let line = line.trim();
    Ok((!line.is_empty()).then(|| line.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use itinero_shared::messages::Outcome;

    #[test]
    fn events_read_as_steps() {
        let acted = TaskEventKind::Acted {
            outcome: Outcome::Done,
            elapsed_ms: 12,
        };
        assert_eq!(describe(2, &acted).unwrap(), "   done (12 ms)");
        let observed = TaskEventKind::Observed {
            summary: "x".into(),
        };
        assert_eq!(describe(1, &observed), None);
    }
}
