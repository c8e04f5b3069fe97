//! Requests the host makes of the browser: observe a tab, perform an action, list tabs.
//!
//! The session's read loop is the only reader of the browser's frames, so a
//! request cannot simply wait for "the next frame": it registers a oneshot under
//! a fresh id and the read loop hands the reply to it ([`BrowserLink::resolve`]).
//! Host ids start at [`HOST_REQUEST_ID_BASE`], a range the background never uses
//! for the panel requests it forwards, so a reply is never mistaken for another.
//! Every wait is bounded, and when the session ends every waiter is told why
//! instead of waiting for its timeout.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use itinero_shared::envelope::MessageSet;
use itinero_shared::messages::{
    ActionOutcomeReport, Capture, Captured, ListTabs, ObservationReport, Observe, Perform,
    SecretField, TabInfo,
};
use itinero_shared::{Action, ErrorCode, ToBrowser, ToHost, HOST_REQUEST_ID_BASE};
use thiserror::Error;
use tokio::sync::oneshot;
use tracing::{debug, warn};

use super::outbox::Outbox;

/// Listing tabs is one `chrome.tabs.query`.
pub const LIST_TABS_TIMEOUT: Duration = Duration::from_secs(10);
/// An observation walks the page, and waits for a content script that is still loading.
pub const OBSERVE_TIMEOUT: Duration = Duration::from_secs(30);
/// An action may wait up to 30 s by itself, then settle (3 s at most), then wait for a
/// navigation to commit (10 s at most).
/// A picture takes a few hundred milliseconds; a browser that never answers (an extension
/// older than the host) must not hold each step long.
pub const CAPTURE_TIMEOUT: Duration = Duration::from_secs(5);
pub const PERFORM_TIMEOUT: Duration = Duration::from_secs(60);

/// Why a request to the browser got no usable answer.
#[derive(Debug, Clone, Error)]
pub enum LinkError {
    #[error("the browser did not answer {request} within {} s", after.as_secs())]
    Timeout {
        request: &'static str,
        after: Duration,
    },
    #[error("the browser session ended before {request} was answered: {reason}")]
    SessionEnded {
        request: &'static str,
        reason: String,
    },
    /// The browser answered with an `Error`: no such tab, no content script there, …
    #[error("{message}")]
    Browser { code: ErrorCode, message: String },
    #[error("the browser's answer to {request} was unreadable: {reason}")]
    BadReply {
        request: &'static str,
        reason: String,
    },
    #[error("the browser answered {request} with {got}")]
    Unexpected {
        request: &'static str,
        got: &'static str,
    },
}

/// What a pending request receives: the browser's message, or why there is none.
type Reply = Result<ToHost, LinkError>;

struct Pending {
    request: &'static str,
    tx: oneshot::Sender<Reply>,
}

struct State {
    pending: HashMap<u64, Pending>,
    /// Taken when the session ends: clones of the link live on (in control connections), and
    /// the session's writer only finishes once every outbox is gone.
    outbox: Option<Outbox>,
    /// Set once the session is over: later requests fail at once.
    ended: Option<String>,
}

struct Inner {
    next_id: AtomicU64,
    state: Mutex<State>,
}

/// The host's side of host→browser requests; cheap to clone, one per browser session.
#[derive(Clone)]
pub struct BrowserLink {
    inner: Arc<Inner>,
}

/// A reply together with how long the browser took, measured here in the host.
#[derive(Debug, Clone)]
pub struct Timed<T> {
    pub value: T,
    pub round_trip: Duration,
}

/// Removes a request's entry when its waiter goes away (answered, timed out or cancelled),
/// so a late reply finds nobody instead of a stale sender.
struct Registration<'a> {
    link: &'a BrowserLink,
    id: u64,
}

impl Drop for Registration<'_> {
    fn drop(&mut self) {
        self.link.state().pending.remove(&self.id);
    }
}

impl BrowserLink {
    pub fn new(outbox: Outbox) -> Self {
        Self {
            inner: Arc::new(Inner {
                next_id: AtomicU64::new(HOST_REQUEST_ID_BASE),
                state: Mutex::new(State {
                    pending: HashMap::new(),
                    outbox: Some(outbox),
                    ended: None,
                }),
            }),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave the map half-updated; keep going.
        self.inner
            .state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Sends `msg` and waits at most `timeout` for the browser's reply with the same id.
    pub async fn request(
        &self,
        msg: ToBrowser,
        timeout: Duration,
    ) -> Result<Timed<ToHost>, LinkError> {
        let request = msg.type_name();
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        let outbox = {
            let mut state = self.state();
            let outbox = match (&state.ended, &state.outbox) {
                (None, Some(outbox)) => outbox.clone(),
                (ended, _) => {
                    return Err(LinkError::SessionEnded {
                        request,
                        reason: ended.clone().unwrap_or_default(),
                    })
                }
            };
            state.pending.insert(id, Pending { request, tx });
            outbox
        };
        let _registration = Registration { link: self, id };
        let started = Instant::now();
        debug!(id, request, "request to the browser");
        outbox.send(id, msg).await;
        drop(outbox);
        let reply = match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(reply)) => reply?,
            // The sender is only dropped by `end`, which sends first; treat it the same.
            Ok(Err(_)) => {
                return Err(LinkError::SessionEnded {
                    request,
                    reason: "the link was dropped".into(),
                })
            }
            Err(_) => {
                warn!(id, request, ?timeout, "the browser did not answer in time");
                return Err(LinkError::Timeout {
                    request,
                    after: timeout,
                });
            }
        };
        let round_trip = started.elapsed();
        debug!(id, request, ?round_trip, "reply from the browser");
        match reply {
            ToHost::Error(e) => Err(LinkError::Browser {
                code: e.code,
                message: e.message,
            }),
            value => Ok(Timed { value, round_trip }),
        }
    }

    /// Hands a browser→host reply to the request waiting for `id`. Gives the message back
    /// when nobody waits for it (it came late, or answers an id the host never used).
    #[must_use = "an unclaimed reply should at least be logged"]
    pub fn resolve(&self, id: u64, msg: ToHost) -> Option<ToHost> {
        let pending = self.state().pending.remove(&id);
        match pending {
            Some(p) => {
                // The waiter may have just timed out; then the reply has nowhere to go.
                let _ = p.tx.send(Ok(msg));
                None
            }
            None => Some(msg),
        }
    }

    /// Fails the request waiting for `id` because its reply could not be decoded.
    pub fn fail(&self, id: u64, reason: String) -> bool {
        let pending = self.state().pending.remove(&id);
        match pending {
            Some(p) => {
                let _ = p.tx.send(Err(LinkError::BadReply {
                    request: p.request,
                    reason,
                }));
                true
            }
            None => false,
        }
    }

    /// Ends the link: every waiting request fails with `reason`, and so does every later one.
    pub fn end(&self, reason: &str) {
        let drained: Vec<Pending> = {
            let mut state = self.state();
            state.ended = Some(reason.to_owned());
            state.outbox = None;
            state.pending.drain().map(|(_, p)| p).collect()
        };
        for p in drained {
            let _ = p.tx.send(Err(LinkError::SessionEnded {
                request: p.request,
                reason: reason.to_owned(),
            }));
        }
    }

    /// Requests still waiting for the browser (for tests and diagnostics).
    pub fn pending(&self) -> usize {
        self.state().pending.len()
    }

    /// The browser's open tabs.
    pub async fn list_tabs(&self) -> Result<Timed<Vec<TabInfo>>, LinkError> {
        let reply = self
            .request(ToBrowser::ListTabs(ListTabs {}), LIST_TABS_TIMEOUT)
            .await?;
        match reply.value {
            ToHost::TabList(list) => Ok(Timed {
                value: list.tabs,
                round_trip: reply.round_trip,
            }),
            other => Err(unexpected("ListTabs", &other)),
        }
    }

    /// A fresh observation of the tab's top frame.
    pub async fn observe(
        &self,
        task_id: u64,
        tab_id: i64,
    ) -> Result<Timed<ObservationReport>, LinkError> {
        let reply = self
            .request(
                ToBrowser::Observe(Observe { task_id, tab_id }),
                OBSERVE_TIMEOUT,
            )
            .await?;
        match reply.value {
            ToHost::Observation(report) => Ok(Timed {
                value: report,
                round_trip: reply.round_trip,
            }),
            other => Err(unexpected("Observe", &other)),
        }
    }

    /// A JPEG of what the tab shows, base64, of at most `max_bytes` bytes.
    pub async fn capture(
        &self,
        task_id: u64,
        tab_id: i64,
        max_bytes: u32,
    ) -> Result<Timed<Captured>, LinkError> {
        let msg = ToBrowser::Capture(Capture {
            task_id,
            tab_id,
            max_bytes,
        });
        let reply = self.request(msg, CAPTURE_TIMEOUT).await?;
        match reply.value {
            ToHost::Captured(picture) => Ok(Timed {
                value: picture,
                round_trip: reply.round_trip,
            }),
            other => Err(unexpected("Capture", &other)),
        }
    }

    /// Performs `action` in a frame of a tab and reports what happened.
    pub async fn perform(
        &self,
        task_id: u64,
        tab_id: i64,
        frame_id: i64,
        action: Action,
        secret: Option<SecretField>,
    ) -> Result<Timed<ActionOutcomeReport>, LinkError> {
        let msg = ToBrowser::Perform(Perform {
            task_id,
            tab_id,
            frame_id,
            action,
            secret,
        });
        let reply = self.request(msg, PERFORM_TIMEOUT).await?;
        match reply.value {
            ToHost::ActionOutcome(report) => Ok(Timed {
                value: report,
                round_trip: reply.round_trip,
            }),
            other => Err(unexpected("Perform", &other)),
        }
    }
}

fn unexpected(request: &'static str, got: &ToHost) -> LinkError {
    LinkError::Unexpected {
        request,
        got: got.type_name(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::{serve_with, SessionEnd};
    use itinero_shared::codec::{Direction, FrameDecoder};
    use itinero_shared::envelope::Envelope;
    use itinero_shared::messages::{ErrorReply, Ping, TabList};
    use itinero_shared::{encode_frame, is_host_request_id};
    use tokio::io::{duplex, AsyncReadExt, AsyncWriteExt, DuplexStream};
    use tokio::task::JoinHandle;

    /// The browser's side of a session served in-process.
    struct Browser {
        to_host: Option<DuplexStream>,
        from_host: DuplexStream,
        decoder: FrameDecoder,
        link: BrowserLink,
        session: JoinHandle<std::io::Result<SessionEnd>>,
    }

    impl Browser {
        async fn start() -> Self {
            let (to_host, host_in) = duplex(1 << 16);
            let (host_out, from_host) = duplex(1 << 16);
            let (tx, rx) = oneshot::channel();
            let store = crate::store::StoreSlot::in_memory();
            let session = tokio::spawn(serve_with(host_in, host_out, store, move |link, _| {
                let _ = tx.send(link);
            }));
            Self {
                to_host: Some(to_host),
                from_host,
                decoder: FrameDecoder::new(Direction::ToBrowser),
                link: rx.await.unwrap(),
                session,
            }
        }

        async fn send(&mut self, id: u64, msg: ToHost) {
            self.send_raw(&Envelope::new(id, msg).to_json()).await;
        }

        async fn send_raw(&mut self, json: &[u8]) {
            let frame = encode_frame(json, Direction::ToHost).unwrap();
            self.to_host
                .as_mut()
                .unwrap()
                .write_all(&frame)
                .await
                .unwrap();
        }

        async fn next(&mut self) -> Envelope<ToBrowser> {
            loop {
                if let Some(frame) = self.decoder.next_frame().unwrap() {
                    return Envelope::from_json(&frame).unwrap();
                }
                let mut buf = [0u8; 4096];
                let n = self.from_host.read(&mut buf).await.unwrap();
                assert!(n > 0, "the host closed its output");
                self.decoder.push(&buf[..n]);
            }
        }
    }

    fn tab(id: i64) -> TabInfo {
        TabInfo {
            tab_id: id,
            window_id: 1,
            url: "http://127.0.0.1/".into(),
            title: "t".into(),
            active: true,
        }
    }

    #[tokio::test]
    async fn replies_find_their_requests_among_panel_traffic() {
        let mut b = Browser::start().await;
        let first = tokio::spawn({
            let link = b.link.clone();
            async move { link.list_tabs().await }
        });
        let req1 = b.next().await;
        let second = tokio::spawn({
            let link = b.link.clone();
            async move { link.list_tabs().await }
        });
        let req2 = b.next().await;
        assert!(matches!(req1.msg, ToBrowser::ListTabs(_)));
        assert!(is_host_request_id(req1.id) && is_host_request_id(req2.id));
        assert_ne!(req1.id, req2.id);
        // A panel's request in between is answered as usual.
        b.send(
            5,
            ToHost::Ping(Ping {
                payload: "p".into(),
                echo: true,
            }),
        )
        .await;
        let pong = b.next().await;
        assert_eq!(pong.id, 5);
        assert!(matches!(pong.msg, ToBrowser::Pong(_)));
        // Answered out of order: each reply goes to the request with its id.
        b.send(req2.id, ToHost::TabList(TabList { tabs: vec![tab(2)] }))
            .await;
        b.send(req1.id, ToHost::TabList(TabList { tabs: vec![tab(1)] }))
            .await;
        assert_eq!(first.await.unwrap().unwrap().value, vec![tab(1)]);
        assert_eq!(second.await.unwrap().unwrap().value, vec![tab(2)]);
        assert_eq!(b.link.pending(), 0);
    }

    #[tokio::test]
    async fn browser_errors_and_unreadable_replies_fail_only_their_request() {
        let mut b = Browser::start().await;
        let refused = tokio::spawn({
            let link = b.link.clone();
            async move { link.observe(0, 99).await }
        });
        let req = b.next().await;
        b.send(
            req.id,
            ToHost::Error(ErrorReply {
                code: ErrorCode::NoSuchTab,
                message: "there is no tab with id 99".into(),
            }),
        )
        .await;
        match refused.await.unwrap() {
            Err(LinkError::Browser { code, message }) => {
                assert_eq!(code, ErrorCode::NoSuchTab);
                assert_eq!(message, "there is no tab with id 99");
            }
            other => panic!("{other:?}"),
        }
        let garbled = tokio::spawn({
            let link = b.link.clone();
            async move { link.observe(0, 1).await }
        });
        let req = b.next().await;
        let bad = format!(
            r#"{{"v":1,"id":{},"type":"Observation","body":{{"task_id":"x"}}}}"#,
            req.id
        );
        b.send_raw(bad.as_bytes()).await;
        assert!(matches!(
            garbled.await.unwrap(),
            Err(LinkError::BadReply { .. })
        ));
        // A reply that answers nothing, from a panel, is refused with a reason; the session goes on.
        b.send(7, ToHost::TabList(TabList { tabs: vec![] })).await;
        let refusal = b.next().await;
        assert_eq!(refusal.id, 7);
        assert!(matches!(refusal.msg, ToBrowser::Error(_)));
    }

    #[tokio::test]
    async fn requests_waiting_when_the_session_ends_fail_at_once() {
        let mut b = Browser::start().await;
        let waiting = tokio::spawn({
            let link = b.link.clone();
            async move { link.list_tabs().await }
        });
        let _ = b.next().await;
        drop(b.to_host.take());
        assert!(matches!(
            waiting.await.unwrap(),
            Err(LinkError::SessionEnded { .. })
        ));
        assert_eq!(b.session.await.unwrap().unwrap(), SessionEnd::Closed);
        // And so does anything asked afterwards.
        assert!(matches!(
            b.link.list_tabs().await,
            Err(LinkError::SessionEnded { .. })
        ));
    }

    #[tokio::test]
    async fn an_unanswered_request_times_out_and_its_late_reply_is_dropped() {
        let mut b = Browser::start().await;
        let waiting = tokio::spawn({
            let link = b.link.clone();
            async move {
                link.request(ToBrowser::ListTabs(ListTabs {}), Duration::from_millis(50))
                    .await
            }
        });
        let req = b.next().await;
        match waiting.await.unwrap() {
            Err(e @ LinkError::Timeout { .. }) => {
                assert!(
                    e.to_string().contains("did not answer ListTabs within"),
                    "{e}"
                )
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(b.link.pending(), 0);
        // Late: nobody waits, and the browser is not answered for it.
        b.send(req.id, ToHost::TabList(TabList { tabs: vec![] }))
            .await;
        b.send(
            8,
            ToHost::Ping(Ping {
                payload: "after".into(),
                echo: true,
            }),
        )
        .await;
        assert_eq!(b.next().await.id, 8);
    }
}
