//! Sends envelopes to the browser through one writer task, so that frames from several tasks
//! are never interleaved on stdout.

use itinero_shared::envelope::Envelope;
use itinero_shared::messages::ErrorReply;
use itinero_shared::{ErrorCode, ToBrowser};
use tokio::sync::mpsc;

/// An [`Outbox`] that may be gone: [`WeakOutbox::upgrade`] says.
#[derive(Clone)]
pub struct WeakOutbox(mpsc::WeakSender<Envelope<ToBrowser>>);

impl WeakOutbox {
    pub fn upgrade(&self) -> Option<Outbox> {
        self.0.upgrade().map(Outbox)
    }
}

/// Sends envelopes to the browser; cheap to clone.
#[derive(Clone)]
pub struct Outbox(mpsc::Sender<Envelope<ToBrowser>>);

impl Outbox {
    /// An outbox and the receiving end its writer drains.
    pub fn channel() -> (Self, mpsc::Receiver<Envelope<ToBrowser>>) {
        let (tx, rx) = mpsc::channel(64);
        (Self(tx), rx)
    }

    /// A handle that does not keep the writer alive: the session's writer finishes once the
    /// session and its tasks let go, whoever else (the control socket) still holds one of these.
    pub fn downgrade(&self) -> WeakOutbox {
        WeakOutbox(self.0.downgrade())
    }

    pub async fn send(&self, id: u64, msg: ToBrowser) {
        // The writer only stops when stdout is gone, and then nobody is listening.
        let _ = self.0.send(Envelope::new(id, msg)).await;
    }

    pub async fn error(&self, id: u64, code: ErrorCode, message: impl Into<String>) {
        self.send(
            id,
            ToBrowser::Error(ErrorReply {
                code,
                message: message.into(),
            }),
        )
        .await;
    }
}
