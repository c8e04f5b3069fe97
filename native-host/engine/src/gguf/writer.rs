//! Writes GGUF v3 files: the metadata and tensor table first, then each tensor's bytes as the
//! caller makes them, so a file of gigabytes is streamed rather than held in memory.

use std::io::{self, Write};

use super::{Array, TensorType, Value, DEFAULT_ALIGNMENT, MAGIC};

/// One tensor of the table: its bytes are asked for when the data section is written.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorEntry {
    pub name: String,
    /// ggml order, innermost first (see [`super::TensorInfo::dims`]).
    pub dims: Vec<u64>,
    pub ty: TensorType,
}

impl TensorEntry {
    /// Bytes of its data; `None` when the innermost dimension is not a whole number of blocks.
    pub fn bytes(&self) -> Option<u64> {
        let inner = *self.dims.first()?;
        if !inner.is_multiple_of(self.ty.block_elements() as u64) {
            return None;
        }
        self.ty.bytes_for(self.dims.iter().product())
    }
}

/// A GGUF file to write: metadata in the order given, tensors laid out in the order given, each
/// at an offset aligned to 32 bytes (the default alignment, so no key is needed for it).
#[derive(Debug, Default)]
pub struct Writer {
    metadata: Vec<(String, Value)>,
    tensors: Vec<TensorEntry>,
}

impl Writer {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn value(&mut self, key: impl Into<String>, value: Value) -> &mut Self {
        self.metadata.push((key.into(), value));
        self
    }

    pub fn tensor(&mut self, entry: TensorEntry) -> &mut Self {
        self.tensors.push(entry);
        self
    }

    pub fn tensors(&self) -> &[TensorEntry] {
        &self.tensors
    }

    /// Bytes of the whole file.
    pub fn file_bytes(&self) -> io::Result<u64> {
        let mut header = CountingSink(0);
        self.write_header(&mut header)?;
        let mut end = header.0.next_multiple_of(DEFAULT_ALIGNMENT);
        for t in &self.tensors {
            end = end.next_multiple_of(DEFAULT_ALIGNMENT) + entry_bytes(t)?;
        }
        Ok(end)
    }

    /// Writes the file to `out`; `data` fills a buffer with the bytes of each tensor in turn
    /// (the buffer is as long as the tensor's data).
    pub fn write(
        &self,
        out: &mut dyn Write,
        data: &mut dyn FnMut(&TensorEntry, &mut [u8]),
    ) -> io::Result<()> {
        let mut counted = Counting { out, written: 0 };
        self.write_header(&mut counted)?;
        let mut buffer = Vec::new();
        for t in &self.tensors {
            counted.pad_to(DEFAULT_ALIGNMENT)?;
            buffer.clear();
            buffer.resize(entry_bytes(t)? as usize, 0);
            data(t, &mut buffer);
            counted.write_all(&buffer)?;
        }
        counted.flush()
    }

    fn write_header(&self, out: &mut dyn Write) -> io::Result<()> {
        out.write_all(MAGIC)?;
        out.write_all(&3u32.to_le_bytes())?;
        out.write_all(&(self.tensors.len() as u64).to_le_bytes())?;
        out.write_all(&(self.metadata.len() as u64).to_le_bytes())?;
        for (key, value) in &self.metadata {
            string(out, key)?;
            out.write_all(&(value.value_type() as u32).to_le_bytes())?;
            write_value(out, value)?;
        }
        let mut offset = 0u64;
        for t in &self.tensors {
            string(out, &t.name)?;
            out.write_all(&(t.dims.len() as u32).to_le_bytes())?;
            for d in &t.dims {
                out.write_all(&d.to_le_bytes())?;
            }
            out.write_all(&t.ty.ggml_id().to_le_bytes())?;
            offset = offset.next_multiple_of(DEFAULT_ALIGNMENT);
            out.write_all(&offset.to_le_bytes())?;
            offset += entry_bytes(t)?;
        }
        Ok(())
    }
}

fn entry_bytes(t: &TensorEntry) -> io::Result<u64> {
    t.bytes().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "tensor {:?} of shape {:?} is not a whole number of {} blocks",
                t.name, t.dims, t.ty
            ),
        )
    })
}

fn string(out: &mut dyn Write, s: &str) -> io::Result<()> {
    out.write_all(&(s.len() as u64).to_le_bytes())?;
    out.write_all(s.as_bytes())
}

fn write_value(out: &mut dyn Write, value: &Value) -> io::Result<()> {
    match value {
        Value::U8(v) => out.write_all(&[*v]),
        Value::I8(v) => out.write_all(&v.to_le_bytes()),
        Value::U16(v) => out.write_all(&v.to_le_bytes()),
        Value::I16(v) => out.write_all(&v.to_le_bytes()),
        Value::U32(v) => out.write_all(&v.to_le_bytes()),
        Value::I32(v) => out.write_all(&v.to_le_bytes()),
        Value::F32(v) => out.write_all(&v.to_le_bytes()),
        Value::Bool(v) => out.write_all(&[u8::from(*v)]),
        Value::String(s) => string(out, s),
        Value::Array(a) => write_array(out, a),
        Value::U64(v) => out.write_all(&v.to_le_bytes()),
        Value::I64(v) => out.write_all(&v.to_le_bytes()),
        Value::F64(v) => out.write_all(&v.to_le_bytes()),
    }
}

fn write_array(out: &mut dyn Write, array: &Array) -> io::Result<()> {
    out.write_all(&(array.element_type() as u32).to_le_bytes())?;
    out.write_all(&(array.len() as u64).to_le_bytes())?;
    fn each<T>(
        out: &mut dyn Write,
        items: &[T],
        one: impl Fn(&mut dyn Write, &T) -> io::Result<()>,
    ) -> io::Result<()> {
        items.iter().try_for_each(|x| one(out, x))
    }
    match array {
        Array::U8(v) => out.write_all(v),
        Array::I8(v) => each(out, v, |o, x| o.write_all(&x.to_le_bytes())),
        Array::U16(v) => each(out, v, |o, x| o.write_all(&x.to_le_bytes())),
        Array::I16(v) => each(out, v, |o, x| o.write_all(&x.to_le_bytes())),
        Array::U32(v) => each(out, v, |o, x| o.write_all(&x.to_le_bytes())),
        Array::I32(v) => each(out, v, |o, x| o.write_all(&x.to_le_bytes())),
        Array::F32(v) => each(out, v, |o, x| o.write_all(&x.to_le_bytes())),
        Array::Bool(v) => each(out, v, |o, x| o.write_all(&[u8::from(*x)])),
        Array::String(v) => each(out, v, |o, s| string(o, s)),
        Array::Array(v) => each(out, v, |o, a| write_array(o, a)),
        Array::U64(v) => each(out, v, |o, x| o.write_all(&x.to_le_bytes())),
        Array::I64(v) => each(out, v, |o, x| o.write_all(&x.to_le_bytes())),
        Array::F64(v) => each(out, v, |o, x| o.write_all(&x.to_le_bytes())),
    }
}

/// Counts what passes through, to pad the data section to its alignment.
struct Counting<'a> {
    out: &'a mut dyn Write,
    written: u64,
}

impl Counting<'_> {
    fn pad_to(&mut self, alignment: u64) -> io::Result<()> {
        let pad = self.written.next_multiple_of(alignment) - self.written;
        self.write_all(&vec![0; pad as usize])
    }
}

impl Write for Counting<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.out.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// Counts bytes and keeps none: the header's length before it is written.
struct CountingSink(u64);

impl Write for CountingSink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
