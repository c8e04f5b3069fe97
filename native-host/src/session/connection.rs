//! One native-messaging session: frames in from the browser, replies out.
//!
//! Replies go through a channel to a single writer task (`outbox.rs`) so that, while
//! several tasks stream events, frames are never interleaved on stdout.
//! Bad input is answered with an `Error` and the session goes on; only a stream
//! that can no longer be framed (an oversized length prefix) ends it.
//!
//! The browser's frames are both requests (from panels) and replies to requests
//! the host made (see `link.rs`): replies are handed to the [`BrowserLink`] that
//! waits for them, never answered themselves.

use itinero_shared::codec::{Direction, FrameDecoder, FrameError};
use itinero_shared::envelope::{Envelope, EnvelopeError, MessageSet};
use itinero_shared::messages::ErrorReply;
use itinero_shared::{encode_frame, is_host_request_id, ErrorCode, ToBrowser, ToHost};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tracing::{debug, warn};

use super::dispatch::Session;
use super::link::BrowserLink;
use super::outbox::Outbox;
use super::tasks::Tasks;
use crate::store::StoreSlot;

/// How a session ended.
#[derive(Debug, PartialEq, Eq)]
pub enum SessionEnd {
    /// The browser closed the port between frames.
    Closed,
    /// The browser closed the port in the middle of a frame.
    Truncated(String),
    /// The stream broke the framing rules; an error reply was sent first.
    ProtocolViolation(String),
}

/// Serialises and writes frames; a reply too large for Chrome becomes an error reply instead.
async fn write_frames<W: AsyncWrite + Unpin>(
    mut out: W,
    mut rx: mpsc::Receiver<Envelope<ToBrowser>>,
) -> std::io::Result<()> {
    while let Some(env) = rx.recv().await {
        let json = env.to_json();
        let frame = match encode_frame(&json, Direction::ToBrowser) {
            Ok(frame) => frame,
            Err(e) => {
                warn!(
                    kind = env.msg.type_name(),
                    id = env.id,
                    "reply refused: {e}"
                );
                let reply = Envelope::new(
                    env.id,
                    ToBrowser::Error(ErrorReply {
                        code: ErrorCode::Internal,
                        message: format!(
                            "the host's {} reply was too large to send: {e}",
                            env.msg.type_name()
                        ),
                    }),
                );
                encode_frame(&reply.to_json(), Direction::ToBrowser)
                    .expect("a short error reply always fits")
            }
        };
        out.write_all(&frame).await?;
        out.flush().await?;
    }
    Ok(())
}

fn error_code(e: &EnvelopeError) -> ErrorCode {
    match e {
        EnvelopeError::Json(_) | EnvelopeError::Shape(_) => ErrorCode::BadMessage,
        EnvelopeError::NewerVersion { .. } => ErrorCode::UnsupportedVersion,
        EnvelopeError::UnknownType(_) => ErrorCode::UnknownType,
        EnvelopeError::Body { .. } => ErrorCode::BadBody,
    }
}

/// Runs the protocol until the browser goes away or the stream becomes unreadable, with a
/// store in memory that ends with the session (tests, and embedders that keep nothing).
pub async fn serve<R, W>(input: R, output: W) -> std::io::Result<SessionEnd>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    serve_with(input, output, StoreSlot::in_memory(), |_, _| {}).await
}

/// Like [`serve`], with the session's `store` (or why there is none); `on_start` receives the
/// session's [`BrowserLink`] and its [`Tasks`] before the first frame is read (the control
/// socket is served through them). Both end with the session.
pub async fn serve_with<R, W>(
    mut input: R,
    output: W,
    store: StoreSlot,
    on_start: impl FnOnce(BrowserLink, Tasks),
) -> std::io::Result<SessionEnd>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (out, rx) = Outbox::channel();
    let writer = tokio::spawn(write_frames(output, rx));
    let link = BrowserLink::new(out.clone());
    let tasks = Tasks::new(link.clone(), out.clone(), store.clone());
    on_start(link.clone(), tasks.clone());
    let end = read_frames(&mut input, &out, &link, &tasks, &store).await;
    link.end(match &end {
        Ok(SessionEnd::Closed) => "the browser closed the connection",
        Ok(SessionEnd::Truncated(_)) => "the browser went away mid-frame",
        Ok(SessionEnd::ProtocolViolation(_)) => "the browser's stream became unreadable",
        Err(_) => "reading from the browser failed",
    });
    tasks.abort_all();
    drop(tasks);
    // `end` released the link's outbox; with ours and the tasks' gone the writer drains and finishes.
    drop(out);
    // Let every queued reply reach the browser before the process exits.
    match writer.await {
        Ok(result) => result?,
        Err(join) => warn!("reply writer stopped: {join}"),
    }
    end
}

async fn read_frames<R: AsyncRead + Unpin>(
    input: &mut R,
    out: &Outbox,
    link: &BrowserLink,
    tasks: &Tasks,
    store: &StoreSlot,
) -> std::io::Result<SessionEnd> {
    let session = Session {
        out,
        link,
        tasks,
        store,
    };
    let mut decoder = FrameDecoder::new(Direction::ToHost);
    let mut buf = vec![0u8; 64 * 1024];
    let end = 'read: loop {
        let n = input.read(&mut buf).await?;
        if n == 0 {
            break match decoder.finish() {
                Ok(()) => SessionEnd::Closed,
                Err(e) => {
                    warn!("browser closed the port mid-frame: {e}");
                    SessionEnd::Truncated(e.to_string())
                }
            };
        }
        decoder.push(&buf[..n]);
        loop {
            match decoder.next_frame() {
                Ok(Some(frame)) => {
                    let bytes = frame.len();
                    debug!(bytes, "frame in");
                    match read_envelope(frame).await {
                        Ok(env) => session.dispatch(env, bytes).await,
                        // An unreadable reply fails the request it answers; the browser is not answered.
                        Err((Some(id), e)) if is_host_request_id(id) => {
                            warn!(id, "unreadable reply to a host request: {e}");
                            link.fail(id, e.to_string());
                        }
                        Err((id, e)) => {
                            warn!(?id, "bad message: {e}");
                            out.error(id.unwrap_or(0), error_code(&e), e.to_string())
                                .await;
                        }
                    }
                }
                Ok(None) => break,
                Err(e @ FrameError::TooLarge { .. }) => {
                    warn!("closing the session: {e}");
                    out.error(
                        0,
                        ErrorCode::FrameTooLarge,
                        format!("{e}; closing the connection"),
                    )
                    .await;
                    break 'read SessionEnd::ProtocolViolation(e.to_string());
                }
                Err(e) => break 'read SessionEnd::ProtocolViolation(e.to_string()),
            }
        }
    };
    Ok(end)
}

/// Frames from this size up are read on the blocking pool: reading tens of megabytes takes
/// long enough to hold up the tasks that share the runtime's threads.
const READ_ASIDE_BYTES: usize = 256 * 1024;

/// Decodes one frame; a large one off the runtime's threads. Messages are still handled one
/// after another, in the order they came.
async fn read_envelope(frame: Vec<u8>) -> Result<Envelope<ToHost>, (Option<u64>, EnvelopeError)> {
    if frame.len() < READ_ASIDE_BYTES {
        return Envelope::<ToHost>::from_json(&frame);
    }
    tokio::task::spawn_blocking(move || Envelope::<ToHost>::from_json(&frame))
        .await
        .unwrap_or_else(|e| {
            Err((
                None,
                EnvelopeError::Json(format!("reading the frame failed: {e}")),
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;
    use itinero_shared::messages::Ping;
    use itinero_shared::PROTOCOL_VERSION;
    use tokio::io::duplex;

    async fn run(input: Vec<u8>) -> (SessionEnd, Vec<Envelope<ToBrowser>>) {
        run_with(input, StoreSlot::in_memory()).await
    }

    async fn run_with(input: Vec<u8>, store: StoreSlot) -> (SessionEnd, Vec<Envelope<ToBrowser>>) {
        let (mut browser_side, host_in) = duplex(1 << 20);
        let (host_out, mut browser_reads) = duplex(1 << 20);
        // Feed and drain concurrently: the pipes hold 1 MiB, some inputs are larger.
        let feeder = tokio::spawn(async move {
            browser_side.write_all(&input).await.unwrap();
        });
        let reader = tokio::spawn(async move {
            let mut bytes = Vec::new();
            browser_reads.read_to_end(&mut bytes).await.unwrap();
            bytes
        });
        let end = serve_with(host_in, host_out, store, |_, _| {})
            .await
            .unwrap();
        feeder.await.unwrap();
        let bytes = reader.await.unwrap();
        let mut dec = FrameDecoder::new(Direction::ToBrowser);
        dec.push(&bytes);
        let mut replies = Vec::new();
        while let Some(f) = dec.next_frame().unwrap() {
            replies.push(Envelope::<ToBrowser>::from_json(&f).unwrap());
        }
        dec.finish().unwrap();
        (end, replies)
    }

    fn frame(json: &[u8]) -> Vec<u8> {
        encode_frame(json, Direction::ToHost).unwrap()
    }

    fn ping(id: u64, payload: &str) -> Vec<u8> {
        frame(
            &Envelope::new(
                id,
                ToHost::Ping(Ping {
                    payload: payload.into(),
                    echo: true,
                }),
            )
            .to_json(),
        )
    }

    fn error_of(env: &Envelope<ToBrowser>) -> ErrorCode {
        match &env.msg {
            ToBrowser::Error(e) => e.code,
            other => panic!("expected an error, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn hello_ping_and_clean_eof() {
        let mut input = frame(
            br#"{"v":1,"id":1,"type":"Hello","body":{"protocol":1,"extension_version":"0.1.0"}}"#,
        );
        input.extend(ping(2, "hi"));
        let (end, replies) = run(input).await;
        assert_eq!(end, SessionEnd::Closed);
        assert_eq!(replies.len(), 2);
        match &replies[0].msg {
            ToBrowser::HelloAck(ack) => {
                assert_eq!(ack.protocol, PROTOCOL_VERSION);
                assert_eq!(ack.host_version, env!("CARGO_PKG_VERSION"));
                assert!(ack.capabilities.contains(&"ping".to_owned()));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(replies[1].id, 2);
        assert!(
            matches!(&replies[1].msg, ToBrowser::Pong(p) if p.payload.as_deref() == Some("hi"))
        );
    }

    #[tokio::test]
    async fn bad_messages_get_errors_and_the_session_goes_on() {
        let mut input = frame(b"{not json");
        input.extend(frame(br#"{"v":1,"id":5,"type":"Teleport","body":{}}"#));
        input.extend(frame(br#"{"v":9,"id":6,"type":"Ping","body":{}}"#));
        input.extend(frame(
            br#"{"v":1,"id":7,"type":"StopTask","body":{"task_id":"x"}}"#,
        ));
        input.extend(frame(&[0xff, 0x00, 0xfe]));
        input.extend(ping(9, "still here"));
        let (end, replies) = run(input).await;
        assert_eq!(end, SessionEnd::Closed);
        let codes: Vec<_> = replies[..5].iter().map(error_of).collect();
        assert_eq!(
            codes,
            [
                ErrorCode::BadMessage,
                ErrorCode::UnknownType,
                ErrorCode::UnsupportedVersion,
                ErrorCode::BadBody,
                ErrorCode::BadMessage
            ]
        );
        assert_eq!(replies[1].id, 5);
        assert!(matches!(&replies[5].msg, ToBrowser::Pong(_)));
    }

    #[tokio::test]
    async fn oversized_length_gets_an_error_and_ends_the_session() {
        let mut input = ping(1, "a");
        input.extend((70u32 * 1024 * 1024).to_ne_bytes());
        input.extend(b"{\"v\":1}");
        let (end, replies) = run(input).await;
        assert!(matches!(end, SessionEnd::ProtocolViolation(_)));
        assert_eq!(replies.len(), 2);
        assert_eq!(error_of(&replies[1]), ErrorCode::FrameTooLarge);
    }

    #[tokio::test]
    async fn truncated_frame_ends_the_session_without_panic() {
        let mut input = ping(1, "a");
        let second = ping(2, "bbbb");
        input.extend(&second[..second.len() - 3]);
        let (end, replies) = run(input).await;
        assert!(matches!(end, SessionEnd::Truncated(_)));
        assert_eq!(replies.len(), 1);
    }

    #[tokio::test]
    async fn large_pings_are_acknowledged_without_echo() {
        let big = "x".repeat(5 * 1024 * 1024);
        let input = frame(
            &Envelope::new(
                3,
                ToHost::Ping(Ping {
                    payload: big,
                    echo: false,
                }),
            )
            .to_json(),
        );
        let (_, replies) = run(input).await;
        assert!(
            matches!(&replies[0].msg, ToBrowser::Pong(p) if p.payload.is_none() && p.received_bytes > 5 * 1024 * 1024)
        );
    }

    #[tokio::test]
    async fn an_echo_too_large_for_chrome_becomes_an_error_reply() {
        let big = "x".repeat(2 * 1024 * 1024);
        let input = frame(
            &Envelope::new(
                4,
                ToHost::Ping(Ping {
                    payload: big,
                    echo: true,
                }),
            )
            .to_json(),
        );
        let (_, replies) = run(input).await;
        assert_eq!(replies[0].id, 4);
        assert_eq!(error_of(&replies[0]), ErrorCode::Internal);
    }

    fn request(id: u64, msg: ToHost) -> Vec<u8> {
        frame(&Envelope::new(id, msg).to_json())
    }

    fn requests(msgs: Vec<ToHost>) -> Vec<u8> {
        msgs.into_iter()
            .enumerate()
            .flat_map(|(i, m)| request(i as u64 + 1, m))
            .collect()
    }

    fn message_of(env: &Envelope<ToBrowser>) -> &str {
        match &env.msg {
            ToBrowser::Error(e) => &e.message,
            other => panic!("expected an error, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn settings_are_read_checked_and_saved() {
        use itinero_shared::messages::{GetSettings, SetSettings};
        use itinero_shared::records::{ApprovalPolicy, BackendChoice, Settings};
        let store = Store::open_in_memory().unwrap();
        let wanted = Settings {
            backend: BackendChoice::Ollama,
            model: Some("qwen2.5:3b".into()),
            max_steps: 12,
            approval: ApprovalPolicy::AlwaysAskRisky,
            ..Settings::default()
        };
        let input = requests(vec![
            ToHost::GetSettings(GetSettings {}),
            ToHost::SetSettings(SetSettings {
                settings: wanted.clone(),
            }),
            ToHost::SetSettings(SetSettings {
                settings: Settings {
                    max_steps: 0,
                    ..wanted.clone()
                },
            }),
            ToHost::GetSettings(GetSettings {}),
        ]);
        let (_, replies) = run_with(input, StoreSlot::Open(store.clone())).await;
        assert_eq!(replies.len(), 4);
        assert_eq!(replies[0].msg, ToBrowser::Settings(Settings::default()));
        assert_eq!(replies[1].msg, ToBrowser::Settings(wanted.clone()));
        assert_eq!(replies[2].id, 3);
        assert_eq!(error_of(&replies[2]), ErrorCode::BadBody);
        assert!(
            message_of(&replies[2]).contains("step limit must be between 1 and 200"),
            "{:?}",
            replies[2]
        );
        assert_eq!(replies[3].msg, ToBrowser::Settings(wanted.clone()));
        assert_eq!(store.settings().unwrap(), wanted);
    }

    #[tokio::test]
    async fn the_run_history_is_listed_read_and_deleted() {
        use itinero_shared::messages::{DeleteRun, GetRun, ListRuns};
        use itinero_shared::records::{RunId, RunStatus, StepRecord};
        let store = Store::open_in_memory().unwrap();
        let new = |goal: &str| crate::store::NewRun {
            goal: goal.into(),
            start_url: "https://shop.example/".into(),
            tab_id: Some(1),
            backend: "scripted".into(),
            model: "scripted".into(),
        };
        let first = store.begin_run(&new("first")).unwrap();
        let second = store.begin_run(&new("second")).unwrap();
        for n in 1..=2 {
            store
                .record_step(
                    first,
                    &StepRecord {
                        n,
                        url: "https://shop.example/".into(),
                        strategy: "llm".into(),
                        ..Default::default()
                    },
                )
                .unwrap();
        }
        store
            .finish_run(first, RunStatus::Succeeded, Some("12.99 EUR"))
            .unwrap();
        let input = requests(vec![
            ToHost::ListRuns(ListRuns { limit: 10 }),
            ToHost::ListRuns(ListRuns { limit: 1 }),
            ToHost::GetRun(GetRun { run_id: first }),
            ToHost::GetRun(GetRun { run_id: RunId(404) }),
            ToHost::DeleteRun(DeleteRun { run_id: first }),
            ToHost::DeleteRun(DeleteRun { run_id: first }),
            ToHost::ListRuns(ListRuns { limit: 10 }),
        ]);
        let (_, replies) = run_with(input, StoreSlot::Open(store)).await;
        let ids = |env: &Envelope<ToBrowser>| match &env.msg {
            ToBrowser::Runs(list) => list.runs.iter().map(|r| r.id).collect::<Vec<_>>(),
            other => panic!("{other:?}"),
        };
        assert_eq!(ids(&replies[0]), [second, first]);
        assert_eq!(ids(&replies[1]), [second]);
        match &replies[2].msg {
            ToBrowser::RunDetail(d) => {
                assert_eq!(d.run.id, first);
                assert_eq!(d.run.status, RunStatus::Succeeded);
                assert_eq!(d.run.answer.as_deref(), Some("12.99 EUR"));
                let ns: Vec<u32> = d.steps.iter().map(|s| s.n).collect();
                assert_eq!(ns, [1, 2]);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(error_of(&replies[3]), ErrorCode::NotFound);
        assert!(message_of(&replies[3]).contains("no run 404"));
        assert!(matches!(&replies[4].msg, ToBrowser::Deleted(d) if d.existed));
        assert!(matches!(&replies[5].msg, ToBrowser::Deleted(d) if !d.existed));
        assert_eq!(ids(&replies[6]), [second]);
    }

    #[tokio::test]
    async fn lessons_and_site_approvals_are_listed_and_removed() {
        use itinero_shared::messages::{
            DeleteLesson, ListLessons, ListSiteApprovals, RevokeSiteApproval,
        };
        let store = Store::open_in_memory().unwrap();
        let shop = store
            .add_lesson(
                "https://shop.example/",
                "sizes run small",
                "ask_human",
                None,
            )
            .unwrap();
        store
            .add_lesson("https://bank.example/", "never transfer", "ask_human", None)
            .unwrap();
        store.allow("https://shop.example/", "buy").unwrap();
        store.allow("https://shop.example/", "delete").unwrap();
        let input = requests(vec![
            ToHost::ListLessons(ListLessons {
                origin: None,
                limit: 10,
            }),
            ToHost::ListLessons(ListLessons {
                origin: Some("https://shop.example/cart".into()),
                limit: 10,
            }),
            ToHost::ListLessons(ListLessons {
                origin: Some("not a site".into()),
                limit: 10,
            }),
            ToHost::DeleteLesson(DeleteLesson { lesson_id: shop }),
            ToHost::ListSiteApprovals(ListSiteApprovals {}),
            ToHost::RevokeSiteApproval(RevokeSiteApproval {
                origin: "https://shop.example".into(),
                kind: "buy".into(),
            }),
            ToHost::RevokeSiteApproval(RevokeSiteApproval {
                origin: "https://shop.example".into(),
                kind: "buy".into(),
            }),
            ToHost::ListSiteApprovals(ListSiteApprovals {}),
        ]);
        let (_, replies) = run_with(input, StoreSlot::Open(store.clone())).await;
        let texts = |env: &Envelope<ToBrowser>| match &env.msg {
            ToBrowser::Lessons(l) => l.lessons.iter().map(|l| l.text.clone()).collect::<Vec<_>>(),
            other => panic!("{other:?}"),
        };
        assert_eq!(texts(&replies[0]), ["never transfer", "sizes run small"]);
        assert_eq!(texts(&replies[1]), ["sizes run small"]);
        assert_eq!(error_of(&replies[2]), ErrorCode::BadBody);
        assert!(message_of(&replies[2]).contains("not a web address or origin"));
        assert!(matches!(&replies[3].msg, ToBrowser::Deleted(d) if d.existed));
        let kinds = |env: &Envelope<ToBrowser>| match &env.msg {
            ToBrowser::SiteApprovals(a) => a
                .approvals
                .iter()
                .map(|a| format!("{} {}", a.origin, a.kind))
                .collect::<Vec<_>>(),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            kinds(&replies[4]),
            ["https://shop.example buy", "https://shop.example delete"]
        );
        assert!(matches!(&replies[5].msg, ToBrowser::Deleted(d) if d.existed));
        assert!(matches!(&replies[6].msg, ToBrowser::Deleted(d) if !d.existed));
        assert_eq!(kinds(&replies[7]), ["https://shop.example delete"]);
        assert_eq!(store.lessons(None, 10).unwrap().len(), 1);
    }

    #[tokio::test]
    async fn without_a_store_its_requests_say_why_and_everything_else_works() {
        use itinero_shared::messages::{GetSettings, ListRuns};
        let mut input = frame(
            br#"{"v":1,"id":1,"type":"Hello","body":{"protocol":1,"extension_version":"0.1.0"}}"#,
        );
        input.extend(request(2, ToHost::GetSettings(GetSettings {})));
        input.extend(request(3, ToHost::ListRuns(ListRuns { limit: 5 })));
        input.extend(ping(4, "still here"));
        let why = "cannot open the store /data/itinero.sqlite3: disk I/O error";
        let (end, replies) = run_with(input, StoreSlot::Unavailable(why.into())).await;
        assert_eq!(end, SessionEnd::Closed);
        assert!(
            matches!(&replies[0].msg, ToBrowser::HelloAck(ack) if ack.capabilities.contains(&"history".to_owned()))
        );
        for reply in &replies[1..3] {
            assert_eq!(error_of(reply), ErrorCode::StoreUnavailable);
            assert!(message_of(reply).contains(why), "{reply:?}");
            assert!(message_of(reply).contains("Tasks still run"), "{reply:?}");
        }
        assert!(message_of(&replies[1]).starts_with("cannot read the settings"));
        assert!(matches!(&replies[3].msg, ToBrowser::Pong(_)));
    }
}
