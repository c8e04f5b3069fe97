//! Signing in to known sites with the vault's credentials, without the model ever seeing a
//! secret (DESIGN.md, auto-login). `rules.rs`: where a saved sign-in may be used.

pub mod rules;
