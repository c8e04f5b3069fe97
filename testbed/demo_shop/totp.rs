//! The shop's side of TOTP: whether a code is right for the account's seed now (or one step
//! either side, for clocks that differ a little), as sites check them.

use totp_rs::{Algorithm, Secret, TOTP};

pub fn accepts(seed: &str, code: &str) -> bool {
    let Ok(bytes) = Secret::Encoded(seed.to_owned()).to_bytes() else {
        return false;
    };
    TOTP::new_unchecked(Algorithm::SHA1, 6, 1, 30, bytes)
        .check_current(code)
        .unwrap_or(false)
}

/// The current code for `seed` (tests type it as a person would read it off their phone).
pub fn current(seed: &str) -> String {
    let bytes = Secret::Encoded(seed.to_owned())
        .to_bytes()
        .expect("a base32 seed");
    TOTP::new_unchecked(Algorithm::SHA1, 6, 1, 30, bytes)
        .generate_current()
        .expect("the clock is after 1970")
}
