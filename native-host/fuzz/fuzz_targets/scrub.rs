//! The scrub against any secret and any text around it: it never panics, and once a text is
//! cleaned the secret is not in it, whatever surrounds it. (Secrets are kept to letters and
//! digits, of the length auto-login scrubs, and not inside the placeholder's own words, which
//! the cleaned text holds by design.)
#![no_main]

use itinero_host::sign_in::scrub::Scrubber;
use libfuzzer_sys::fuzz_target;

const PLACEHOLDER: &str = "{{secret:password}}";

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Some((secret, around)) = text.split_once('\n') else {
        return;
    };
    let secret: String = secret.chars().filter(|c| c.is_ascii_alphanumeric()).collect();
    if secret.len() < 8 || PLACEHOLDER.to_ascii_lowercase().contains(&secret.to_ascii_lowercase()) {
        return;
    }
    let scrubber = Scrubber::new([(secret.as_str(), PLACEHOLDER.to_owned())], 8);
    let mid = (0..=around.len() / 2)
        .rev()
        .find(|&i| around.is_char_boundary(i))
        .unwrap_or(0);
    let mut s = format!("{}{secret}{}", &around[..mid], &around[mid..]);
    scrubber.clean(&mut s);
    assert!(
        !s.to_ascii_lowercase().contains(&secret.to_ascii_lowercase()),
        "the secret survived the scrub"
    );
});
