//! Sites as the store keys them: the web origin, `scheme://host[:port]`.
//!
//! Lessons and "always allow" belong to a site, and what is allowed on `https://shop.example`
//! must not be on `http://shop.example` or `https://shop.example:8443`, so the key is the
//! exact origin (the port only when it is not the scheme's default), whatever form of URL the
//! caller had at hand.

use reqwest::Url;

use super::error::{Result, StoreError};

/// The origin of `url`, or `None` when it has none (`about:blank`, `data:`, `file:`, not a URL).
pub fn origin_of(url: &str) -> Option<String> {
    let parsed = Url::parse(url.trim()).ok()?;
    let origin = parsed.origin();
    origin.is_tuple().then(|| origin.ascii_serialization())
}

/// The origin of a URL or origin the caller gave, or an error saying it is not one.
pub(crate) fn require_origin(url_or_origin: &str) -> Result<String> {
    origin_of(url_or_origin).ok_or_else(|| StoreError::NotAnOrigin(url_or_origin.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_exact_and_canonical() {
        assert_eq!(
            origin_of("https://Shop.Example/cart?x=1#top").as_deref(),
            Some("https://shop.example")
        );
        assert_eq!(
            origin_of("https://shop.example:443/").as_deref(),
            Some("https://shop.example")
        );
        assert_eq!(
            origin_of("http://127.0.0.1:8080").as_deref(),
            Some("http://127.0.0.1:8080")
        );
        assert_eq!(
            origin_of("https://bücher.example/").as_deref(),
            Some("https://xn--bcher-kva.example")
        );
        for none in [
            "about:blank",
            "data:text/html,x",
            "file:///tmp/a",
            "shop.example",
            "",
        ] {
            assert_eq!(origin_of(none), None, "{none}");
        }
        assert!(matches!(
            require_origin("nope"),
            Err(StoreError::NotAnOrigin(s)) if s == "nope"
        ));
    }
}
