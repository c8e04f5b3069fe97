//! The host binary as the browser runs it: a child process on pipes.
//!
//! Every malformed input must end in an error reply or a clean exit, never a
//! panic, and the process's exit status says which.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use itinero_shared::codec::{Direction, FrameDecoder};
use itinero_shared::envelope::Envelope;
use itinero_shared::{encode_frame, ErrorCode, ToBrowser, DEV_EXTENSION_ID};

struct Host {
    child: Child,
    _data: tempfile::TempDir,
}

fn spawn(origin: &str) -> Host {
    let data = tempfile::tempdir().unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_itinero-host"))
        .arg(origin)
        .env("ITINERO_DATA_DIR", data.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    Host { child, _data: data }
}

fn dev_origin() -> String {
    format!("chrome-extension://{DEV_EXTENSION_ID}/")
}

/// Writes `input`, closes stdin, and collects every reply, the exit code and stderr.
fn exchange(mut host: Host, input: &[u8]) -> (Vec<Envelope<ToBrowser>>, Option<i32>, String) {
    let mut stdin = host.child.stdin.take().unwrap();
    // The host may stop reading early (oversized frame); a broken pipe is expected then.
    let _ = stdin.write_all(input);
    drop(stdin);
    let mut out = Vec::new();
    host.child
        .stdout
        .take()
        .unwrap()
        .read_to_end(&mut out)
        .unwrap();
    let mut err = String::new();
    host.child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = host.child.wait().unwrap();
    let mut dec = FrameDecoder::new(Direction::ToBrowser);
    dec.push(&out);
    let mut replies = Vec::new();
    while let Some(frame) = dec.next_frame().unwrap() {
        replies.push(Envelope::<ToBrowser>::from_json(&frame).unwrap());
    }
    dec.finish().expect("the host never writes a partial frame");
    (replies, status.code(), err)
}

/// A host kept running while a test talks to it: its stdin for the test to write, and its
/// replies read as they come.
struct Live {
    child: Child,
    stdout: ChildStdout,
    decoder: FrameDecoder,
}

impl Live {
    fn start(data: &Path) -> (Self, ChildStdin) {
        let mut child = Command::new(env!("CARGO_BIN_EXE_itinero-host"))
            .arg(dev_origin())
            .env("ITINERO_DATA_DIR", data)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let live = Self {
            child,
            stdout,
            decoder: FrameDecoder::new(Direction::ToBrowser),
        };
        (live, stdin)
    }

    /// The next `n` replies, waiting for them.
    fn replies(&mut self, n: usize) -> Vec<Envelope<ToBrowser>> {
        let mut replies = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            while let Some(f) = self.decoder.next_frame().unwrap() {
                replies.push(Envelope::<ToBrowser>::from_json(&f).unwrap());
            }
            if replies.len() >= n {
                return replies;
            }
            let read = self.stdout.read(&mut buf).unwrap();
            assert!(
                read > 0,
                "the host closed stdout after {} replies",
                replies.len()
            );
            self.decoder.push(&buf[..read]);
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits for the host to exit (its stdin closed by the test).
    fn end(mut self) {
        self.child.wait().unwrap();
    }
}

fn frame(json: &str) -> Vec<u8> {
    encode_frame(json.as_bytes(), Direction::ToHost).unwrap()
}

fn code(env: &Envelope<ToBrowser>) -> ErrorCode {
    match &env.msg {
        ToBrowser::Error(e) => e.code,
        other => panic!("expected an error reply, got {other:?}"),
    }
}

#[test]
fn hello_and_ping_then_clean_exit_on_eof() {
    let mut input =
        frame(r#"{"v":1,"id":1,"type":"Hello","body":{"protocol":1,"extension_version":"0.1.0"}}"#);
    input.extend(frame(
        r#"{"v":1,"id":2,"type":"Ping","body":{"payload":"hi"}}"#,
    ));
    let (replies, exit, stderr) = exchange(spawn(&dev_origin()), &input);
    assert_eq!(exit, Some(0), "{stderr}");
    assert!(
        matches!(&replies[0].msg, ToBrowser::HelloAck(a) if a.host_version == env!("CARGO_PKG_VERSION"))
    );
    assert!(matches!(&replies[1].msg, ToBrowser::Pong(p) if p.payload.as_deref() == Some("hi")));
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn invalid_json_and_unknown_types_are_answered_and_the_host_keeps_going() {
    let mut input = frame("{{{ not json");
    input.extend(frame(r#"{"v":1,"id":3,"type":"Teleport","body":{}}"#));
    input.extend(frame(
        r#"{"v":1,"id":4,"type":"Ping","body":{"payload":"alive"}}"#,
    ));
    let (replies, exit, stderr) = exchange(spawn(&dev_origin()), &input);
    assert_eq!(exit, Some(0));
    assert_eq!(code(&replies[0]), ErrorCode::BadMessage);
    assert_eq!(code(&replies[1]), ErrorCode::UnknownType);
    assert_eq!(replies[1].id, 3);
    assert!(matches!(&replies[2].msg, ToBrowser::Pong(_)));
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_70_mib_length_prefix_gets_an_error_and_the_host_exits() {
    let mut input = frame(r#"{"v":1,"id":1,"type":"Ping","body":{}}"#);
    input.extend((70u32 << 20).to_ne_bytes());
    input.extend(b"{\"v\":1,\"id\":2}");
    let (replies, exit, stderr) = exchange(spawn(&dev_origin()), &input);
    assert!(matches!(&replies[0].msg, ToBrowser::Pong(_)));
    assert_eq!(code(&replies[1]), ErrorCode::FrameTooLarge);
    assert_eq!(exit, Some(2));
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_garbage_length_prefix_gets_an_error_and_the_host_exits() {
    let (replies, exit, stderr) =
        exchange(spawn(&dev_origin()), b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_eq!(code(&replies[0]), ErrorCode::FrameTooLarge);
    assert_eq!(exit, Some(2));
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_truncated_frame_ends_the_session_cleanly() {
    let mut input = frame(r#"{"v":1,"id":1,"type":"Ping","body":{}}"#);
    let second = frame(r#"{"v":1,"id":2,"type":"Ping","body":{}}"#);
    input.extend(&second[..10]);
    let (replies, exit, stderr) = exchange(spawn(&dev_origin()), &input);
    assert_eq!(replies.len(), 1);
    assert_eq!(exit, Some(0));
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn an_unknown_extension_is_refused() {
    let (replies, exit, _) = exchange(
        spawn("chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/"),
        b"",
    );
    assert_eq!(exit, Some(3));
    assert_eq!(code(&replies[0]), ErrorCode::OriginRefused);
}

#[test]
fn nothing_but_frames_reach_stdout() {
    // Logging at the most verbose level still goes to the log file, never stdout.
    let data = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_itinero-host"))
        .arg(dev_origin())
        .env("ITINERO_DATA_DIR", data.path())
        .env("ITINERO_LOG", "trace")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(&frame(
            r#"{"v":1,"id":1,"type":"Ping","body":{"payload":"p"}}"#,
        ))
        .unwrap();
    drop(stdin);
    let mut out = Vec::new();
    child.stdout.take().unwrap().read_to_end(&mut out).unwrap();
    child.wait().unwrap();
    let mut dec = FrameDecoder::new(Direction::ToBrowser);
    dec.push(&out);
    let one = dec.next_frame().unwrap().unwrap();
    assert!(Envelope::<ToBrowser>::from_json(&one).is_ok());
    assert_eq!(dec.next_frame().unwrap(), None);
    dec.finish().unwrap();
    let logs = std::fs::read_dir(data.path().join("logs")).unwrap().count();
    assert!(logs >= 1, "the host wrote its log file");
}

/// The panel's skill requests, as the browser sends them: a skill imported, listed, exported
/// (a missing parameter is a clear error), and deleted, in one host process with its store.
#[test]
fn the_panel_manages_skills_through_the_protocol() {
    use itinero_shared::messages::{SkillFormat, SkillRequest, SkillResponse};
    use itinero_shared::ToHost;

    let skill = serde_json::json!({
        "name": "Search the shop",
        "origin": "https://shop.test",
        "goal": "Search the shop for {q}",
        "start_url": "https://shop.test/",
        "params": [{"name": "q", "example": "socks"}],
        "steps": [
            {"action": {"kind": "type", "text": "{q}", "submit": true, "target": {"index": 0,
                "fingerprint": {"tag": "input", "role": "searchbox", "name": "Search", "path": "html>body>form>input[0]"}}},
             "url": "https://shop.test/", "expect": [{"kind": "url", "pattern": "https://shop.test/search?q"}]},
            {"action": {"kind": "done", "answer": "Results for {q}"}, "url": "https://shop.test/search?q"}
        ]
    });
    let request = |id: u64, r: SkillRequest| {
        let json = Envelope {
            v: 1,
            id,
            msg: ToHost::Skills(r),
        }
        .to_json();
        encode_frame(&json, Direction::ToHost).unwrap()
    };
    let mut input = request(
        1,
        SkillRequest::Import {
            text: skill.to_string(),
        },
    );
    input.extend(request(
        2,
        SkillRequest::List {
            search: Some("shop".into()),
        },
    ));
    for (id, params) in [(3, vec![]), (4, vec![("q".to_owned(), "hats".to_owned())])] {
        input.extend(request(
            id,
            SkillRequest::Export {
                id: 1,
                format: SkillFormat::Playwright,
                params,
            },
        ));
    }
    input.extend(request(5, SkillRequest::Delete { id: 1 }));
    input.extend(request(6, SkillRequest::Get { id: 1 }));
    let (replies, exit, stderr) = exchange(spawn(&dev_origin()), &input);
    assert_eq!(exit, Some(0), "{stderr}");
    let skills = |i: usize| match &replies[i].msg {
        ToBrowser::Skills(r) => r.clone(),
        other => panic!("reply {i}: {other:?}"),
    };
    assert!(
        matches!(skills(0), SkillResponse::Imported { what } if what.contains("Search the shop")),
        "{:?}",
        replies[0]
    );
    assert!(
        matches!(skills(1), SkillResponse::List { skills } if skills.len() == 1 && skills[0].steps == 2)
    );
    // Exporting a script needs the parameter's value, and says which.
    match &replies[2].msg {
        ToBrowser::Error(e) => {
            assert_eq!(e.code, ErrorCode::BadBody);
            assert!(e.message.contains("q"), "{}", e.message);
        }
        other => panic!("{other:?}"),
    }
    assert!(
        matches!(skills(3), SkillResponse::Exported { file_name, text } if file_name == "search-the-shop.playwright.js" && text.contains("hats"))
    );
    assert!(matches!(
        skills(4),
        SkillResponse::Deleted { existed: true }
    ));
    assert_eq!(code(&replies[5]), ErrorCode::NotFound);
}

/// The host's data stays the user's: no core dump can hold a secret, no other process of the
/// user can trace it, and the data directory, logs included, is closed to other users, even when
/// an older host left it open.
#[cfg(target_os = "linux")]
#[test]
fn the_host_dumps_no_core_and_keeps_its_files_private() {
    use std::os::unix::fs::PermissionsExt;
    let data = tempfile::tempdir().unwrap();
    let logs = data.path().join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let old_log = logs.join("host.log.2026-01-01");
    std::fs::write(&old_log, "an old line\n").unwrap();
    for (path, mode) in [
        (data.path(), 0o755),
        (logs.as_path(), 0o755),
        (&old_log, 0o644),
    ] {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    let (mut host, mut stdin) = Live::start(data.path());
    stdin
        .write_all(&frame(
            r#"{"v":1,"id":1,"type":"Hello","body":{"protocol":1,"extension_version":"0.1.0"}}"#,
        ))
        .unwrap();
    // The answer to Hello comes after start-up, so what start-up does is done by then.
    host.replies(1);
    let limits = std::fs::read_to_string(format!("/proc/{}/limits", host.pid())).unwrap();
    let core = limits
        .lines()
        .find(|l| l.starts_with("Max core file size"))
        .unwrap();
    let fields: Vec<&str> = core.split_whitespace().collect();
    assert_eq!(&fields[4..6], ["0", "0"], "{core}");
    // An undumpable process's /proc files belong to root.
    let owner = std::fs::metadata(format!("/proc/{}/environ", host.pid()))
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m))
        .unwrap();
    assert_eq!(
        owner, 0,
        "the host can be traced by other processes of the user"
    );
    drop(stdin);
    host.end();
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(data.path()), 0o700);
    assert_eq!(mode(&logs), 0o700);
    assert_eq!(mode(&old_log), 0o600);
    for entry in std::fs::read_dir(data.path()).unwrap() {
        let path = entry.unwrap().path();
        let m = mode(&path);
        assert_eq!(m & 0o077, 0, "{} is open to others ({m:o})", path.display());
    }
}

/// A frame near the 64 MiB limit, of many small values, is read without building a value of
/// it: the host's peak memory stays within three times the frame, and it answers the next
/// message.
#[cfg(target_os = "linux")]
#[test]
fn a_60_mib_frame_of_small_values_costs_at_most_three_times_its_size() {
    let mut body = String::from(r#"{"v":1,"id":2,"type":"Ping","body":{"payload":"big","junk":["#);
    let target = 60 * 1024 * 1024;
    body.reserve(target + 64);
    while body.len() < target {
        body.push_str("0,");
    }
    body.push_str("0]}}");
    let size = body.len();
    let mut input = frame(&body);
    drop(body);
    input.extend(frame(
        r#"{"v":1,"id":3,"type":"Ping","body":{"payload":"after"}}"#,
    ));
    let data = tempfile::tempdir().unwrap();
    let (mut host, mut stdin) = Live::start(data.path());
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
        stdin
    });
    let replies = host.replies(2);
    let status = std::fs::read_to_string(format!("/proc/{}/status", host.pid())).unwrap();
    let peak_kib: usize = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap();
    drop(writer.join().unwrap());
    host.end();
    assert_eq!(replies[0].id, 2);
    assert!(
        matches!(&replies[1].msg, ToBrowser::Pong(p) if p.payload.as_deref() == Some("after")),
        "{:?}",
        replies[1]
    );
    let peak = peak_kib * 1024;
    eprintln!(
        "frame {} MiB, host peak {} MiB ({:.2}×)",
        size >> 20,
        peak >> 20,
        peak as f64 / size as f64
    );
    assert!(peak <= 3 * size, "peak {peak} bytes for a frame of {size}");
}
