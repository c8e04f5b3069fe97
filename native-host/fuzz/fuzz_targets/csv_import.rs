//! A password manager's CSV export, as a user picks it (or a page offers it): parsed without a
//! panic, whatever its columns, quoting or encoding.
#![no_main]

use itinero_host::vault::csv_import::parse;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = parse(text);
    }
});
