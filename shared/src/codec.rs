//! Native-messaging framing: a `u32` length in native byte order, then that many
//! bytes of UTF-8 JSON.
//!
//! The decoder is sans-IO on purpose: the host feeds it whatever `read` returned,
//! however small, and it never allocates more than it has actually received, so a
//! hostile length prefix cannot make the host reserve gigabytes. It tells EOF between
//! frames (the browser closed the port) from EOF inside one (it went away mid-frame).
//!
//! Each direction has Chrome's limit ([`Direction`]): a host→browser frame of 1 MiB or more
//! makes Chrome drop the port, so [`encode_frame`] refuses to write one and the host turns
//! such a reply into an error reply instead.

use thiserror::Error;

/// Largest frame the browser may send to the host (Chrome's own limit).
pub const MAX_TO_HOST: usize = 64 * 1024 * 1024;

/// Host→browser frames must stay strictly below this (Chrome drops the port otherwise).
pub const MAX_TO_BROWSER: usize = 1024 * 1024;

const HEADER: usize = 4;

/// Which way a frame travels; each direction has its own size limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Browser → host: up to and including 64 MiB.
    ToHost,
    /// Host → browser: strictly under 1 MiB.
    ToBrowser,
}

impl Direction {
    /// Whether a payload of `len` bytes may travel this way.
    pub fn allows(self, len: usize) -> bool {
        match self {
            Direction::ToHost => len <= MAX_TO_HOST,
            Direction::ToBrowser => len < MAX_TO_BROWSER,
        }
    }

    /// The limit as a human would state it, for error messages.
    pub fn limit_text(self) -> &'static str {
        match self {
            Direction::ToHost => "at most 64 MiB",
            Direction::ToBrowser => "under 1 MiB",
        }
    }
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum FrameError {
    #[error("frame of {len} bytes is too large: frames travelling {direction:?} must be {limit}")]
    TooLarge {
        len: u64,
        direction: Direction,
        limit: &'static str,
    },
    #[error("stream ended inside a frame: {have} of {need} bytes received")]
    TruncatedFrame { have: usize, need: usize },
    #[error("stream ended inside a length prefix: {have} of 4 bytes received")]
    TruncatedHeader { have: usize },
}

/// Prefixes `payload` with its length, refusing payloads the other side would reject.
pub fn encode_frame(payload: &[u8], direction: Direction) -> Result<Vec<u8>, FrameError> {
    if !direction.allows(payload.len()) {
        return Err(FrameError::TooLarge {
            len: payload.len() as u64,
            direction,
            limit: direction.limit_text(),
        });
    }
    let mut out = Vec::with_capacity(HEADER + payload.len());
    out.extend_from_slice(&(payload.len() as u32).to_ne_bytes());
    out.extend_from_slice(payload);
    Ok(out)
}

/// Incremental frame decoder for one direction of a stream.
///
/// After it reports [`FrameError::TooLarge`] the stream cannot be re-synchronised
/// (the length is the only delimiter), so callers must stop reading.
#[derive(Debug)]
pub struct FrameDecoder {
    direction: Direction,
    buf: Vec<u8>,
    /// Length of the frame being assembled, once its header is complete.
    want: Option<usize>,
    poisoned: bool,
}

impl FrameDecoder {
    pub fn new(direction: Direction) -> Self {
        Self {
            direction,
            buf: Vec::new(),
            want: None,
            poisoned: false,
        }
    }

    /// Appends bytes just read from the stream. Ignored once a frame was refused:
    /// nothing after it can be framed, so keeping it would only grow memory.
    pub fn push(&mut self, bytes: &[u8]) {
        if !self.poisoned {
            self.buf.extend_from_slice(bytes);
        }
    }

    /// Returns the next complete frame's payload, if one has fully arrived.
    pub fn next_frame(&mut self) -> Result<Option<Vec<u8>>, FrameError> {
        if self.poisoned {
            return Ok(None);
        }
        let want = match self.want {
            Some(want) => want,
            None => {
                if self.buf.len() < HEADER {
                    return Ok(None);
                }
                let mut header = [0u8; HEADER];
                header.copy_from_slice(&self.buf[..HEADER]);
                let len = u32::from_ne_bytes(header) as usize;
                if !self.direction.allows(len) {
                    self.poisoned = true;
                    self.buf = Vec::new();
                    return Err(FrameError::TooLarge {
                        len: len as u64,
                        direction: self.direction,
                        limit: self.direction.limit_text(),
                    });
                }
                self.buf.drain(..HEADER);
                self.want = Some(len);
                len
            }
        };
        if self.buf.len() < want {
            return Ok(None);
        }
        let rest = self.buf.split_off(want);
        let frame = std::mem::replace(&mut self.buf, rest);
        self.want = None;
        Ok(Some(frame))
    }

    /// Called at end of stream: a clean end only if no frame was left half-received.
    pub fn finish(&self) -> Result<(), FrameError> {
        if self.poisoned {
            return Ok(());
        }
        match self.want {
            Some(need) => Err(FrameError::TruncatedFrame {
                have: self.buf.len(),
                need,
            }),
            None if self.buf.is_empty() => Ok(()),
            None => Err(FrameError::TruncatedHeader {
                have: self.buf.len(),
            }),
        }
    }

    /// Bytes buffered but not yet returned; lets callers bound memory use in tests.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(payload: &[u8]) -> Vec<u8> {
        encode_frame(payload, Direction::ToHost).unwrap()
    }

    #[test]
    fn round_trips_a_frame() {
        let mut d = FrameDecoder::new(Direction::ToHost);
        d.push(&frame(br#"{"a":1}"#));
        assert_eq!(d.next_frame().unwrap().unwrap(), br#"{"a":1}"#);
        assert_eq!(d.next_frame().unwrap(), None);
        d.finish().unwrap();
    }

    #[test]
    fn length_is_native_endian() {
        let f = frame(b"xyz");
        assert_eq!(&f[..4], &3u32.to_ne_bytes());
    }

    #[test]
    fn assembles_frames_fed_one_byte_at_a_time() {
        let mut bytes = frame(b"first");
        bytes.extend(frame(b""));
        bytes.extend(frame("thi\u{e9}rd".as_bytes()));
        let mut d = FrameDecoder::new(Direction::ToHost);
        let mut got = Vec::new();
        for b in bytes {
            d.push(&[b]);
            while let Some(f) = d.next_frame().unwrap() {
                got.push(f);
            }
        }
        assert_eq!(
            got,
            vec![
                b"first".to_vec(),
                b"".to_vec(),
                "thi\u{e9}rd".as_bytes().to_vec()
            ]
        );
        d.finish().unwrap();
    }

    #[test]
    fn several_frames_in_one_read() {
        let mut bytes = frame(b"1");
        bytes.extend(frame(b"22"));
        let mut d = FrameDecoder::new(Direction::ToHost);
        d.push(&bytes);
        assert_eq!(d.next_frame().unwrap().unwrap(), b"1");
        assert_eq!(d.next_frame().unwrap().unwrap(), b"22");
        assert_eq!(d.next_frame().unwrap(), None);
    }

    #[test]
    fn eof_between_frames_is_clean() {
        let mut d = FrameDecoder::new(Direction::ToHost);
        d.finish().unwrap();
        d.push(&frame(b"x"));
        d.next_frame().unwrap().unwrap();
        d.finish().unwrap();
    }

    #[test]
    fn eof_inside_a_frame_is_an_error() {
        let f = frame(b"hello");
        let mut d = FrameDecoder::new(Direction::ToHost);
        d.push(&f[..6]);
        assert_eq!(d.next_frame().unwrap(), None);
        assert_eq!(
            d.finish(),
            Err(FrameError::TruncatedFrame { have: 2, need: 5 })
        );
    }

    #[test]
    fn eof_inside_a_header_is_an_error() {
        let mut d = FrameDecoder::new(Direction::ToHost);
        d.push(&[1, 0]);
        assert_eq!(d.next_frame().unwrap(), None);
        assert_eq!(d.finish(), Err(FrameError::TruncatedHeader { have: 2 }));
    }

    #[test]
    fn refuses_an_oversized_length_before_buffering_it() {
        let claimed = 70u32 * 1024 * 1024;
        let mut d = FrameDecoder::new(Direction::ToHost);
        d.push(&claimed.to_ne_bytes());
        d.push(b"{\"v\":1");
        let err = d.next_frame().unwrap_err();
        assert!(matches!(err, FrameError::TooLarge { len, .. } if len == claimed as u64));
        // Nothing of the claimed size was reserved, and the stream is now dead.
        assert_eq!(d.buffered(), 0);
        assert!(d.buf.capacity() < 1024);
        d.push(b"more");
        assert_eq!(d.buffered(), 0);
        assert_eq!(d.next_frame().unwrap(), None);
    }

    #[test]
    fn garbage_length_prefix_is_refused() {
        let mut d = FrameDecoder::new(Direction::ToHost);
        d.push(b"GET / HTTP/1.1\r\n");
        assert!(matches!(d.next_frame(), Err(FrameError::TooLarge { .. })));
    }

    #[test]
    fn exactly_64_mib_is_allowed_to_the_host_but_not_one_more() {
        assert!(Direction::ToHost.allows(MAX_TO_HOST));
        assert!(!Direction::ToHost.allows(MAX_TO_HOST + 1));
        let mut d = FrameDecoder::new(Direction::ToHost);
        d.push(&((MAX_TO_HOST + 1) as u32).to_ne_bytes());
        assert!(d.next_frame().is_err());
    }

    #[test]
    fn refuses_to_write_a_browser_frame_of_one_mib_or_more() {
        let under = vec![b'a'; MAX_TO_BROWSER - 1];
        assert_eq!(
            encode_frame(&under, Direction::ToBrowser).unwrap().len(),
            MAX_TO_BROWSER + 3
        );
        let exact = vec![b'a'; MAX_TO_BROWSER];
        assert!(matches!(
            encode_frame(&exact, Direction::ToBrowser),
            Err(FrameError::TooLarge { len, .. }) if len == MAX_TO_BROWSER as u64
        ));
    }

    #[test]
    fn decoder_for_browser_direction_enforces_the_browser_limit() {
        let mut d = FrameDecoder::new(Direction::ToBrowser);
        d.push(&(MAX_TO_BROWSER as u32).to_ne_bytes());
        assert!(d.next_frame().is_err());
    }
}
