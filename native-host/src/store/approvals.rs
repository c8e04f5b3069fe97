//! Per-site "always allow": once the user allows a kind of risky action (`buy`, `delete`,
//! `payment`, …) on a site for good, the agent stops asking there, as long as the approval
//! policy honours it (`ApprovalPolicy::honours_site_approvals`).
//!
//! Keyed by the exact origin and the guard's word for the risk, so allowing purchases on a
//! shop allows neither deletions there nor purchases anywhere else.

use itinero_shared::records::SiteApproval;
use rusqlite::{params, OptionalExtension};

use super::error::{Doing, Result, StoreError};
use super::site::require_origin;
use super::{now_ms, Store};

/// The kind as kept: the guard's word, lower case.
fn kind_key(kind: &str) -> Result<String> {
    let kind = kind.trim().to_lowercase();
    if kind.is_empty() {
        return Err(StoreError::Invalid(
            "an approval needs the kind of action it allows".into(),
        ));
    }
    Ok(kind)
}

impl Store {
    /// Always allows `kind` of risky action on the site of `url_or_origin` (either form is
    /// taken). Allowing again keeps the first date.
    pub fn allow(&self, url_or_origin: &str, kind: &str) -> Result<SiteApproval> {
        let origin = require_origin(url_or_origin)?;
        let kind = kind_key(kind)?;
        let conn = self.conn();
        conn.execute(
            "INSERT INTO site_approvals (origin, kind, created_at) VALUES (?1, ?2, ?3)
             ON CONFLICT (origin, kind) DO NOTHING",
            params![origin, kind, now_ms()],
        )
        .doing(|| format!("allowing {kind} on {origin}"))?;
        let created_at = conn
            .query_row(
                "SELECT created_at FROM site_approvals WHERE origin = ?1 AND kind = ?2",
                params![origin, kind],
                |r| r.get(0),
            )
            .doing(|| format!("allowing {kind} on {origin}"))?;
        Ok(SiteApproval {
            origin,
            kind,
            created_at,
        })
    }

    /// Whether `kind` of risky action is always allowed on the site of `url`. A page without an
    /// origin (`about:blank`, `file:`) never is.
    pub fn is_allowed(&self, url: &str, kind: &str) -> Result<bool> {
        let (Ok(origin), Ok(kind)) = (require_origin(url), kind_key(kind)) else {
            return Ok(false);
        };
        let found = self
            .conn()
            .query_row(
                "SELECT 1 FROM site_approvals WHERE origin = ?1 AND kind = ?2",
                params![origin, kind],
                |_| Ok(()),
            )
            .optional()
            .doing(|| format!("looking up whether {kind} is allowed on {origin}"))?;
        Ok(found.is_some())
    }

    /// Every "always allow", by site and kind.
    pub fn site_approvals(&self) -> Result<Vec<SiteApproval>> {
        let doing = || "listing the sites' approvals".to_owned();
        let conn = self.conn();
        let mut stmt = conn
            .prepare_cached(
                "SELECT origin, kind, created_at FROM site_approvals ORDER BY origin, kind",
            )
            .doing(doing)?;
        let list = stmt
            .query_map([], |r| {
                Ok(SiteApproval {
                    origin: r.get(0)?,
                    kind: r.get(1)?,
                    created_at: r.get(2)?,
                })
            })
            .and_then(|rows| rows.collect())
            .doing(doing);
        list
    }

    /// Withdraws an "always allow"; whether there was one.
    pub fn revoke(&self, url_or_origin: &str, kind: &str) -> Result<bool> {
        let origin = require_origin(url_or_origin)?;
        let kind = kind_key(kind)?;
        let n = self
            .conn()
            .execute(
                "DELETE FROM site_approvals WHERE origin = ?1 AND kind = ?2",
                params![origin, kind],
            )
            .doing(|| format!("revoking {kind} on {origin}"))?;
        Ok(n > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_exactly_where_and_for_what_it_was_given() {
        let store = Store::open_in_memory().unwrap();
        let a = store.allow("https://shop.example/checkout", "Buy").unwrap();
        assert_eq!(
            (a.origin.as_str(), a.kind.as_str()),
            ("https://shop.example", "buy")
        );
        assert!(store
            .is_allowed("https://shop.example/other/page", "buy")
            .unwrap());
        assert!(store.is_allowed("https://shop.example", " BUY ").unwrap());
        assert!(!store.is_allowed("https://shop.example/", "delete").unwrap());
        assert!(!store.is_allowed("http://shop.example/", "buy").unwrap());
        assert!(!store
            .is_allowed("https://shop.example:8443/", "buy")
            .unwrap());
        assert!(!store.is_allowed("https://evil.example/", "buy").unwrap());
        assert!(!store.is_allowed("about:blank", "buy").unwrap());
        assert!(!store.is_allowed("https://shop.example/", "").unwrap());
    }

    #[test]
    fn allowing_twice_keeps_one_entry_and_its_first_date() {
        let store = Store::open_in_memory().unwrap();
        let first = store.allow("https://shop.example", "buy").unwrap();
        store.allow("https://bank.example", "transfer").unwrap();
        let again = store.allow("https://shop.example/x", "buy").unwrap();
        assert_eq!(first, again);
        let list = store.site_approvals().unwrap();
        let pairs: Vec<_> = list
            .iter()
            .map(|a| (a.origin.as_str(), a.kind.as_str()))
            .collect();
        assert_eq!(
            pairs,
            [
                ("https://bank.example", "transfer"),
                ("https://shop.example", "buy")
            ]
        );
    }

    #[test]
    fn revoking_removes_only_that_one() {
        let store = Store::open_in_memory().unwrap();
        store.allow("https://shop.example", "buy").unwrap();
        store.allow("https://shop.example", "delete").unwrap();
        assert!(store.revoke("https://shop.example/", "buy").unwrap());
        assert!(!store.revoke("https://shop.example/", "buy").unwrap());
        assert!(!store.is_allowed("https://shop.example", "buy").unwrap());
        assert!(store.is_allowed("https://shop.example", "delete").unwrap());
    }

    #[test]
    fn no_origin_no_approval() {
        let store = Store::open_in_memory().unwrap();
        assert!(matches!(
            store.allow("about:blank", "buy"),
            Err(StoreError::NotAnOrigin(_))
        ));
        assert!(store.allow("https://shop.example", " ").is_err());
        assert!(store.site_approvals().unwrap().is_empty());
    }
}
