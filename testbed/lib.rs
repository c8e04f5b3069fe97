//! The `itinero` root package: the end-to-end harness and the demo shop shared by
//! the tests in `tests/`, the benchmarks in `benches/` and the demo in `examples/`.
//!
//! The product itself lives in the workspace crates (`shared/`, `extension/`,
//! `native-host/`); this library only drives them the way a user's browser
//! would: a real Chromium with the built extension, the real host binary, and
//! fixture sites on loopback.

pub mod demo_shop;
pub mod gym;
pub mod harness;
