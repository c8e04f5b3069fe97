//! URL patterns: a page's address with what changes between visits (ids, numbers, query values)
//! generalised, so the action cache and skills can say "the same page" across runs.
//!
//! `https://shop.test/shop/product/42?ref=7&q=socks` → `https://shop.test/shop/product/*?q&ref`.
//! The query keeps its keys (sorted) and drops their values; the fragment is dropped.

use reqwest::Url;

/// Whether a path segment is an id rather than a name: all digits, a UUID, or a long run of
/// hex or mixed letters and digits such as `a1b2c3d4`.
fn is_id(segment: &str) -> bool {
    if segment.is_empty() {
        return false;
    }
    let digits = segment.chars().filter(char::is_ascii_digit).count();
    if digits == segment.len() {
        return true;
    }
    let hexish = segment
        .chars()
        .all(|c| c.is_ascii_hexdigit() || c == '-' || c == '_');
    (hexish && digits > 0 && segment.len() >= 8) || (digits >= 3 && digits * 2 >= segment.len())
}

/// The pattern of `url`; a string that is not a URL is its own pattern.
pub fn pattern(url: &str) -> String {
    let Ok(parsed) = Url::parse(url.trim()) else {
        return url.trim().to_owned();
    };
    let mut out = String::new();
    let origin = parsed.origin();
    if origin.is_tuple() {
        out.push_str(&origin.ascii_serialization());
    } else {
        out.push_str(parsed.scheme());
        out.push(':');
    }
    let path: Vec<&str> = parsed.path().split('/').collect();
    let generalised: Vec<&str> = path
        .iter()
        .map(|s| if is_id(s) { "*" } else { s })
        .collect();
    out.push_str(&generalised.join("/"));
    let mut keys: Vec<String> = parsed.query_pairs().map(|(k, _)| k.into_owned()).collect();
    keys.sort();
    keys.dedup();
    if !keys.is_empty() {
        out.push('?');
        out.push_str(&keys.join("&"));
    }
    out
}

/// Whether `url` is a visit of the page `pattern` describes; a `*` segment in the pattern
/// stands for any one segment (skills write one where a page is named after a parameter).
pub fn matches(pattern_: &str, url: &str) -> bool {
    let seen = pattern(url);
    if seen == pattern_ {
        return true;
    }
    let split = |p: &str| -> (String, String) {
        match p.split_once('?') {
            Some((a, b)) => (a.to_owned(), b.to_owned()),
            None => (p.to_owned(), String::new()),
        }
    };
    let ((want_path, want_query), (seen_path, seen_query)) = (split(pattern_), split(&seen));
    let want: Vec<&str> = want_path.split('/').collect();
    let have: Vec<&str> = seen_path.split('/').collect();
    want_query == seen_query
        && want.len() == have.len()
        && want.iter().zip(&have).all(|(w, h)| *w == "*" || w == h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_numbers_and_query_values_are_generalised() {
        assert_eq!(
            pattern("https://shop.test/shop/product/42?ref=7&q=socks#top"),
            "https://shop.test/shop/product/*?q&ref"
        );
        assert_eq!(
            pattern("http://127.0.0.1:8080/orders/3f2a9c1e-77aa-4b1e-9d11-0c0ffee00001/edit"),
            "http://127.0.0.1:8080/orders/*/edit"
        );
        assert_eq!(pattern("https://a.test/u/a1b2c3d4e5"), "https://a.test/u/*");
        assert_eq!(
            pattern("https://a.test/shop/cart"),
            "https://a.test/shop/cart"
        );
        assert_eq!(pattern("https://a.test/"), "https://a.test/");
        // Words with a digit or two stay: they name pages.
        assert_eq!(pattern("https://a.test/h2o/mp3"), "https://a.test/h2o/mp3");
        assert_eq!(pattern("about:blank"), "about:blank");
        assert_eq!(pattern("not a url"), "not a url");
    }

    #[test]
    fn two_visits_of_one_page_match() {
        let p = pattern("https://shop.test/shop/product/42?q=socks");
        assert!(matches(&p, "https://shop.test/shop/product/7?q=shoes"));
        assert!(!matches(&p, "https://shop.test/shop/cart?q=shoes"));
        assert!(!matches(&p, "https://other.test/shop/product/7?q=shoes"));
        let named = "https://shop.test/shop/product/*";
        assert!(matches(
            named,
            "https://shop.test/shop/product/cotton-socks"
        ));
        assert!(!matches(named, "https://shop.test/shop/cart"));
        assert!(!matches(named, "https://shop.test/shop/product/a/b"));
    }
}
