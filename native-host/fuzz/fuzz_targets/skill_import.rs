//! A skill file from anywhere (JSON, or a Markdown playbook): read and checked without a panic;
//! what is accepted passes the checks a saved skill is held to.
#![no_main]

use itinero_host::skills::import::{from_json, from_markdown, validate};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(skill) = from_json(text) {
        assert!(validate(&skill).is_ok(), "an imported skill fails its own checks");
    }
    let _ = from_markdown(text);
});
