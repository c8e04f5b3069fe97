//! A picture of the task's tab for the run's report.
//!
//! `captureVisibleTab` shows whatever tab is in front in a window, so the picture is taken only
//! while the task's tab is that tab and shows a web page, and is dropped when another tab came
//! to the front meanwhile: a report never holds another site's page, the extension's own pages
//! or the vault. Chromium allows two captures a second; a capture that comes sooner waits, and
//! one that fails is tried once more.

use std::cell::Cell;

use gloo_timers::future::TimeoutFuture;
use itinero_shared::ErrorCode;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;

use super::{deliver, Failure};
use crate::chrome::{self, field};

/// Chromium's `MAX_CAPTURE_VISIBLE_TAB_CALLS_PER_SECOND` is 2.
const CAPTURE_SPACING_MS: f64 = 510.0;
/// JPEG qualities tried in turn until the picture fits the host's size.
const QUALITIES: [u32; 3] = [70, 45, 25];
const DATA_URL_PREFIX: &str = "data:image/jpeg;base64,";

thread_local! {
    static LAST_CAPTURE_MS: Cell<f64> = const { Cell::new(f64::NEG_INFINITY) };
}

fn not_in_view(message: String) -> Failure {
    Failure {
        code: ErrorCode::Other,
        message,
    }
}

/// The tab's picture as base64 JPEG of at most `max_bytes` bytes.
pub async fn capture(tab_id: i64, max_bytes: u32) -> Result<String, Failure> {
    let tab = deliver::get_tab(tab_id).await?;
    let url = deliver::tab_url(&tab);
    if !shows_web_page(&url) {
        return Err(not_in_view(format!(
            "tab {tab_id} shows {url}, which is not pictured"
        )));
    }
    if !field(&tab, "active").as_bool().unwrap_or(false) {
        return Err(not_in_view(format!(
            "tab {tab_id} was not the one in view in its window"
        )));
    }
    let window_id = field(&tab, "windowId").as_f64().unwrap_or(-1.0);
    for quality in QUALITIES {
        // A window whose page is being swapped for another has no frame to read back
        // ("image readback failed"); the next capture, half a second on, finds one.
        let data_url = match capture_window(window_id, quality).await {
            Ok(data_url) => data_url,
            Err(_) => capture_window(window_id, quality).await?,
        };
        still_in_front(tab_id, window_id, &url).await?;
        let Some(base64) = data_url.strip_prefix(DATA_URL_PREFIX) else {
            return Err(Failure::internal(
                "the browser's picture was not a JPEG data URL".into(),
            ));
        };
        // Four base64 characters carry three bytes.
        if base64.len() / 4 * 3 <= max_bytes as usize {
            return Ok(base64.to_owned());
        }
    }
    Err(not_in_view(format!(
        "the picture of tab {tab_id} stayed over {max_bytes} bytes at the lowest quality"
    )))
}

async fn capture_window(window_id: f64, quality: u32) -> Result<String, Failure> {
    let since = js_sys::Date::now() - LAST_CAPTURE_MS.with(Cell::get);
    if since < CAPTURE_SPACING_MS {
        TimeoutFuture::new((CAPTURE_SPACING_MS - since).ceil() as u32).await;
    }
    LAST_CAPTURE_MS.with(|c| c.set(js_sys::Date::now()));
    let options = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&options, &"format".into(), &"jpeg".into());
    let _ = js_sys::Reflect::set(&options, &"quality".into(), &quality.into());
    let failed = |e: JsValue| {
        not_in_view(format!(
            "the browser could not picture the window: {}",
            chrome::error_message(&e)
        ))
    };
    let promise = chrome::tabs_capture_visible_tab(window_id, &options).map_err(failed)?;
    let data_url = JsFuture::from(promise).await.map_err(failed)?;
    data_url
        .as_string()
        .ok_or_else(|| Failure::internal("the browser's picture was not a string".into()))
}

/// The picture is kept only if the task's tab, at the same address, is still the one in front.
async fn still_in_front(tab_id: i64, window_id: f64, url: &str) -> Result<(), Failure> {
    let tab = deliver::get_tab(tab_id).await?;
    let same_window = field(&tab, "windowId").as_f64() == Some(window_id);
    let in_front = field(&tab, "active").as_bool().unwrap_or(false);
    if same_window && in_front && deliver::tab_url(&tab) == url {
        Ok(())
    } else {
        Err(not_in_view(format!(
            "tab {tab_id} left the front of its window while it was pictured"
        )))
    }
}

fn shows_web_page(url: &str) -> bool {
    let url = url.to_ascii_lowercase();
    ["http://", "https://", "file://"]
        .iter()
        .any(|scheme| url.starts_with(scheme))
}
