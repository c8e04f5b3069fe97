//! When a saved sign-in may be used on a page: the password manager's rules, strict by default.
//!
//! - The page's origin must be the saved one exactly: scheme, host and port (`www.` is another
//!   host, `shop.example.evil.test` is not `shop.example`).
//! - `http://` never gets what was saved for `https://`, unless the user allowed it for that
//!   sign-in (the host must still be the same).
//! - A sign-in the user marked "same site" also applies on the other hosts of its registrable
//!   domain by the public suffix list (`login.shop.example` for `shop.example`; never across a
//!   public suffix such as `github.io`), with the same scheme rule.
//!
//! Each refusal says why, for the audit list and the user.

use itinero_shared::messages::SecretField;
use itinero_shared::vault::{may_send_secret, AddressParts, CredentialSummary};
use reqwest::Url;

/// Scheme, host and port of an origin (`None` for what is not an http(s) origin).
fn parts(origin: &str) -> Option<(String, String, u16)> {
    let url = Url::parse(origin).ok()?;
    let scheme = url.scheme().to_owned();
    if scheme != "http" && scheme != "https" {
        return None;
    }
    let host = url.host_str()?.to_ascii_lowercase();
    Some((scheme, host, url.port_or_known_default()?))
}

/// The registrable domain (`shop.example` for `login.shop.example`), by the public suffix list.
/// An IP address has none: the list would take `192.168.1.1` and `45.33.1.1` alike for `1.1`.
pub fn registrable(host: &str) -> Option<String> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if bare.parse::<std::net::IpAddr>().is_ok() {
        return None;
    }
    psl::domain_str(host).map(str::to_owned)
}

/// Whether a form on a page of `page` may send a secret to `to` ([`may_send_secret`]'s rule,
/// with the page's registrable domain as its site).
pub fn may_send_to(page: &str, to: &str) -> bool {
    let (Ok(page_url), Ok(to_url)) = (Url::parse(page), Url::parse(to)) else {
        return false;
    };
    let parts = |url: &Url| (url.origin().ascii_serialization(), lower_host(url));
    let ((page_origin, page_host), (to_origin, to_host)) = (parts(&page_url), parts(&to_url));
    let site = registrable(&page_host);
    may_send_secret(
        AddressParts {
            origin: &page_origin,
            scheme: page_url.scheme(),
            host: &page_host,
        },
        site.as_deref(),
        AddressParts {
            origin: &to_origin,
            scheme: to_url.scheme(),
            host: &to_host,
        },
    )
}

fn lower_host(url: &Url) -> String {
    url.host_str().unwrap_or_default().to_ascii_lowercase()
}

/// Where a secret for a page of `origin` may be typed, for the page's own check as it types.
pub fn secret_field(origin: &str, kind: itinero_shared::vault::SecretKind) -> SecretField {
    SecretField {
        origin: origin.to_owned(),
        kind,
        site: parts(origin).and_then(|(_, host, _)| registrable(&host)),
    }
}

/// Whether `credential` may be filled on a page of `page_origin`; otherwise why not.
pub fn applies(credential: &CredentialSummary, page_origin: &str) -> Result<(), String> {
    let saved = &credential.origin;
    if page_origin == saved {
        return Ok(());
    }
    let (Some((s_scheme, s_host, s_port)), Some((p_scheme, p_host, p_port))) =
        (parts(saved), parts(page_origin))
    else {
        return Err(format!("{page_origin} is not a web origin"));
    };
    let downgrade = s_scheme == "https" && p_scheme == "http";
    if downgrade && !credential.allow_http {
        return Err(format!(
            "saved for {saved}; this page is not encrypted ({page_origin})"
        ));
    }
    if s_scheme == "http" && p_scheme == "https" {
        // An upgrade is fine in spirit, but the user saved it for http: keep it exact.
        return Err(format!("saved for {saved}, not for {page_origin}"));
    }
    let same_port = if downgrade {
        // The scheme's default ports differ; other ports must still match.
        s_port == 443 && p_port == 80 || s_port == p_port
    } else {
        s_port == p_port
    };
    if p_host == s_host && same_port && downgrade {
        return Ok(());
    }
    if credential.same_site && p_host != s_host {
        let same = match (registrable(&s_host), registrable(&p_host)) {
            (Some(a), Some(b)) => a == b,
            _ => false,
        };
        if same {
            return Ok(());
        }
    }
    Err(format!("saved for {saved}, not for {page_origin}"))
}

/// The sign-ins that may be filled on `page_origin`, exact matches first.
pub fn candidates<'a>(
    credentials: &'a [CredentialSummary],
    page_origin: &str,
) -> Vec<&'a CredentialSummary> {
    let mut found: Vec<&CredentialSummary> = credentials
        .iter()
        .filter(|c| applies(c, page_origin).is_ok())
        .collect();
    found.sort_by_key(|c| c.origin != page_origin);
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn saved(origin: &str) -> CredentialSummary {
        CredentialSummary {
            id: 1,
            origin: origin.into(),
            username: "alice".into(),
            has_totp: false,
            same_site: false,
            allow_http: false,
            updated_at: 0,
        }
    }

    #[test]
    fn only_the_exact_origin_by_default() {
        let c = saved("https://shop.example");
        assert!(applies(&c, "https://shop.example").is_ok());
        for other in [
            "https://www.shop.example",
            "https://shop.example.evil.test",
            "https://shop.example:8443",
            "https://evil-shop.example",
            "https://login.shop.example",
        ] {
            let why = applies(&c, other).unwrap_err();
            assert!(
                why.contains("saved for https://shop.example"),
                "{other}: {why}"
            );
        }
    }

    #[test]
    fn http_only_when_the_user_allowed_it() {
        let mut c = saved("https://shop.example");
        let why = applies(&c, "http://shop.example").unwrap_err();
        assert!(why.contains("not encrypted"), "{why}");
        c.allow_http = true;
        assert!(applies(&c, "http://shop.example").is_ok());
        assert!(applies(&c, "http://shop.example:8080").is_err());
        assert!(applies(&c, "http://shop.example.evil.test").is_err());
        // Saved for a loopback port over http: that port only.
        let local = saved("http://127.0.0.1:8080");
        assert!(applies(&local, "http://127.0.0.1:8080").is_ok());
        assert!(applies(&local, "http://127.0.0.1:8081").is_err());
        assert!(applies(&local, "https://127.0.0.1:8080").is_err());
    }

    #[test]
    fn same_site_follows_the_public_suffix_list() {
        let mut c = saved("https://shop.example.com");
        c.same_site = true;
        assert!(applies(&c, "https://login.shop.example.com").is_ok());
        assert!(applies(&c, "https://www.shop.example.com").is_ok());
        assert!(applies(&c, "https://shop.example.com.evil.test").is_err());
        assert!(applies(&c, "http://login.shop.example.com").is_err());
        // github.io is a public suffix: alice.github.io is not bob.github.io's site.
        let mut pages = saved("https://alice.github.io");
        pages.same_site = true;
        assert!(applies(&pages, "https://bob.github.io").is_err());
    }

    #[test]
    fn a_form_sends_a_secret_only_within_its_site_and_never_down_to_http() {
        let page = "https://www.shop.example";
        assert!(may_send_to(page, page));
        assert!(may_send_to(page, "https://login.shop.example"));
        assert!(!may_send_to(page, "http://login.shop.example"));
        assert!(!may_send_to(page, "https://evil.test"));
        assert!(!may_send_to(page, "https://shop.example.evil.test"));
        assert!(!may_send_to("https://a.github.io", "https://b.github.io"));
        assert!(!may_send_to(
            "http://127.0.0.1:8080",
            "http://127.1.0.1:8080"
        ));
        assert!(!may_send_to(page, "javascript:alert(1)"));
        assert_eq!(
            secret_field(page, itinero_shared::vault::SecretKind::Password).site,
            Some("shop.example".into())
        );
        assert_eq!(
            secret_field(
                "http://127.0.0.1:8080",
                itinero_shared::vault::SecretKind::Password
            )
            .site,
            None
        );
    }

    #[test]
    fn an_ip_address_is_its_own_site_only() {
        let mut c = saved("https://192.168.1.1");
        c.same_site = true;
        assert!(applies(&c, "https://192.168.1.1").is_ok());
        assert!(applies(&c, "https://45.33.1.1").is_err());
        assert!(applies(&c, "https://10.0.1.1").is_err());
        let mut v6 = saved("https://[2001:db8::1]");
        v6.same_site = true;
        assert!(applies(&v6, "https://[2001:db8::2]").is_err());
        assert_eq!(registrable("45.33.1.1"), None);
        assert_eq!(registrable("[::1]"), None);
        assert_eq!(
            registrable("login.shop.example.com").as_deref(),
            Some("example.com")
        );
    }

    #[test]
    fn exact_matches_come_first() {
        let mut wide = saved("https://shop.example.com");
        wide.same_site = true;
        wide.id = 2;
        let exact = CredentialSummary {
            id: 3,
            ..saved("https://login.shop.example.com")
        };
        let all = [wide, exact];
        let ids: Vec<i64> = candidates(&all, "https://login.shop.example.com")
            .iter()
            .map(|c| c.id)
            .collect();
        assert_eq!(ids, [3, 2]);
        assert!(candidates(&all, "https://evil.example").is_empty());
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        fn label() -> impl Strategy<Value = String> {
            "[a-z][a-z0-9]{0,6}"
        }

        proptest! {
            #[test]
            fn a_sign_in_never_leaves_its_registrable_domain(
                site in label(),
                other in label(),
                sub in proptest::option::of(label()),
                tld in prop::sample::select(vec!["com", "org", "co.uk", "github.io", "example"]),
                same_site in any::<bool>(),
                allow_http in any::<bool>(),
            ) {
                let mut c = saved(&format!("https://{site}.{tld}"));
                c.same_site = same_site;
                c.allow_http = allow_http;
                let host = match &sub {
                    Some(s) => format!("{s}.{other}.{tld}"),
                    None => format!("{other}.{tld}"),
                };
                for scheme in ["https", "http"] {
                    let page = format!("{scheme}://{host}");
                    if applies(&c, &page).is_ok() {
                        prop_assert_eq!(registrable(&host), registrable(&format!("{site}.{tld}")));
                        prop_assert!(scheme == "https" || allow_http, "{page}");
                    }
                }
            }

            #[test]
            fn an_address_matches_only_itself(
                a in any::<[u8; 4]>(),
                b in any::<[u8; 4]>(),
                same_site in any::<bool>(),
            ) {
                let ip = |o: [u8; 4]| format!("https://{}.{}.{}.{}", o[0], o[1], o[2], o[3]);
                let mut c = saved(&ip(a));
                c.same_site = same_site;
                prop_assert_eq!(applies(&c, &ip(b)).is_ok(), a == b);
            }
        }
    }
}
