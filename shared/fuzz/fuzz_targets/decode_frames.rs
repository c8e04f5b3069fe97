//! Feeds arbitrary bytes, in chunks of input-derived sizes, to a `FrameDecoder` for the
//! browser→host direction and decodes every frame as an `Envelope<ToHost>`.
//!
//! Input layout: byte 0 picks the chunking (`mode = b0 >> 6`: 0 = one byte per push,
//! 1 = 1..=8 bytes, 2 = 1..=256 bytes, 3 = everything in one push; the low bits salt
//! the sizes); the rest is the stream. Each chunk's size comes from the stream byte
//! where the chunk starts, so the fuzzer controls where reads are split.
//!
//! Invariants checked:
//! - nothing panics;
//! - `buffered()` never exceeds the bytes pushed so far, and equals exactly what was
//!   pushed minus what was consumed (headers and returned frames) until the stream is
//!   refused;
//! - the decoder never makes an allocation larger than (about) what it was given,
//!   so a hostile length prefix cannot make it reserve the claimed size (measured with
//!   a counting global allocator around the decoder's calls);
//! - the frames returned, the `TooLarge` error and the `finish()` result are exactly
//!   those of an independent one-shot parse of the whole stream (so each frame's length
//!   equals its prefix), whatever the chunking;
//! - only `TooLarge` comes out of `next_frame`, and after it no frame ever does;
//! - each frame that decodes as an envelope re-encodes to one that decodes equal.
#![no_main]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use itinero_shared::codec::MAX_TO_HOST;
use itinero_shared::{Direction, Envelope, FrameDecoder, FrameError, ToHost};
use libfuzzer_sys::fuzz_target;

/// Records the largest single allocation made while `TRACKING` is on.
struct Counting;

static TRACKING: AtomicBool = AtomicBool::new(false);
static LARGEST: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        System.alloc(layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        System.alloc_zeroed(layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        System.realloc(ptr, layout, new_size)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
}

fn note(size: usize) {
    if TRACKING.load(Ordering::Relaxed) {
        LARGEST.fetch_max(size, Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Runs `f` and returns the largest allocation it made.
fn tracked<T>(f: impl FnOnce() -> T) -> (T, usize) {
    LARGEST.store(0, Ordering::Relaxed);
    TRACKING.store(true, Ordering::Relaxed);
    let out = f();
    TRACKING.store(false, Ordering::Relaxed);
    (out, LARGEST.load(Ordering::Relaxed))
}

/// What a one-shot parse of the whole stream yields.
struct Expected {
    frames: Vec<Vec<u8>>,
    too_large: Option<u64>,
    finish: Result<(), FrameError>,
}

fn reference_parse(stream: &[u8]) -> Expected {
    let mut frames = Vec::new();
    let mut pos = 0;
    loop {
        let rest = &stream[pos..];
        if rest.len() < 4 {
            let finish = if rest.is_empty() {
                Ok(())
            } else {
                Err(FrameError::TruncatedHeader { have: rest.len() })
            };
            return Expected { frames, too_large: None, finish };
        }
        let len = u32::from_ne_bytes(rest[..4].try_into().unwrap()) as usize;
        if len > MAX_TO_HOST {
            return Expected { frames, too_large: Some(len as u64), finish: Ok(()) };
        }
        let body = &rest[4..];
        if body.len() < len {
            return Expected {
                frames,
                too_large: None,
                finish: Err(FrameError::TruncatedFrame { have: body.len(), need: len }),
            };
        }
        frames.push(body[..len].to_vec());
        pos += 4 + len;
    }
}

fn check_envelope(frame: &[u8]) {
    if let Ok(env) = Envelope::<ToHost>::from_json(frame) {
        let again = env.to_json();
        match Envelope::<ToHost>::from_json(&again) {
            Ok(back) => assert_eq!(back, env, "re-encoded envelope decodes differently"),
            Err((_, e)) => panic!(
                "re-encoded envelope no longer decodes: {e}\n  in:  {:?}\n  out: {:?}",
                String::from_utf8_lossy(frame),
                String::from_utf8_lossy(&again)
            ),
        }
    }
}

fn chunk_len(mode: u8, salt: u8, at: u8, n: usize, left: usize) -> usize {
    let r = (at ^ salt).wrapping_add(n as u8) as usize;
    let len = match mode {
        0 => 1,
        1 => 1 + r % 8,
        2 => 1 + r,
        _ => left,
    };
    len.min(left)
}

fuzz_target!(|data: &[u8]| {
    let Some((&plan, stream)) = data.split_first() else {
        return;
    };
    let (mode, salt) = (plan >> 6, plan & 0x3f);
    let expected = reference_parse(stream);

    let mut dec = FrameDecoder::new(Direction::ToHost);
    let mut got: Vec<Vec<u8>> = Vec::new();
    let mut too_large: Option<u64> = None;
    let mut pushed = 0usize;
    let mut consumed = 0usize; // headers + payloads handed out
    let mut pos = 0usize;
    let mut n = 0usize;

    while pos < stream.len() {
        let len = chunk_len(mode, salt, stream[pos], n, stream.len() - pos);
        let chunk = &stream[pos..pos + len];
        pos += len;
        n += 1;

        let ((), largest) = tracked(|| dec.push(chunk));
        pushed += len;
        assert!(largest <= 2 * pushed + 64, "push allocated {largest} B with {pushed} B pushed");
        assert!(dec.buffered() <= pushed, "buffered {} > pushed {pushed}", dec.buffered());

        loop {
            let (res, largest) = tracked(|| dec.next_frame());
            assert!(
                largest <= 2 * pushed + 64,
                "next_frame allocated {largest} B with {pushed} B pushed"
            );
            assert!(dec.buffered() <= pushed, "buffered {} > pushed {pushed}", dec.buffered());
            match res {
                Ok(Some(frame)) => {
                    assert!(too_large.is_none(), "frame returned after TooLarge");
                    consumed += 4 + frame.len();
                    check_envelope(&frame);
                    got.push(frame);
                }
                Ok(None) => break,
                Err(FrameError::TooLarge { len, direction, .. }) => {
                    assert!(too_large.is_none(), "TooLarge reported twice");
                    assert_eq!(direction, Direction::ToHost);
                    assert!(len > MAX_TO_HOST as u64, "refused a legal length {len}");
                    too_large = Some(len);
                    break;
                }
                Err(e) => panic!("next_frame returned a non-TooLarge error: {e:?}"),
            }
        }

        if too_large.is_none() {
            // Fully drained, so every byte not handed out is still held, except that a
            // complete header of the frame in progress has already been parsed off.
            let remaining = pushed - consumed;
            let held = if remaining >= 4 { remaining - 4 } else { remaining };
            assert_eq!(dec.buffered(), held, "decoder lost or invented bytes");
            if remaining >= 4 {
                let start = consumed;
                let need = u32::from_ne_bytes(stream[start..start + 4].try_into().unwrap());
                assert!(held < need as usize, "a complete frame was left undelivered");
            }
        }
    }

    assert_eq!(got, expected.frames, "frames differ from a one-shot parse");
    assert_eq!(too_large, expected.too_large, "TooLarge differs from a one-shot parse");
    assert_eq!(dec.finish(), expected.finish, "finish() differs from a one-shot parse");
    // Once refused, the stream stays dead.
    if too_large.is_some() {
        assert_eq!(dec.next_frame(), Ok(None));
    }
});
