//! Feeds raw bytes to `Envelope::<ToHost>::from_json`; whenever that succeeds, the
//! envelope must re-encode with `to_json()` to bytes that decode to an equal envelope,
//! and that second encoding must be byte-for-byte stable.
#![no_main]

use itinero_shared::{Envelope, ToHost};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(env) = Envelope::<ToHost>::from_json(data) else {
        return;
    };
    let json = env.to_json();
    let back = match Envelope::<ToHost>::from_json(&json) {
        Ok(back) => back,
        Err((_, e)) => panic!(
            "re-encoded envelope no longer decodes: {e}\n  in:  {:?}\n  out: {:?}",
            String::from_utf8_lossy(data),
            String::from_utf8_lossy(&json)
        ),
    };
    assert_eq!(back, env, "re-encoded envelope decodes differently");
    assert_eq!(back.to_json(), json, "encoding is not stable");
});
