//! A line on the control socket, from any program of the user's: read as a request without a
//! panic, and a request read prints without its secrets' values (its `Debug` is what the log
//! sees).
#![no_main]

use itinero_host::control::protocol::Request;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(request) = serde_json::from_slice::<Request>(data) {
        let _ = format!("{request:?}");
        let _ = serde_json::to_string(&request);
    }
});
