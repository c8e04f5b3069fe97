// Loads the Rust/WASM side panel.
import init, { start_sidepanel } from './pkg/itinero_extension.js';

await init({ module_or_path: './pkg/itinero_extension_bg.wasm' });
start_sidepanel();
