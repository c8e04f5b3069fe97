//! itinero's browser extension, compiled to WebAssembly.
//!
//! One module serves three contexts, each entered through its own exported
//! `start_*` function from a few lines of JS in `extension/static/`: the
//! background service worker (owns the native-messaging port), the side panel
//! (the user's window onto the agent) and the content script (the page).

use wasm_bindgen::prelude::*;

mod background;
mod chrome;
mod content;
mod frame_protocol;
mod panel_protocol;
mod sidepanel;

/// Entered once by `background.js` when the service worker starts.
#[wasm_bindgen]
pub fn start_background() {
    background::start();
}

/// Hands a port opened by another extension context (e.g. the side panel) to the background.
#[wasm_bindgen]
pub fn background_on_connect(port: chrome::Port) {
    background::on_connect(port);
}

/// Hands a one-off message from a content script to the background.
#[wasm_bindgen]
pub fn background_on_message(message: JsValue, sender: JsValue) {
    background::on_message(message, sender);
}

/// Entered by `sidepanel.js` once the panel's document has loaded.
#[wasm_bindgen]
pub fn start_sidepanel() -> Result<(), JsValue> {
    sidepanel::start()
}

/// Entered by `content.js` in every frame; `engine` says whether the page's CSP forced the wasm2js build.
#[wasm_bindgen]
pub fn start_content(engine: String) {
    content::start(engine);
}

/// This frame's observation as JSON, with no messaging. The extraction bench loads the module
/// into the page's main world too and times the walk there beside the plain-JS reference, so
/// that what the wasm boundary costs is told apart from what the isolated world costs.
#[wasm_bindgen]
pub fn observe_page() -> String {
    content::observe_page()
}
