// Loads the Rust/WASM content script. Pages whose CSP lacks 'wasm-unsafe-eval'
// forbid compiling WebAssembly even in content scripts: there the same code runs
// as JavaScript (the wasm2js build in pkg-js/).
(async () => {
  const url = (path) => chrome.runtime.getURL(path);
  let itinero;
  let engine = 'wasm';
  try {
    await WebAssembly.compile(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]));
    itinero = await import(url('pkg/itinero_extension.js'));
    await itinero.default({ module_or_path: url('pkg/itinero_extension_bg.wasm') });
  } catch (e) {
    engine = 'wasm2js';
    itinero = await import(url('pkg-js/itinero_extension.js'));
  }
  itinero.start_content(engine);
})().catch((e) => console.error('itinero: content script failed to start', e));
