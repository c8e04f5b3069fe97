//! A bounds-checked little-endian cursor over the GGUF bytes.
//!
//! Every read names what it was reading, so a truncated or corrupted file is reported as
//! "truncated while reading the name of tensor 12" rather than as a panic or a bare offset.

use super::GgufError;

/// Reads GGUF's primitive encodings from a byte slice, advancing as it goes.
pub(crate) struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, pos: 0 }
    }

    /// The offset of the next byte to be read.
    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    /// Takes the next `len` bytes, or reports what was being read when the file ends first.
    pub(crate) fn take(
        &mut self,
        len: usize,
        what: &dyn Fn() -> String,
    ) -> Result<&'a [u8], GgufError> {
        let end = self
            .pos
            .checked_add(len)
            .filter(|&end| end <= self.bytes.len());
        match end {
            Some(end) => {
                let slice = &self.bytes[self.pos..end];
                self.pos = end;
                Ok(slice)
            }
            None => Err(GgufError::Truncated {
                what: what(),
                offset: self.pos as u64,
                needed: len as u64,
                file_len: self.bytes.len() as u64,
            }),
        }
    }

    fn array<const N: usize>(&mut self, what: &dyn Fn() -> String) -> Result<[u8; N], GgufError> {
        let slice = self.take(N, what)?;
        let mut out = [0u8; N];
        out.copy_from_slice(slice);
        Ok(out)
    }

    pub(crate) fn u8(&mut self, what: &dyn Fn() -> String) -> Result<u8, GgufError> {
        Ok(self.array::<1>(what)?[0])
    }

    pub(crate) fn i8(&mut self, what: &dyn Fn() -> String) -> Result<i8, GgufError> {
        Ok(i8::from_le_bytes(self.array(what)?))
    }

    pub(crate) fn u16(&mut self, what: &dyn Fn() -> String) -> Result<u16, GgufError> {
        Ok(u16::from_le_bytes(self.array(what)?))
    }

    pub(crate) fn i16(&mut self, what: &dyn Fn() -> String) -> Result<i16, GgufError> {
        Ok(i16::from_le_bytes(self.array(what)?))
    }

    pub(crate) fn u32(&mut self, what: &dyn Fn() -> String) -> Result<u32, GgufError> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    pub(crate) fn i32(&mut self, what: &dyn Fn() -> String) -> Result<i32, GgufError> {
        Ok(i32::from_le_bytes(self.array(what)?))
    }

    pub(crate) fn u64(&mut self, what: &dyn Fn() -> String) -> Result<u64, GgufError> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    pub(crate) fn i64(&mut self, what: &dyn Fn() -> String) -> Result<i64, GgufError> {
        Ok(i64::from_le_bytes(self.array(what)?))
    }

    pub(crate) fn f32(&mut self, what: &dyn Fn() -> String) -> Result<f32, GgufError> {
        Ok(f32::from_le_bytes(self.array(what)?))
    }

    pub(crate) fn f64(&mut self, what: &dyn Fn() -> String) -> Result<f64, GgufError> {
        Ok(f64::from_le_bytes(self.array(what)?))
    }

    /// A GGUF string: a u64 byte length, then that many bytes of UTF-8 (no terminator).
    pub(crate) fn string(&mut self, what: &dyn Fn() -> String) -> Result<String, GgufError> {
        let len = self.u64(what)?;
        let remaining = (self.bytes.len() - self.pos) as u64;
        if len > remaining {
            return Err(GgufError::Truncated {
                what: what(),
                offset: self.pos as u64,
                needed: len,
                file_len: self.bytes.len() as u64,
            });
        }
        let bytes = self.take(len as usize, what)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| GgufError::Corrupt {
            what: what(),
            reason: "the string is not valid UTF-8".into(),
        })
    }

    /// Checks that `count` elements of at least `min_size` bytes each can still fit, so a corrupted
    /// count cannot make us allocate gigabytes before the read fails.
    pub(crate) fn ensure_room(
        &self,
        count: u64,
        min_size: u64,
        what: &dyn Fn() -> String,
    ) -> Result<(), GgufError> {
        let remaining = (self.bytes.len() - self.pos) as u64;
        match count.checked_mul(min_size) {
            Some(total) if total <= remaining => Ok(()),
            _ => Err(GgufError::Truncated {
                what: what(),
                offset: self.pos as u64,
                needed: count.saturating_mul(min_size),
                file_len: self.bytes.len() as u64,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_little_endian_and_reports_truncation_with_context() {
        let bytes = [1u8, 0, 0, 0, 0xff];
        let mut c = Cursor::new(&bytes);
        assert_eq!(c.u32(&|| "a".into()).unwrap(), 1);
        assert_eq!(c.position(), 4);
        let err = c.u16(&|| "the thing".into()).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("the thing"), "{msg}");
        assert!(msg.contains("offset 4"), "{msg}");
    }

    #[test]
    fn refuses_a_string_longer_than_the_file_without_allocating_it() {
        let mut bytes = u64::MAX.to_le_bytes().to_vec();
        bytes.extend_from_slice(b"abc");
        let err = Cursor::new(&bytes).string(&|| "key".into()).unwrap_err();
        assert!(matches!(err, GgufError::Truncated { .. }), "{err}");
    }

    #[test]
    fn refuses_a_string_that_is_not_utf8() {
        let mut bytes = 2u64.to_le_bytes().to_vec();
        bytes.extend_from_slice(&[0xc3, 0x28]);
        let err = Cursor::new(&bytes).string(&|| "key".into()).unwrap_err();
        assert!(err.to_string().contains("UTF-8"), "{err}");
    }
}
