//! Who started the host, and whether they may.
//!
//! Browsers pass the caller on the command line: Chromium-family browsers give
//! `chrome-extension://<id>/` (plus `--parent-window=N` on Windows), Firefox gives
//! the path of the host manifest and then the add-on id. The browser enforces the
//! manifest's `allowed_origins`, but a host binary can be started by anything, so
//! the host checks again against its own list.

use std::ffi::OsString;
use std::path::Path;

use itinero_shared::{DEV_EXTENSION_ID, FIREFOX_EXTENSION_ID};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    Chromium { extension_id: String },
    Firefox { extension_id: String },
}

impl Caller {
    pub fn extension_id(&self) -> &str {
        match self {
            Caller::Chromium { extension_id } | Caller::Firefox { extension_id } => extension_id,
        }
    }
}

/// Recognises native-messaging invocations; `None` means "a person ran the CLI".
pub fn caller_from_args(args: &[OsString]) -> Option<Caller> {
    let first = args.first()?.to_str()?;
    if let Some(rest) = first.strip_prefix("chrome-extension://") {
        let id = rest.trim_end_matches('/');
        return Some(Caller::Chromium {
            extension_id: id.to_owned(),
        });
    }
    // Firefox: <path to the host manifest> <add-on id>
    if first.ends_with(".json") && args.len() >= 2 {
        let id = args[1].to_str()?;
        if !id.is_empty() && !id.starts_with('-') {
            return Some(Caller::Firefox {
                extension_id: id.to_owned(),
            });
        }
    }
    None
}

/// The extension ids a build accepts by itself, named when it is built (comma-separated):
/// a release's store listings.
pub const BUILD_IDS: Option<&str> = option_env!("ITINERO_EXTENSION_IDS");

/// The ids this build accepts without `install` having recorded them: those named at build
/// time; else, in a debug build, the development extension's and the Firefox add-on's; else
/// none. A release build must not let any program start it with the development id, which is
/// public: the user's own `install` is what grants that one.
pub fn built_in_ids() -> Vec<String> {
    built_in(BUILD_IDS, cfg!(debug_assertions))
}

fn built_in(named: Option<&str>, debug: bool) -> Vec<String> {
    match named {
        Some(list) => list
            .split(',')
            .map(str::trim)
            .filter(|id| !id.is_empty())
            .map(str::to_owned)
            .collect(),
        None if debug => vec![DEV_EXTENSION_ID.to_owned(), FIREFOX_EXTENSION_ID.to_owned()],
        None => Vec::new(),
    }
}

/// Extension ids allowed to talk to this host: the build's own ([`built_in_ids`]) and
/// whatever `install` recorded (by default the development extension's, or the build's).
pub fn allowed_ids(allowed_file: Option<&Path>) -> Vec<String> {
    let mut ids = built_in_ids();
    if let Some(text) = allowed_file.and_then(|f| std::fs::read_to_string(f).ok()) {
        for line in text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
        {
            if !ids.iter().any(|i| i == line) {
                ids.push(line.to_owned());
            }
        }
    }
    ids
}

pub fn is_allowed(caller: &Caller, allowed: &[String]) -> bool {
    allowed.iter().any(|id| id == caller.extension_id())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<OsString> {
        a.iter().map(OsString::from).collect()
    }

    #[test]
    fn recognises_chromium_and_firefox_invocations() {
        assert_eq!(
            caller_from_args(&args(&["chrome-extension://abc/", "--parent-window=0"])),
            Some(Caller::Chromium {
                extension_id: "abc".into()
            })
        );
        assert_eq!(
            caller_from_args(&args(&[
                "/home/u/.mozilla/native-messaging-hosts/dev.itinero.host.json",
                "itinero@itinero.dev"
            ])),
            Some(Caller::Firefox {
                extension_id: "itinero@itinero.dev".into()
            })
        );
        assert_eq!(caller_from_args(&args(&["doctor"])), None);
        assert_eq!(caller_from_args(&args(&[])), None);
    }

    #[test]
    fn only_listed_ids_are_allowed() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("allowed");
        std::fs::write(&file, "# comment\nponmlkjihgfedcbaponmlkjihgfedcba\n\n").unwrap();
        let allowed = allowed_ids(Some(&file));
        let ok = Caller::Chromium {
            extension_id: "ponmlkjihgfedcbaponmlkjihgfedcba".into(),
        };
        let dev = Caller::Chromium {
            extension_id: DEV_EXTENSION_ID.into(),
        };
        let evil = Caller::Chromium {
            extension_id: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa".into(),
        };
        assert!(is_allowed(&ok, &allowed));
        assert!(is_allowed(&dev, &allowed));
        assert!(!is_allowed(&evil, &allowed));
        assert!(is_allowed(&dev, &allowed_ids(None)), "a debug build");
    }

    #[test]
    fn a_release_build_accepts_only_the_ids_it_was_built_for_and_those_installed() {
        let dev = || vec![DEV_EXTENSION_ID.to_owned(), FIREFOX_EXTENSION_ID.to_owned()];
        assert_eq!(built_in(None, true), dev());
        assert_eq!(built_in(None, false), Vec::<String>::new());
        let store = "ponmlkjihgfedcbaponmlkjihgfedcba";
        for debug in [true, false] {
            assert_eq!(
                built_in(Some(&format!(" {store}, itinero@example.org ,")), debug),
                vec![store.to_owned(), "itinero@example.org".to_owned()]
            );
        }
    }
}
