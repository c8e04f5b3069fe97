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
    panel
        .find_element("#goal")
        .await?
        .click()
        .await?
        .type_str(goal)
        .await?
        .press_key("Enter")
        .await?;
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
