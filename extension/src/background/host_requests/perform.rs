//! Performing an action for the host, and reporting what it did to the browser, not only to
//! the page.
//!
//! The content script knows what happened inside its page. Two effects are visible only from
//! here: a tab the action opened (a `target=_blank` link, `window.open`), and where a
//! navigation really landed. The page is torn down before a new document commits, so it can
//! report at most where it was going (before redirects), and sometimes not even that.

use std::cell::RefCell;
use std::rc::Rc;

use itinero_shared::messages::{Outcome, Perform};
use itinero_shared::Action;
use wasm_bindgen::JsValue;

use super::wait::{first_of, Latch};
use super::{deliver, Failure};
use crate::chrome::{self, field, Subscription};

/// Longest wait for a navigation the action started to commit.
const COMMIT_WAIT_MS: u32 = 10_000;
/// Longest wait for a tab the action opened to say which URL it is loading.
const OPENED_URL_WAIT_MS: u32 = 2_000;

/// Browser events about one tab, recorded while an action runs in it; listeners go on drop.
struct Watch {
    /// The first tab opened by the acting tab: id and URL (empty until known).
    opened: Rc<RefCell<Option<(i64, String)>>>,
    opened_url: Latch,
    /// A cross-document navigation of the top frame started (`webNavigation` does not see
    /// same-document ones, such as an SPA's `pushState`).
    navigation_started: Latch,
    /// The top frame committed a new document; its URL, after redirects.
    committed: Latch,
    /// The top frame's navigation failed or was aborted (a download, a 204).
    navigation_failed: Latch,
    /// The top frame changed its URL without a new document (a fragment, `pushState`).
    same_document: Latch,
    removed: Latch,
    _subscriptions: Vec<Subscription>,
}

impl Watch {
    fn start(tab_id: i64) -> Self {
        let is_tab = move |id: &JsValue| id.as_f64() == Some(tab_id as f64);
        let top_frame_of_tab = move |details: &JsValue| {
            is_tab(&field(details, "tabId")) && field(details, "frameId").as_f64() == Some(0.0)
        };
        let opened = Rc::new(RefCell::new(None::<(i64, String)>));
        let opened_url = Latch::new();
        let navigation_started = Latch::new();
        let committed = Latch::new();
        let navigation_failed = Latch::new();
        let same_document = Latch::new();
        let removed = Latch::new();

        let on_created = {
            let opened = opened.clone();
            move |tab: JsValue, _: JsValue, _: JsValue| {
                let id = field(&tab, "id").as_f64();
                if !is_tab(&field(&tab, "openerTabId")) || opened.borrow().is_some() {
                    return;
                }
                if let Some(id) = id {
                    *opened.borrow_mut() = Some((id as i64, deliver::tab_url(&tab)));
                }
            }
        };
        let on_updated = {
            let opened = opened.clone();
            let latch = opened_url.clone();
            move |id: JsValue, change: JsValue, _: JsValue| {
                let opened_id = opened.borrow().as_ref().map(|(id, _)| *id);
                if opened_id.is_some() && id.as_f64() == opened_id.map(|i| i as f64) {
                    if let Some(url) = field(&change, "url").as_string() {
                        latch.fire(url.into());
                    }
                }
            }
        };
        let on_removed = {
            let latch = removed.clone();
            move |id: JsValue, _: JsValue, _: JsValue| {
                if is_tab(&id) {
                    latch.fire(JsValue::TRUE);
                }
            }
        };
        let frame_event = |latch: &Latch, key: &'static str| {
            let latch = latch.clone();
            move |details: JsValue, _: JsValue, _: JsValue| {
                if top_frame_of_tab(&details) {
                    latch.fire(field(&details, key));
                }
            }
        };
        let subscriptions = vec![
            chrome::TABS_ON_CREATED.with(|e| chrome::subscribe(e, on_created)),
            chrome::TABS_ON_UPDATED.with(|e| chrome::subscribe(e, on_updated)),
            chrome::TABS_ON_REMOVED.with(|e| chrome::subscribe(e, on_removed)),
            chrome::NAVIGATION_ON_BEFORE_NAVIGATE
                .with(|e| chrome::subscribe(e, frame_event(&navigation_started, "url"))),
            chrome::NAVIGATION_ON_COMMITTED
                .with(|e| chrome::subscribe(e, frame_event(&committed, "url"))),
            chrome::NAVIGATION_ON_ERROR_OCCURRED
                .with(|e| chrome::subscribe(e, frame_event(&navigation_failed, "error"))),
            chrome::NAVIGATION_ON_REFERENCE_FRAGMENT_UPDATED
                .with(|e| chrome::subscribe(e, frame_event(&same_document, "url"))),
            chrome::NAVIGATION_ON_HISTORY_STATE_UPDATED
                .with(|e| chrome::subscribe(e, frame_event(&same_document, "url"))),
        ];
        Self {
            opened,
            opened_url,
            navigation_started,
            committed,
            navigation_failed,
            same_document,
            removed,
            _subscriptions: subscriptions,
        }
    }

    fn navigating(&self) -> bool {
        self.navigation_started.get().is_some() || self.committed.get().is_some()
    }
}

/// Runs the action in its frame; the outcome and the milliseconds it took, seen from here.
pub async fn perform(req: &Perform) -> Result<(Outcome, u64), Failure> {
    let started = js_sys::Date::now();
    let watch = Watch::start(req.tab_id);
    let msg = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&msg, &"kind".into(), &"act".into());
    let _ = js_sys::Reflect::set(&msg, &"action".into(), &chrome::to_js(&req.action));
    if let Some(secret) = &req.secret {
        let _ = js_sys::Reflect::set(&msg, &"secret".into(), &chrome::to_js(secret));
    }
    let outcome = match deliver::send_to_frame(req.tab_id, req.frame_id, &msg).await {
        Ok(reply) => read_outcome(reply)?,
        // The page went away without answering while it navigated: that is what happened.
        Err(f) if f.code == itinero_shared::ErrorCode::Internal && watch.navigating() => {
            Outcome::Navigated { url: String::new() }
        }
        Err(f) => return Err(f),
    };
    let outcome = match outcome {
        Outcome::Navigated { url } => {
            // The page answers `navigate` before the navigation has even started.
            let follow = matches!(req.action, Action::Navigate { .. });
            landed(&watch, req.tab_id, url, follow).await?
        }
        Outcome::Done => match opened_tab(&watch).await {
            Some((tab_id, url)) => Outcome::OpenedTab { tab_id, url },
            None => Outcome::Done,
        },
        other => other,
    };
    let elapsed_ms = (js_sys::Date::now() - started).max(0.0) as u64;
    Ok((outcome, elapsed_ms))
}

fn read_outcome(reply: JsValue) -> Result<Outcome, Failure> {
    let reply = match reply.as_string() {
        Some(text) => js_sys::JSON::parse(&text).unwrap_or(JsValue::UNDEFINED),
        None => reply,
    };
    serde_wasm_bindgen::from_value(reply)
        .map_err(|e| Failure::internal(format!("the page's outcome was unreadable: {e}")))
}

/// Where a navigation the action caused ended up.
///
/// A cross-document navigation (the page could not name it, `webNavigation` saw it start, or
/// `follow` says one is coming) is followed to its commit, whose URL is the real destination
/// after redirects. A same-document one (a fragment, an SPA route) keeps the page's own URL.
async fn landed(watch: &Watch, tab_id: i64, url: String, follow: bool) -> Result<Outcome, Failure> {
    if !url.is_empty() && !watch.navigating() && !follow {
        return Ok(Outcome::Navigated { url });
    }
    first_of(
        &[
            &watch.committed,
            &watch.navigation_failed,
            &watch.same_document,
            &watch.removed,
        ],
        COMMIT_WAIT_MS,
    )
    .await;
    if let Some(committed) = watch.committed.get().and_then(|u| u.as_string()) {
        return Ok(Outcome::Navigated { url: committed });
    }
    if watch.removed.get().is_some() {
        return Err(deliver::tab_closed(tab_id));
    }
    if let Some(moved) = watch.same_document.get().and_then(|u| u.as_string()) {
        return Ok(Outcome::Navigated { url: moved });
    }
    // Aborted, or still loading after the wait: the page's word, else the tab's own URL.
    if !url.is_empty() {
        return Ok(Outcome::Navigated { url });
    }
    let tab = deliver::get_tab(tab_id)
        .await
        .map_err(|_| deliver::tab_closed(tab_id))?;
    Ok(Outcome::Navigated {
        url: deliver::tab_url(&tab),
    })
}

/// The tab the action opened, if it opened one, with the URL it is loading.
async fn opened_tab(watch: &Watch) -> Option<(i64, String)> {
    let (id, url) = watch.opened.borrow().clone()?;
    if !url.is_empty() {
        return Some((id, url));
    }
    first_of(&[&watch.opened_url], OPENED_URL_WAIT_MS).await;
    let url = match watch.opened_url.get().and_then(|u| u.as_string()) {
        Some(url) => url,
        None => deliver::get_tab(id)
            .await
            .map(|t| deliver::tab_url(&t))
            .unwrap_or_default(),
    };
    Some((id, url))
}
