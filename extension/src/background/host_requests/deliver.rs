//! Getting a message to the content script of one frame, and naming precisely why it could not.
//!
//! Chromium keeps extensions out of its own pages (`chrome://`), other extensions and the Web
//! Store; there `tabs.sendMessage` only says "Receiving end does not exist". The same words
//! come from a page whose content script is still loading (it starts at `document_idle`),
//! where waiting a little is the right answer. Nothing was delivered in either case, so
//! retrying cannot act twice.

use gloo_timers::future::TimeoutFuture;
use itinero_shared::ErrorCode;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;

use super::Failure;
use crate::chrome;

/// How long to wait for the content script of a page that is still loading.
const READY_WAIT_LOADING_MS: f64 = 20_000.0;
/// How long to wait once the page has loaded (the content script loads its wasm after that).
const READY_WAIT_LOADED_MS: f64 = 3_000.0;
const RETRY_MS: u32 = 50;

/// The tab, or `NoSuchTab`.
pub async fn get_tab(tab_id: i64) -> Result<JsValue, Failure> {
    let no_tab = |e: JsValue| Failure {
        code: ErrorCode::NoSuchTab,
        message: format!(
            "there is no tab with id {tab_id} ({}); list the open tabs with `itinero-host tabs`",
            chrome::error_message(&e)
        ),
    };
    let promise = chrome::tabs_get(tab_id as f64).map_err(no_tab)?;
    JsFuture::from(promise).await.map_err(no_tab)
}

/// The URL a tab shows, or is loading while its first navigation has not committed.
pub fn tab_url(tab: &JsValue) -> String {
    chrome::field(tab, "pendingUrl")
        .as_string()
        .filter(|u| !u.is_empty())
        .or_else(|| chrome::field(tab, "url").as_string())
        .unwrap_or_default()
}

/// Whether content scripts can run at `url` at all.
fn scripts_can_run(url: &str) -> bool {
    let url = url.to_ascii_lowercase();
    let web = ["http://", "https://", "file://"]
        .iter()
        .any(|scheme| url.starts_with(scheme));
    let store = url.starts_with("https://chromewebstore.google.com")
        || url.starts_with("https://chrome.google.com/webstore");
    web && !store
}

pub fn tab_closed(tab_id: i64) -> Failure {
    Failure {
        code: ErrorCode::TabClosed,
        message: format!("tab {tab_id} was closed before its page answered"),
    }
}

/// Sends `msg` to the content script in `frame_id` of `tab_id` and returns its answer.
pub async fn send_to_frame(tab_id: i64, frame_id: i64, msg: &JsValue) -> Result<JsValue, Failure> {
    send_to_frame_within(tab_id, frame_id, msg, READY_WAIT_LOADED_MS).await
}

/// As [`send_to_frame`], waiting at most `loaded_patience_ms` for the content script of a
/// loaded page (asking frames that may have none, such as an ad's, should not take seconds).
pub async fn send_to_frame_within(
    tab_id: i64,
    frame_id: i64,
    msg: &JsValue,
    loaded_patience_ms: f64,
) -> Result<JsValue, Failure> {
    let started = js_sys::Date::now();
    let options = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&options, &"frameId".into(), &(frame_id as f64).into());
    loop {
        let tab = get_tab(tab_id).await?;
        let url = tab_url(&tab);
        if !url.is_empty() && !scripts_can_run(&url) {
            return Err(Failure {
                code: ErrorCode::NoContentScript,
                message: format!(
                    "tab {tab_id} shows {url}, where extensions cannot run (browser pages, other extensions and the Web Store are off limits); open a web page in it"
                ),
            });
        }
        let sent = match chrome::tabs_send_message(tab_id as f64, msg, &options) {
            Ok(promise) => JsFuture::from(promise).await,
            Err(e) => Err(e),
        };
        let error = match sent {
            Ok(reply) => return Ok(reply),
            Err(e) => chrome::error_message(&e),
        };
        if !error.contains("Receiving end does not exist") {
            // Most often the page went away mid-request: closed, or navigated elsewhere.
            if get_tab(tab_id).await.is_err() {
                return Err(tab_closed(tab_id));
            }
            return Err(Failure::internal(format!(
                "the page in tab {tab_id} (frame {frame_id}, {url}) did not answer: {error}"
            )));
        }
        let loading = chrome::field(&tab, "status").as_string().as_deref() == Some("loading");
        let waited = js_sys::Date::now() - started;
        let patience = if loading {
            READY_WAIT_LOADING_MS
        } else {
            loaded_patience_ms
        };
        if waited > patience {
            return Err(Failure {
                code: ErrorCode::NoContentScript,
                message: format!(
                    "no itinero content script answers in tab {tab_id}, frame {frame_id} ({url}) after {:.1} s: the frame does not exist, or the page keeps extensions out",
                    waited / 1000.0
                ),
            });
        }
        TimeoutFuture::new(RETRY_MS).await;
    }
}
