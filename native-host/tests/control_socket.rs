//! The control socket of the real binary, run as the browser runs it: it exists exactly as
//! long as the browser session, and a client waiting on the browser learns why it got no answer.
#![cfg(unix)]

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use itinero_shared::codec::{Direction, FrameDecoder};
use itinero_shared::envelope::Envelope;
use itinero_shared::{ToBrowser, DEV_EXTENSION_ID};

const WAIT: Duration = Duration::from_secs(30);

fn spawn(data: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_itinero-host"))
        .arg(format!("chrome-extension://{DEV_EXTENSION_ID}/"))
        .env("ITINERO_DATA_DIR", data)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// The socket of the host with this pid, once it listens.
fn socket_of(data: &Path, pid: u32) -> PathBuf {
    let path = data.join("run").join(format!("host-{pid}.sock"));
    let deadline = Instant::now() + WAIT;
    while UnixStream::connect(&path).is_err() {
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    path
}

fn wait_exit(child: &mut Child) -> std::process::ExitStatus {
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(Instant::now() < deadline, "the host did not exit");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn the_socket_lives_as_long_as_the_session_and_waiting_clients_learn_why_it_ended() {
    let data = tempfile::tempdir().unwrap();
    let mut host = spawn(data.path());
    let socket = socket_of(data.path(), host.id());
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&socket), 0o600);
    assert_eq!(mode(&data.path().join("run")), 0o700);

    let mut client = UnixStream::connect(&socket).unwrap();
    client.set_read_timeout(Some(WAIT)).unwrap();
    client.write_all(b"{\"op\":\"tabs\"}\n").unwrap();
    // The request reaches the "browser" (this test), which never answers it...
    let mut stdout = host.stdout.take().unwrap();
    let mut decoder = FrameDecoder::new(Direction::ToBrowser);
    let request = loop {
        if let Some(frame) = decoder.next_frame().unwrap() {
            break Envelope::<ToBrowser>::from_json(&frame).unwrap();
        }
        let mut buf = [0u8; 4096];
        let n = stdout.read(&mut buf).unwrap();
        assert!(n > 0, "the host closed stdout");
        decoder.push(&buf[..n]);
    };
    assert!(matches!(request.msg, ToBrowser::ListTabs(_)), "{request:?}");
    // ...and goes away instead.
    drop(host.stdin.take());
    let mut response = String::new();
    BufReader::new(&client).read_line(&mut response).unwrap();
    let response: serde_json::Value = serde_json::from_str(&response).unwrap();
    assert_eq!(response["kind"], "error", "{response}");
    assert_eq!(
        response["message"],
        "the browser session ended before ListTabs was answered: the browser closed the connection"
    );
    assert!(wait_exit(&mut host).success());
    assert!(!socket.exists(), "the socket outlived the host");
}

#[test]
fn a_terminated_host_removes_its_socket() {
    let data = tempfile::tempdir().unwrap();
    let mut host = spawn(data.path());
    let socket = socket_of(data.path(), host.id());
    let killed = Command::new("kill")
        .args(["-TERM", &host.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    wait_exit(&mut host);
    assert!(!socket.exists(), "the socket outlived the host");
}
