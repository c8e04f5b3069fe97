//! The slice of the `chrome.*` extension API the extension uses, typed.
//!
//! web-sys does not cover extension APIs, so these are declared by hand; keeping
//! them in one module keeps `unsafe`-free JS interop in one place.
//!
//! Each of the two modules (see the crate's features) uses part of this slice; the build with
//! both checks that every binding is used by one of them.
#![cfg_attr(not(all(feature = "content", feature = "ui")), allow(dead_code))]

use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// A `chrome.runtime.Port`: to the native host, or between extension contexts.
    #[derive(Clone, Debug)]
    pub type Port;

    #[wasm_bindgen(method, js_name = postMessage, catch)]
    pub fn post_message(this: &Port, message: &JsValue) -> Result<(), JsValue>;

    #[wasm_bindgen(method, getter, js_name = onMessage)]
    pub fn on_message(this: &Port) -> Event;

    #[wasm_bindgen(method, getter, js_name = onDisconnect)]
    pub fn on_disconnect(this: &Port) -> Event;

    #[wasm_bindgen(method, getter)]
    pub fn name(this: &Port) -> String;

    #[wasm_bindgen(method)]
    pub fn disconnect(this: &Port);

    /// A `chrome.events.Event`.
    #[derive(Clone, Debug)]
    pub type Event;

    #[wasm_bindgen(method, js_name = addListener)]
    pub fn add_listener(this: &Event, listener: &js_sys::Function);

    #[wasm_bindgen(method, js_name = removeListener)]
    pub fn remove_listener(this: &Event, listener: &js_sys::Function);

    #[wasm_bindgen(js_namespace = ["chrome", "runtime"], js_name = connectNative, catch)]
    pub fn connect_native(application: &str) -> Result<Port, JsValue>;

    #[wasm_bindgen(js_namespace = ["chrome", "runtime"], js_name = connect)]
    pub fn connect(info: &JsValue) -> Port;

    #[wasm_bindgen(js_namespace = ["chrome", "runtime"], js_name = getManifest)]
    fn get_manifest() -> JsValue;

    #[wasm_bindgen(thread_local_v2, js_namespace = ["chrome", "runtime"], js_name = onMessage)]
    pub static RUNTIME_ON_MESSAGE: Event;

    #[wasm_bindgen(js_namespace = ["chrome", "runtime"], js_name = sendMessage, catch)]
    pub fn send_message(message: &JsValue) -> Result<js_sys::Promise, JsValue>;

    /// `chrome.tabs.sendMessage(tabId, message, {frameId})`: to the content script of one frame.
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = sendMessage, catch)]
    pub fn tabs_send_message(
        tab_id: f64,
        message: &JsValue,
        options: &JsValue,
    ) -> Result<js_sys::Promise, JsValue>;

    /// `chrome.tabs.get(tabId)`: resolves with the `Tab`, rejects when there is none.
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = get, catch)]
    pub fn tabs_get(tab_id: f64) -> Result<js_sys::Promise, JsValue>;

    /// `chrome.tabs.captureVisibleTab(windowId, options)`: resolves with a data URL of what the
    /// window shows (its active tab); at most two calls a second.
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = captureVisibleTab, catch)]
    pub fn tabs_capture_visible_tab(
        window_id: f64,
        options: &JsValue,
    ) -> Result<js_sys::Promise, JsValue>;

    /// `chrome.tabs.query(queryInfo)`: resolves with an array of `Tab`s.
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = query, catch)]
    pub fn tabs_query(query: &JsValue) -> Result<js_sys::Promise, JsValue>;

    /// `(tab)`
    #[wasm_bindgen(thread_local_v2, js_namespace = ["chrome", "tabs"], js_name = onCreated)]
    pub static TABS_ON_CREATED: Event;

    /// `(tabId, changeInfo, tab)`
    #[wasm_bindgen(thread_local_v2, js_namespace = ["chrome", "tabs"], js_name = onUpdated)]
    pub static TABS_ON_UPDATED: Event;

    /// `(tabId, removeInfo)`
    #[wasm_bindgen(thread_local_v2, js_namespace = ["chrome", "tabs"], js_name = onRemoved)]
    pub static TABS_ON_REMOVED: Event;

    /// `(details)` with `tabId`, `frameId`, `url`: a cross-document navigation starts.
    #[wasm_bindgen(thread_local_v2, js_namespace = ["chrome", "webNavigation"], js_name = onBeforeNavigate)]
    pub static NAVIGATION_ON_BEFORE_NAVIGATE: Event;

    /// `(details)` with `tabId`, `frameId`, `url`: a document was committed (after redirects).
    #[wasm_bindgen(thread_local_v2, js_namespace = ["chrome", "webNavigation"], js_name = onCommitted)]
    pub static NAVIGATION_ON_COMMITTED: Event;

    /// `(details)` with `tabId`, `frameId`, `error`: a navigation failed or was aborted.
    #[wasm_bindgen(thread_local_v2, js_namespace = ["chrome", "webNavigation"], js_name = onErrorOccurred)]
    pub static NAVIGATION_ON_ERROR_OCCURRED: Event;

    /// `(details)` with `tabId`, `frameId`, `url`: the fragment changed (same document).
    #[wasm_bindgen(thread_local_v2, js_namespace = ["chrome", "webNavigation"], js_name = onReferenceFragmentUpdated)]
    pub static NAVIGATION_ON_REFERENCE_FRAGMENT_UPDATED: Event;

    /// `(details)` with `tabId`, `frameId`, `url`: `history.pushState`/`replaceState` (same document).
    #[wasm_bindgen(thread_local_v2, js_namespace = ["chrome", "webNavigation"], js_name = onHistoryStateUpdated)]
    pub static NAVIGATION_ON_HISTORY_STATE_UPDATED: Event;
}

/// `chrome.runtime.lastError.message`, read right after a failed call or a disconnect.
pub fn last_error() -> Option<String> {
    let runtime = js_sys::Reflect::get(&js_sys::global(), &"chrome".into())
        .and_then(|c| js_sys::Reflect::get(&c, &"runtime".into()))
        .ok()?;
    let err = js_sys::Reflect::get(&runtime, &"lastError".into()).ok()?;
    if err.is_undefined() || err.is_null() {
        return None;
    }
    js_sys::Reflect::get(&err, &"message".into())
        .ok()
        .and_then(|m| m.as_string())
}

/// The extension's version from its manifest.
pub fn extension_version() -> String {
    js_sys::Reflect::get(&get_manifest(), &"version".into())
        .ok()
        .and_then(|v| v.as_string())
        .unwrap_or_default()
}

/// Sends a serialisable value as a plain JSON-compatible JS object (maps as objects, not `Map`s).
pub fn to_js<T: serde::Serialize>(value: &T) -> JsValue {
    let serializer = serde_wasm_bindgen::Serializer::json_compatible();
    value.serialize(&serializer).unwrap_or(JsValue::NULL)
}

/// Registers a listener for the lifetime of the extension context.
///
/// The closure is leaked on purpose: extension events hold it until the
/// context dies, and dropping it earlier would make the next event throw.
pub fn listen<F>(event: &Event, f: F)
where
    F: FnMut(JsValue) + 'static,
{
    let closure = Closure::<dyn FnMut(JsValue)>::new(f);
    event.add_listener(closure.as_ref().unchecked_ref());
    closure.forget();
}

/// A listener that is removed from its event when dropped, for events watched only while one
/// request is under way (unlike [`listen`], whose listeners live as long as the context).
pub struct Subscription {
    event: Event,
    function: js_sys::Function,
    /// Kept alive until the listener is removed: the event calls into it until then.
    _closure: Box<dyn std::any::Any>,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.event.remove_listener(&self.function);
    }
}

/// Listens to `event` until the returned [`Subscription`] is dropped. Events pass up to three
/// arguments (`tabs.onUpdated`); the ones an event does not pass are `undefined`.
pub fn subscribe<F>(event: &Event, f: F) -> Subscription
where
    F: FnMut(JsValue, JsValue, JsValue) + 'static,
{
    let closure = Closure::<dyn FnMut(JsValue, JsValue, JsValue)>::new(f);
    let function: js_sys::Function = closure.as_ref().unchecked_ref::<js_sys::Function>().clone();
    event.add_listener(&function);
    Subscription {
        event: event.clone(),
        function,
        _closure: Box::new(closure),
    }
}

/// Reads a field of a JS object (`undefined` when absent or not an object).
pub fn field(obj: &JsValue, name: &str) -> JsValue {
    js_sys::Reflect::get(obj, &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED)
}

/// The `message` of a rejected extension API call, or the value as text.
pub fn error_message(e: &JsValue) -> String {
    field(e, "message")
        .as_string()
        .or_else(|| e.as_string())
        .unwrap_or_else(|| format!("{e:?}"))
}

/// Logs to the context's console (the developer tools of that page or worker).
pub fn log(text: &str) {
    web_sys::console::log_1(&JsValue::from_str(text));
}

#[wasm_bindgen]
extern "C" {
    /// `chrome.webNavigation.getAllFrames({tabId})`: every frame of a tab, with its parent.
    #[wasm_bindgen(js_namespace = ["chrome", "webNavigation"], js_name = getAllFrames, catch)]
    pub fn web_navigation_get_all_frames(details: &JsValue) -> Result<js_sys::Promise, JsValue>;
}
