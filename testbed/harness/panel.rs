//! Driving the side panel as a person does, for the tests and the demo: type a goal, wait for
//! the task's result, read the activity log.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use chromiumoxide::Page;

use super::{LaunchOptions, PageExt, WAIT};

/// Types `goal` into the panel's goal box and presses Enter.
pub async fn type_goal(panel: &Page, goal: &str) -> Result<()> {
    // The panel is a tab here, behind the page's: input goes to the tab in front.
    panel.bring_to_front().await?;
    // The panel keeps the last goal in the box (to run it again): start from an empty one.
    panel
        .run_js::<serde_json::Value>("document.querySelector('#goal').value = ''; return null;")
        .await?;
    const SENT: &str =
        "[...document.querySelectorAll('#log li.sent')].filter(li => li.textContent.startsWith('→ ')).length";
    let before: u64 = panel.run_js(&format!("return {SENT};")).await?;
    let field = panel.find_element("#goal").await?;
    field.click().await?;
    // Inserted as text, as an input method does: key events exist only for what a keyboard
    // layout has keys for, and goals name people and places in any script.
    panel
        .execute(chromiumoxide::cdp::browser_protocol::input::InsertTextParams::new(goal))
        .await?;
    field.press_key("Enter").await?;
    // Started: the panel has sent it and put the last task's result away, so a wait for this
    // task's result cannot take the last one's.
    panel
        .wait_for(&format!("{SENT} > {before}"), WAIT)
        .await
        .map_err(|e| anyhow::anyhow!("the panel did not start the goal {goal:?}: {e}"))?;
    Ok(())
}

/// Waits up to `timeout` for the task's result; returns its heading (`Done`, `Failed`, …) and
/// text.
pub async fn result(panel: &Page, timeout: Duration) -> Result<(String, String)> {
    let heading = panel
        .wait_for(
            "!document.querySelector('#answer').hidden && document.querySelector('#answer-status').textContent",
            timeout,
        )
        .await?;
    let text = panel.text_of("#answer-text").await?;
    Ok((heading.as_str().unwrap_or_default().to_owned(), text))
}

/// What the panel shows when a task ends or needs the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shown {
    /// The result's heading (`Done`, `Failed`, …) and text.
    Result(String, String),
    /// A question (`question`) or a request for approval, and its words.
    Asks { text: String, question: bool },
}

/// What changed in the panel since the activity log had `seen` lines: the new lines, the result
/// or a question when one is on screen, and what the step is waiting on when its progress bar
/// shows (its label up to the figures: "The model is reading the page").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    pub lines: Vec<String>,
    pub shown: Option<Shown>,
    pub working: Option<String>,
}

/// A progress label's words without its figures, which change as it moves.
const WORKING: &str = "(() => { const p = document.querySelector('#progress'); \
     return p && !p.hidden ? document.querySelector('#progress-label').textContent.split(': ')[0] : null; })()";

/// Waits up to `timeout` for the activity log to grow past `seen` lines, the task's result, a
/// question from the agent, or a progress bar about something other than `working`, whichever
/// comes first.
pub async fn progress(
    panel: &Page,
    seen: usize,
    working: Option<&str>,
    timeout: Duration,
) -> Result<Progress> {
    let working_js = serde_json::to_string(&working)?;
    panel
        .wait_for(
            &format!(
                "document.querySelectorAll('#log li').length > {seen} \
                 || (!document.querySelector('#answer').hidden && !!document.querySelector('#answer-status').textContent) \
                 || (!document.querySelector('#ask').hidden && !!document.querySelector('#ask-text').textContent) \
                 || ({WORKING} !== null && {WORKING} !== {working_js})"
            ),
            timeout,
        )
        .await?;
    let lines = log(panel).await?.into_iter().skip(seen).collect();
    let state: serde_json::Value = panel
        .run_js(
            "const shown = id => !document.querySelector(id).hidden; \
             return {result: shown('#answer') && document.querySelector('#answer-status').textContent, \
                     ask: shown('#ask') && document.querySelector('#ask-text').textContent, \
                     question: !document.querySelector('#ask-question').hidden};",
        )
        .await?;
    let text = |key: &str| {
        state[key]
            .as_str()
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
    };
    let shown = match (text("result"), text("ask")) {
        (Some(heading), _) => Some(Shown::Result(heading, panel.text_of("#answer-text").await?)),
        (None, Some(ask)) => Some(Shown::Asks {
            text: ask,
            question: state["question"].as_bool().unwrap_or(false),
        }),
        _ => None,
    };
    let working: Option<String> = panel.run_js(&format!("return {WORKING};")).await?;
    Ok(Progress {
        lines,
        shown,
        working,
    })
}

/// Sets a field of the panel as typing would: the value, then an `input` event. (The panel is
/// a tab behind the page's in the tests, so keystrokes would go to the page.)
pub async fn fill(panel: &Page, selector: &str, value: &str) -> Result<()> {
    panel
        .run_js::<serde_json::Value>(&format!(
            "const e = document.querySelector({selector:?}); e.value = {value:?}; \
             e.dispatchEvent(new Event('input', {{bubbles: true}})); return null;"
        ))
        .await?;
    Ok(())
}

/// Clicks a control of the panel (a DOM click: the panel is behind the page's tab).
pub async fn click(panel: &Page, selector: &str) -> Result<()> {
    panel
        .run_js::<serde_json::Value>(&format!(
            "document.querySelector({selector:?}).click(); return null;"
        ))
        .await?;
    Ok(())
}

/// Waits until the text of `selector` contains `want`; returns the text.
pub async fn text_with(panel: &Page, selector: &str, want: &str) -> Result<String> {
    let v = panel
        .wait_for(
            &format!(
                "(() => {{ const t = document.querySelector({selector:?})?.textContent ?? ''; \
                 return t.includes({want:?}) && t; }})()"
            ),
            WAIT,
        )
        .await
        .with_context(|| format!("{selector} never said {want:?}"))?;
    Ok(v.as_str().unwrap_or_default().to_owned())
}

/// The activity log's lines.
pub async fn log(panel: &Page) -> Result<Vec<String>> {
    panel
        .run_js("return [...document.querySelectorAll('#log li')].map(li => li.textContent);")
        .await
}

/// Opens a page of the panel with its tab and waits until it is on screen.
pub async fn open(panel: &Page, page: &str) -> Result<()> {
    panel
        .find_element(&format!("#nav-{page}"))
        .await?
        .click()
        .await?;
    let id = if page == "run" { "page-run" } else { page };
    panel
        .wait_for(
            &format!(
                "!document.getElementById('{id}').hidden && \
                 document.getElementById('nav-{page}').getAttribute('aria-selected') === 'true'"
            ),
            WAIT,
        )
        .await?;
    Ok(())
}

/// Opens Settings and waits for the form to be filled from the host.
pub async fn open_settings(panel: &Page) -> Result<()> {
    open(panel, "settings").await?;
    panel
        .wait_for(
            "!document.getElementById('settings-fields').disabled && \
             document.getElementById('settings-max-steps').value !== ''",
            WAIT,
        )
        .await
        .context("the settings never loaded")?;
    Ok(())
}

/// Chooses an option of a select, as picking it with the mouse does (`input`, then `change`).
pub async fn choose(panel: &Page, selector: &str, value: &str) -> Result<()> {
    let (sel, value) = (
        serde_json::to_string(selector)?,
        serde_json::to_string(value)?,
    );
    panel
        .run_js::<serde_json::Value>(&format!(
            "const e = document.querySelector({sel}); e.value = {value};
             e.dispatchEvent(new Event('input', {{ bubbles: true }}));
             e.dispatchEvent(new Event('change', {{ bubbles: true }}));
             return null;"
        ))
        .await?;
    Ok(())
}

/// Saves the settings and returns what the status next to the form then says, with its class.
/// Saves the settings form; returns the status line and its class (`ok` or `error`).
pub async fn save(panel: &Page) -> Result<(String, String)> {
    panel.find_element("#settings-save").await?.click().await?;
    let shown = panel
        .wait_for(
            "(() => { const s = document.getElementById('settings-status');
                      return /\\b(ok|error)\\b/.test(s.className) && [s.textContent, s.className]; })()",
            WAIT,
        )
        .await?;
    Ok((
        shown[0].as_str().unwrap_or_default().to_owned(),
        shown[1].as_str().unwrap_or_default().to_owned(),
    ))
}

impl LaunchOptions {
    /// The host's model is the scripted backend reading `script` (a JSON file of steps).
    pub fn scripted(script: &Path) -> Self {
        Self {
            host_env: vec![(
                "ITINERO_BACKEND".into(),
                format!("scripted:{}", script.display()),
            )],
            ..Default::default()
        }
    }
}
