//! itinero's browser extension, compiled to WebAssembly.
//!
//! The crate builds two modules, one per cargo feature, each entered through its exported
//! `start_*` functions from a few lines of JS in `extension/static/`. `content` is the
//! content script (the page); every frame of every page fetches and instantiates it, so it
//! holds nothing else. `ui` is the background service worker (owns the native-messaging
//! port) and the side panel (the user's window onto the agent), each loaded once. Both
//! features together (the default) build everything, for tests and lints.

use wasm_bindgen::prelude::*;

#[cfg(feature = "ui")]
mod background;
mod chrome;
#[cfg(feature = "content")]
mod content;
mod frame_protocol;
#[cfg(feature = "ui")]
mod panel_protocol;
#[cfg(feature = "ui")]
mod sidepanel;

/// Entered by `content.js` in every frame; `engine` says whether the page's CSP forced the wasm2js build.
#[cfg(feature = "content")]
#[wasm_bindgen]
pub fn start_content(engine: String) {
    content::start(engine);
}

/// This frame's observation as JSON, with no messaging. The extraction bench loads the module
/// into the page's main world too and times the walk there beside the plain-JS reference, so
/// that what the wasm boundary costs is told apart from what the isolated world costs.
#[cfg(feature = "content")]
#[wasm_bindgen]
pub fn observe_page() -> String {
    content::observe_page()
}

/// Entered once by `background.js` when the service worker starts.
#[cfg(feature = "ui")]
#[wasm_bindgen]
pub fn start_background() {
    background::start();
}

/// Hands a port opened by another extension context (e.g. the side panel) to the background.
#[cfg(feature = "ui")]
#[wasm_bindgen]
pub fn background_on_connect(port: chrome::Port) {
    background::on_connect(port);
}

/// Hands a one-off message from a content script to the background.
#[cfg(feature = "ui")]
#[wasm_bindgen]
pub fn background_on_message(message: JsValue, sender: JsValue) {
    background::on_message(message, sender);
}

/// Entered by `sidepanel.js` once the panel's document has loaded.
#[cfg(feature = "ui")]
#[wasm_bindgen]
pub fn start_sidepanel() -> Result<(), JsValue> {
    sidepanel::start()
}
