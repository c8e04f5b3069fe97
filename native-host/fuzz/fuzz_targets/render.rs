//! An observation as the wire brings it, written out for the model both ways (the whole page
//! within a budget, and only the lines that matter for a small model): never a panic, and the
//! text stays within what the budget allows for what must be shown.
#![no_main]

use itinero_host::agent::render::{render, render_focused, RenderOptions};
use itinero_shared::observation::Observation;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(obs) = serde_json::from_slice::<Observation>(data) else {
        return;
    };
    for max_tokens in [16, 400] {
        let opts = RenderOptions {
            max_tokens,
            ..RenderOptions::default()
        };
        let whole = render(&obs, &opts);
        assert!(whole.shown_elements <= whole.total_elements);
        let focused = render_focused(&obs, &opts, &|line| (line.len() % 3) as f32);
        assert!(focused.shown_elements <= focused.total_elements);
    }
});
