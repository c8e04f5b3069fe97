//! The control socket: how programs on this machine (the CLI: `tabs`, `observe`, `act`,
//! `run`, `skills run`, `vault unlock|lock`; the benchmarks) reach the browser, and the
//! vault's key, through the running host.
//!
//! The browser starts the host; nothing else can talk to it over stdio. So while it serves
//! a browser session the host also listens on a Unix socket,
//! `<data dir>/run/host-<pid>.sock` (mode 0600 in a 0700 directory: only this user), and
//! turns each request into host→browser requests over its [`crate::session::link::BrowserLink`],
//! a call on its vault, or a task of its session (`run_task.rs`).
//! The protocol is line-delimited JSON ([`protocol`]); its types stay on this machine and
//! never cross to the browser. Sockets left behind by a host that was killed are skipped
//! and removed by whoever finds them ([`discovery`]).

pub mod handler;
pub mod protocol;
#[cfg(unix)]
mod run_task;

#[cfg(unix)]
mod client;
#[cfg(unix)]
pub mod discovery;
#[cfg(unix)]
mod server;
#[cfg(not(unix))]
mod unsupported;

#[cfg(unix)]
pub use client::{ClientError, ControlClient};
#[cfg(unix)]
pub use discovery::{connect, connect_in, ConnectError};
#[cfg(unix)]
pub use server::ControlServer;
#[cfg(not(unix))]
pub use unsupported::{
    connect, connect_in, ClientError, ConnectError, ControlClient, ControlServer,
};

/// The socket a host with this pid listens on, inside `run_dir`.
pub fn socket_path(run_dir: &std::path::Path, pid: u32) -> std::path::PathBuf {
    run_dir.join(format!("host-{pid}.sock"))
}

/// The pid in a socket's file name, if it is one of ours.
pub fn pid_of_socket(file_name: &str) -> Option<u32> {
    file_name
        .strip_prefix("host-")?
        .strip_suffix(".sock")?
        .parse()
        .ok()
}

/// Longest request line the host reads; requests are small (an action), responses are not bounded.
pub const MAX_REQUEST_BYTES: u64 = 1 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn socket_names_round_trip() {
        let dir = std::path::Path::new("/tmp/x");
        let path = socket_path(dir, 4242);
        assert_eq!(
            pid_of_socket(path.file_name().unwrap().to_str().unwrap()),
            Some(4242)
        );
        assert_eq!(pid_of_socket("host-x.sock"), None);
        assert_eq!(pid_of_socket("other-1.sock"), None);
    }
}

#[cfg(all(test, unix))]
mod socket_tests {
    use std::os::unix::fs::PermissionsExt;

    use itinero_shared::messages::{TabInfo, TabList};
    use itinero_shared::{ToBrowser, ToHost};

    use super::discovery::{connect_in, ConnectError};
    use super::protocol::{Request, Response};
    use super::*;
    use crate::session::link::BrowserLink;
    use crate::session::outbox::Outbox;

    /// A link whose "browser" answers every `ListTabs` with one tab.
    fn answering_link() -> BrowserLink {
        let (outbox, mut rx) = Outbox::channel();
        let link = BrowserLink::new(outbox);
        let browser = link.clone();
        tokio::spawn(async move {
            while let Some(env) = rx.recv().await {
                if let ToBrowser::ListTabs(_) = env.msg {
                    let tabs = vec![TabInfo {
                        tab_id: 4,
                        window_id: 1,
                        url: "http://127.0.0.1/".into(),
                        title: "Fixture".into(),
                        active: true,
                    }];
                    let _ = browser.resolve(env.id, ToHost::TabList(TabList { tabs }));
                }
            }
        });
        link
    }

    #[tokio::test]
    async fn a_client_finds_the_one_live_host_and_stale_sockets_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("run");
        match connect_in(&run, None).await {
            Err(e @ ConnectError::NoHost { .. }) => {
                assert!(e.to_string().starts_with("no running itinero host — open Chromium with the itinero extension installed"), "{e}")
            }
            other => panic!("{:?}", other.err()),
        }
        std::fs::create_dir_all(&run).unwrap();
        // A host that was killed leaves its socket file behind; nobody listens on it.
        let stale = socket_path(&run, 999_999);
        drop(std::os::unix::net::UnixListener::bind(&stale).unwrap());
        assert!(stale.exists());

        let server = ControlServer::start_in(&run, answering_link(), None).unwrap();
        assert!(!stale.exists(), "the server sweeps stale sockets");
        let mode = std::fs::metadata(server.path())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);

        let mut client = connect_in(&run, None).await.unwrap();
        assert_eq!(client.pid(), std::process::id());
        match client.call(&Request::Tabs).await.unwrap() {
            Response::Tabs { tabs, .. } => assert_eq!(tabs[0].tab_id, 4),
            other => panic!("{other:?}"),
        }
        // The same connection serves the next request.
        assert!(matches!(
            client.call(&Request::Tabs).await.unwrap(),
            Response::Tabs { .. }
        ));
        match connect_in(&run, Some(1)).await {
            Err(e @ ConnectError::NotRunning { .. }) => assert!(
                e.to_string()
                    .contains(&format!("running: {}", std::process::id())),
                "{e}"
            ),
            other => panic!("{:?}", other.err()),
        }
        let path = server.path().to_owned();
        drop(server);
        assert!(
            !path.exists(),
            "the socket is removed when the server stops"
        );
    }

    #[tokio::test]
    async fn run_skill_says_plainly_why_it_cannot_start() {
        use crate::session::tasks::Tasks;
        use crate::store::StoreSlot;
        let dir = tempfile::tempdir().unwrap();
        let link = answering_link();
        let (outbox, _rx) = Outbox::channel();
        let tasks = Tasks::new(link.clone(), outbox, StoreSlot::in_memory());
        let server = ControlServer::start_in(dir.path(), link, Some(tasks)).unwrap();
        let mut client = connect_in(dir.path(), None).await.unwrap();
        let run = Request::RunSkill {
            skill: "Search the shop".into(),
            params: vec![],
            tab_id: None,
            for_program: None,
        };
        match client.call(&run).await.unwrap() {
            Response::Error { message, .. } => assert_eq!(
                message,
                "there is no skill \"Search the shop\"; `itinero-host skills list` shows the skills"
            ),
            other => panic!("{other:?}"),
        }
        // Outside a run, reply and stop are refused, not ignored.
        let mut client = connect_in(dir.path(), None).await.unwrap();
        match client.call(&Request::Stop).await.unwrap() {
            Response::Error { message, .. } => {
                assert!(message.starts_with("no task is running"), "{message}")
            }
            other => panic!("{other:?}"),
        }
        drop(server);
    }

    #[tokio::test]
    async fn bad_request_lines_get_an_error_and_the_connection_stays() {
        use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
        let dir = tempfile::tempdir().unwrap();
        let server = ControlServer::start_in(dir.path(), answering_link(), None).unwrap();
        let stream = tokio::net::UnixStream::connect(server.path())
            .await
            .unwrap();
        let (read, mut write) = stream.into_split();
        let mut lines = BufReader::new(read).lines();
        write.write_all(b"{\"op\":\"teleport\"}\n").await.unwrap();
        let reply: Response =
            serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
        assert!(
            matches!(&reply, Response::Error { message, .. } if message.starts_with("unreadable request")),
            "{reply:?}"
        );
        write.write_all(b"{\"op\":\"tabs\"}\n").await.unwrap();
        let reply: Response =
            serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
        assert!(matches!(reply, Response::Tabs { .. }), "{reply:?}");
    }
}
