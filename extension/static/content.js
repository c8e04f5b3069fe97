// Loads the Rust/WASM content script. Pages whose CSP lacks 'wasm-unsafe-eval'
// forbid compiling WebAssembly even in content scripts: there the same code runs
// as JavaScript (the wasm2js build in pkg-js/).
(async () => {
  // What starting took in this frame, for benches/content_load.rs: a global of the content
  // script's isolated world, which the page cannot read.
  const load = { started: performance.now() };
  const url = (path) => chrome.runtime.getURL(path);
  let itinero;
  let engine = 'wasm';
  try {
    await WebAssembly.compile(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]));
    itinero = await import(url('pkg/content/itinero_content.js'));
    await itinero.default({ module_or_path: url('pkg/content/itinero_content_bg.wasm') });
  } catch (e) {
    engine = 'wasm2js';
    itinero = await import(url('pkg-js/itinero_content.js'));
  }
  load.loaded = performance.now();
  itinero.start_content(engine);
  load.ready = performance.now();
  load.engine = engine;
  globalThis.__itineroContentLoad = load;
})().catch((e) => console.error('itinero: content script failed to start', e));
