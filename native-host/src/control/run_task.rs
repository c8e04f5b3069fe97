//! `run`, `run_skill` and `perform` on the control socket: a task started by a program on this
//! machine (the CLI's `run` and `skills run`, the MCP server, the benchmarks) instead of the
//! panel. It is a task of the browser session like any other — recorded in the history, counted
//! in a skill's statistics, stoppable — whose events go to the client rather than to the panel;
//! its questions go to the client too, unless it runs for a program, which must not answer
//! them itself (then the user answers in the panel).

use itinero_shared::envelope::MessageSet;
use itinero_shared::messages::{SkillRun, StartTask, TabInfo, TaskOptions, UserReply};
use itinero_shared::{Action, ToBrowser};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};
use tracing::{debug, info};

use super::protocol::{Request, Response};
use crate::session::link::BrowserLink;
use crate::session::outbox::Outbox;
use crate::session::tasks::Tasks;
use crate::skills::{params, words};
use crate::store::{origin_of, Store, StoreError, StoredSkill};

/// What a client asked to run.
pub enum Job {
    Goal(String),
    /// A skill by name (or id), with its parameters' values.
    Skill {
        name: String,
        params: Vec<(String, String)>,
    },
    /// Actions the client named, carried out as a task's steps.
    Steps(Vec<Action>),
}

/// A run a client asked for: the job, the tab (default: chosen for it) and the program it runs
/// for, whose questions the user answers in the panel.
pub struct Run {
    pub job: Job,
    pub tab_id: Option<i64>,
    pub for_program: Option<String>,
}

impl TryFrom<Request> for Run {
    /// A request a stream answers; any other comes back.
    type Error = Request;

    fn try_from(request: Request) -> Result<Self, Request> {
        Ok(match request {
            Request::Run {
                goal,
                tab_id,
                for_program,
            } => Run {
                job: Job::Goal(goal),
                tab_id,
                for_program,
            },
            Request::RunSkill {
                skill,
                params,
                tab_id,
                for_program,
            } => Run {
                job: Job::Skill {
                    name: skill,
                    params,
                },
                tab_id,
                for_program,
            },
            Request::Perform {
                tab_id,
                actions,
                for_program,
            } => Run {
                job: Job::Steps(actions),
                tab_id: Some(tab_id),
                for_program,
            },
            other => return Err(other),
        })
    }
}

impl Job {
    /// For the log.
    pub fn name(&self) -> &'static str {
        match self {
            Job::Goal(_) => "goal",
            Job::Skill { .. } => "skill",
            Job::Steps(_) => "steps",
        }
    }
}

/// Most actions one `perform` carries out.
const MAX_STEPS: usize = 20;

/// A task ready to start: its goal, the skill it replays or the steps it carries out, and the
/// site it belongs on.
struct Ready {
    goal: String,
    skill: Option<SkillRun>,
    steps: Vec<Action>,
    origin: Option<String>,
}

fn find(store: &Store, skill: &str) -> Result<Option<StoredSkill>, StoreError> {
    if let Some(found) = store.skill_by_name(skill)? {
        return Ok(Some(found));
    }
    match skill.parse::<i64>() {
        Ok(id) => store.skill(id),
        Err(_) => Ok(None),
    }
}

async fn prepare(tasks: &Tasks, skill: &str, values: &[(String, String)]) -> Result<Ready, String> {
    let store = tasks
        .store()
        .get()
        .map_err(|why| format!("skills need the store, which could not be opened: {why}"))?
        .clone();
    let name = skill.to_owned();
    let stored = store
        .call(move |s| find(s, &name))
        .await
        .map_err(|e| format!("cannot read the skills: {e}"))?
        .ok_or_else(|| {
            format!("there is no skill \"{skill}\"; `itinero-host skills list` shows the skills")
        })?;
    let s = &stored.skill;
    params::check_values(s, values)
        .map_err(|e| format!("cannot run the skill \"{}\": {e}", s.name))?;
    let goal = params::fill(&s.goal, values)
        .map_err(|e| format!("cannot run the skill \"{}\": {e}", s.name))?;
    Ok(Ready {
        goal,
        steps: Vec::new(),
        origin: Some(s.origin.clone()),
        skill: Some(SkillRun {
            id: stored.id,
            params: values.to_vec(),
        }),
    })
}

/// The tab to run in when the client named none: a tab already on the skill's site (the
/// active one first), else an active web page (replay navigates to the skill's start page).
fn pick_tab(tabs: &[TabInfo], origin: Option<&str>) -> Option<i64> {
    let web = |t: &&TabInfo| t.url.starts_with("http://") || t.url.starts_with("https://");
    let on_site = |t: &&TabInfo| origin.is_some() && origin_of(&t.url).as_deref() == origin;
    let active = |t: &&TabInfo| t.active;
    tabs.iter()
        .filter(on_site)
        .max_by_key(|t| t.active)
        .or_else(|| tabs.iter().filter(web).find(active))
        .map(|t| t.tab_id)
}

/// Steps to carry out, with the goal the history shows for them: what they do, in words.
fn steps_ready(steps: Vec<Action>) -> Result<Ready, String> {
    if steps.is_empty() {
        return Err("no action to perform".into());
    }
    if steps.len() > MAX_STEPS {
        return Err(format!(
            "{} actions in one request; at most {MAX_STEPS}",
            steps.len()
        ));
    }
    if let Some(a) = steps
        .iter()
        .find(|a| matches!(a, Action::Done { .. } | Action::AskUser { .. }))
    {
        return Err(format!(
            "{} is not an action in the page: a program ends its own work and asks its own questions",
            a.kind()
        ));
    }
    let said: Vec<String> = steps.iter().map(words::action).collect();
    Ok(Ready {
        goal: format!("Perform: {}", said.join("; ")),
        skill: None,
        steps,
        origin: None,
    })
}

async fn send<W: AsyncWrite + Unpin>(write: &mut W, response: &Response) -> std::io::Result<()> {
    let mut out = serde_json::to_vec(response).expect("responses always serialise");
    out.push(b'\n');
    write.write_all(&out).await
}

/// Runs the job and streams its task to the client until it finishes. The connection is
/// the run's: it is closed afterwards, and closing it stops the task.
pub async fn serve<R, W>(
    link: &BrowserLink,
    tasks: Option<&Tasks>,
    run: Run,
    reader: &mut R,
    write: &mut W,
) where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let Some(tasks) = tasks else {
        let _ = send(write, &Response::error("this host runs no tasks")).await;
        return;
    };
    let Run {
        job,
        tab_id,
        for_program,
    } = run;
    let prepared = match job {
        Job::Goal(goal) if goal.trim().is_empty() => {
            Err("the goal is empty: say what to do".into())
        }
        Job::Goal(goal) => Ok(Ready {
            goal: goal.trim().to_owned(),
            skill: None,
            steps: Vec::new(),
            origin: None,
        }),
        Job::Skill { name, params } => prepare(tasks, &name, &params).await,
        Job::Steps(steps) => steps_ready(steps),
    };
    let ready = match prepared {
        Ok(ready) => ready,
        Err(why) => {
            let _ = send(write, &Response::error(why)).await;
            return;
        }
    };
    let tab_id = match tab_id {
        Some(tab) => tab,
        None => match link.list_tabs().await {
            Ok(tabs) => match pick_tab(&tabs.value, ready.origin.as_deref()) {
                Some(tab) => tab,
                None => {
                    let why = "no web page is open in the browser to work in: open one, \
                               or pass --tab (`itinero-host tabs` lists the tabs)";
                    let _ = send(write, &Response::error(why)).await;
                    return;
                }
            },
            Err(e) => {
                let _ = send(
                    write,
                    &Response::error(format!("cannot list the tabs: {e}")),
                )
                .await;
                return;
            }
        },
    };
    let (out, mut rx) = Outbox::channel();
    let start = StartTask {
        goal: ready.goal.clone(),
        tab_id,
        options: TaskOptions {
            skill: ready.skill,
            steps: ready.steps,
            ..Default::default()
        },
    };
    // The request id only tags the task's messages to `out`, which is this connection's alone.
    let task_id = tasks.start_reporting_to(out, 1, start, for_program);
    info!(task_id, tab_id, "task started from the control socket");
    let started = Response::Started {
        task_id,
        tab_id,
        goal: ready.goal,
    };
    if send(write, &started).await.is_err() {
        let _ = tasks.stop(task_id);
        return;
    }
    let mut lines = reader.lines();
    let mut client_gone = false;
    loop {
        tokio::select! {
            message = rx.recv() => {
                let response = match message.map(|env| env.msg) {
                    Some(ToBrowser::TaskEvent(event)) => Response::Event { event },
                    Some(ToBrowser::AskUser(question)) => Response::Question { question },
                    Some(ToBrowser::TaskFinished(finished)) => {
                        let _ = send(write, &Response::Finished { finished }).await;
                        return;
                    }
                    Some(other) => {
                        debug!(kind = other.type_name(), "a task message the control socket does not forward");
                        continue;
                    }
                    // The session ended and took its tasks with it.
                    None => {
                        let why = "the task ended without a result: the browser session ended";
                        let _ = send(write, &Response::error(why)).await;
                        return;
                    }
                };
                if send(write, &response).await.is_err() {
                    // Nobody reads the run any more: stop it, and let it finish quietly.
                    let _ = tasks.stop(task_id);
                    client_gone = true;
                }
            }
            line = lines.next_line(), if !client_gone => {
                let line = match line {
                    Ok(Some(line)) => line,
                    Ok(None) | Err(_) => {
                        info!(task_id, "the control client left; stopping its skill run");
                        let _ = tasks.stop(task_id);
                        client_gone = true;
                        continue;
                    }
                };
                if line.trim().is_empty() {
                    continue;
                }
                let answered = match serde_json::from_str::<Request>(&line) {
                    Ok(Request::Reply { question_id, reply }) => tasks
                        .reply(UserReply { task_id, question_id, reply, remember: false }),
                    Ok(Request::Stop) => tasks.stop(task_id),
                    Ok(_) => Err("a task is running on this connection: only reply and stop are taken until it finishes".into()),
                    Err(e) => Err(format!("unreadable request: {e}")),
                };
                if let Err(why) = answered {
                    if send(write, &Response::error(why)).await.is_err() {
                        let _ = tasks.stop(task_id);
                        client_gone = true;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tab(id: i64, url: &str, active: bool) -> TabInfo {
        TabInfo {
            tab_id: id,
            window_id: 1,
            url: url.into(),
            title: String::new(),
            active,
        }
    }

    #[test]
    fn the_tab_is_an_active_page_preferably_on_the_skills_site() {
        let tabs = [
            tab(1, "chrome://newtab/", true),
            tab(2, "http://127.0.0.1:9/shop/", false),
            tab(3, "https://example.org/", true),
            tab(4, "http://127.0.0.1:9/shop/cart", true),
        ];
        let shop = Some("http://127.0.0.1:9");
        assert_eq!(pick_tab(&tabs, shop), Some(4));
        assert_eq!(pick_tab(&tabs[..3], shop), Some(2));
        assert_eq!(pick_tab(&tabs, Some("https://elsewhere.test")), Some(3));
        assert_eq!(pick_tab(&tabs, None), Some(3));
        assert_eq!(pick_tab(&tabs[..2], None), None);
    }
}
