//! Signing in to known sites with the vault's credentials, without the model ever seeing a
//! secret. `auto_login.rs`: the hook itself; `login_form.rs`: finding a sign-in form (one step, two steps,
//! a TOTP code) in an observation; `rules.rs`: where a saved sign-in may be used;
//! `overrides.rs`: per-site fixes in `sites.toml`; `signals.rs`: CAPTCHAs and the site's
//! refusal; `scrub.rs`: a typed secret's traces, in any encoding, turned back into placeholders.

pub mod auto_login;
pub mod login_form;
pub mod overrides;
pub mod rules;
pub mod scrub;
pub mod signals;
