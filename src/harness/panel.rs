//! Driving the side panel as a person does, for the tests and the demo: type a goal, wait for
//! the task's result, read the activity log.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use chromiumoxide::Page;

use super::{LaunchOptions, PageExt};

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
            super::WAIT,
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
