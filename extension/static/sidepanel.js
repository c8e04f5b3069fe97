// Loads the Rust/WASM side panel.
import init, { start_sidepanel } from './pkg/ui/itinero_ui.js';

await init({ module_or_path: './pkg/ui/itinero_ui_bg.wasm' });
start_sidepanel();
