//! The one place where types cross the browser/host boundary.
//!
//! Both the WebAssembly extension and the native host depend on this crate, so a
//! message that compiles on one side is understood on the other. It performs no
//! I/O: the frame codec works on byte slices so the host can drive it from tokio
//! and tests can feed it any byte pattern they like.

pub mod action;
pub mod aliases;
pub mod amount;
pub mod codec;
pub mod envelope;
pub mod input_format;
pub mod matching;
pub mod messages;
pub mod observation;
pub mod records;
pub mod skills;
pub mod vault;
pub mod words;

pub use action::{Action, Fingerprint, Modifier, ScrollDirection, Target};
pub use codec::{encode_frame, Direction, FrameDecoder, FrameError};
pub use envelope::{
    is_host_request_id, Envelope, EnvelopeError, HOST_REQUEST_ID_BASE, PROTOCOL_VERSION,
};
pub use messages::{ErrorCode, ToBrowser, ToHost};

/// Name under which the native host is registered with browsers.
pub const HOST_NAME: &str = "dev.itinero.host";

/// Id of the development build of the extension, fixed by the `key` in `manifest.json`.
pub const DEV_EXTENSION_ID: &str = "adflldoibhdmbdhpfcfphainaiaokjkm";

/// Add-on id the Firefox build declares; Firefox passes it to the host instead of an origin.
pub const FIREFOX_EXTENSION_ID: &str = "itinero@itinero.dev";
