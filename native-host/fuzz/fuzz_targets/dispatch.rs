//! A session fed whatever the browser's port might carry: each line of the input is one frame,
//! read and handled as the host handles the browser's messages (`session::serve`, with a store
//! in memory that ends with the input). The session never panics, ends when the input does,
//! writes no more replies than it was sent messages, and every frame it writes back is one the
//! extension reads.
//!
//! A frame is made of each line rather than read from the bytes so that the fuzzer spends its
//! time on the messages (the framing has its own targets in `shared/fuzz`). `StartTask` and
//! `ListModels` are left out: they reach for a model server, the network or a browser, none of
//! which a fuzz run has, and would wait on them.
#![no_main]

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};

use itinero_host::session::{serve, SessionEnd};
use itinero_shared::codec::{Direction, FrameDecoder};
use itinero_shared::{encode_frame, Envelope, ToBrowser, ToHost};
use libfuzzer_sys::fuzz_target;
use tokio::io::AsyncWrite;
use tokio::runtime::Runtime;

/// One runtime for every input: building one per input would cost more than most inputs.
fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime")
    })
}

/// What the host writes to the browser.
#[derive(Clone, Default)]
struct Written(Arc<Mutex<Vec<u8>>>);

impl AsyncWrite for Written {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

fn reaches_out(line: &[u8]) -> bool {
    matches!(
        Envelope::<ToHost>::from_json(line),
        Ok(env) if matches!(env.msg, ToHost::StartTask(_) | ToHost::ListModels(_))
    )
}

fuzz_target!(|data: &[u8]| {
    let mut input = Vec::with_capacity(data.len() + 64);
    let mut frames = 0;
    for line in data.split(|&b| b == b'\n').filter(|l| !reaches_out(l)) {
        input.extend(encode_frame(line, Direction::ToHost).expect("a line fits a frame"));
        frames += 1;
    }
    let written = Written::default();
    let end = runtime()
        .block_on(serve(&input[..], written.clone()))
        .expect("writing to memory cannot fail");
    assert_eq!(end, SessionEnd::Closed, "whole frames, then the end");

    let out = std::mem::take(&mut *written.0.lock().unwrap());
    let mut decoder = FrameDecoder::new(Direction::ToBrowser);
    decoder.push(&out);
    let mut replies = 0;
    while let Some(frame) = decoder.next_frame().expect("a frame the extension reads") {
        if let Err((_, e)) = Envelope::<ToBrowser>::from_json(&frame) {
            panic!(
                "the host wrote a message the extension cannot read: {e}\n{}",
                String::from_utf8_lossy(&frame)
            );
        }
        replies += 1;
    }
    decoder.finish().expect("the host's last frame is whole");
    assert!(replies <= frames, "{replies} replies to {frames} messages");
});
