// Loads the Rust/WASM background. MV3 module workers allow no top-level await and
// no dynamic import, and listeners must be registered synchronously at start-up,
// so events are registered here and handed to the wasm once it has loaded.
import init, * as itinero from './pkg/ui/itinero_ui.js';

const ready = init({ module_or_path: './pkg/ui/itinero_ui_bg.wasm' })
  .then(() => itinero.start_background())
  .catch((e) => console.error('itinero: background failed to start', e));

chrome.runtime.onConnect.addListener((port) => {
  ready.then(() => itinero.background_on_connect(port));
});
chrome.runtime.onMessage.addListener((message, sender) => {
  ready.then(() => itinero.background_on_message(message, sender));
  return false;
});
chrome.sidePanel?.setPanelBehavior({ openPanelOnActionClick: true }).catch(() => {});
