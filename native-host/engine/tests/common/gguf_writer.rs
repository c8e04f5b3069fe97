//! Writes small GGUF v3 files, so a test can run an architecture no downloadable model has
//! (a qwen2 made of SmolLM2's weights and biases of its own).

use std::io::Write;
use std::path::Path;

/// What one GGUF file holds: metadata and tensors, written in the order they were added.
#[derive(Default)]
pub struct GgufWriter {
    kv: Vec<u8>,
    n_kv: u64,
    tensors: Vec<(String, Vec<u64>, u32, Vec<u8>)>,
}

const ALIGNMENT: u64 = 32;
const TYPE_U32: u32 = 4;
const TYPE_F32: u32 = 6;
const TYPE_STRING: u32 = 8;

fn string(out: &mut Vec<u8>, s: &str) {
    out.extend((s.len() as u64).to_le_bytes());
    out.extend(s.as_bytes());
}

impl GgufWriter {
    fn key(&mut self, key: &str, ty: u32) {
        string(&mut self.kv, key);
        self.kv.extend(ty.to_le_bytes());
        self.n_kv += 1;
    }

    pub fn str(&mut self, key: &str, value: &str) {
        self.key(key, TYPE_STRING);
        string(&mut self.kv, value);
    }

    pub fn u32(&mut self, key: &str, value: u32) {
        self.key(key, TYPE_U32);
        self.kv.extend(value.to_le_bytes());
    }

    pub fn f32(&mut self, key: &str, value: f32) {
        self.key(key, TYPE_F32);
        self.kv.extend(value.to_le_bytes());
    }

    /// A tensor of ggml type `ty` with dims in ggml order (innermost first) and its raw bytes.
    pub fn tensor(&mut self, name: &str, dims: &[u64], ty: u32, data: Vec<u8>) {
        self.tensors
            .push((name.to_owned(), dims.to_vec(), ty, data));
    }

    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let pad = |n: u64| n.div_ceil(ALIGNMENT) * ALIGNMENT;
        let mut out = Vec::new();
        out.extend(b"GGUF");
        out.extend(3u32.to_le_bytes());
        out.extend((self.tensors.len() as u64).to_le_bytes());
        out.extend(self.n_kv.to_le_bytes());
        out.extend(&self.kv);
        let mut offset = 0u64;
        for (name, dims, ty, data) in &self.tensors {
            string(&mut out, name);
            out.extend((dims.len() as u32).to_le_bytes());
            for d in dims {
                out.extend(d.to_le_bytes());
            }
            out.extend(ty.to_le_bytes());
            out.extend(offset.to_le_bytes());
            offset = pad(offset + data.len() as u64);
        }
        out.resize(pad(out.len() as u64) as usize, 0);
        for (_, _, _, data) in &self.tensors {
            out.extend(data);
            out.resize(pad(out.len() as u64) as usize, 0);
        }
        std::fs::File::create(path)?.write_all(&out)
    }
}
