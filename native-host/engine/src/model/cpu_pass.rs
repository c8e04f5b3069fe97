//! The forward pass on the CPU: the same graph as the GPU's (`transformer`), read from the same
//! [`HParams`] and [`Variant`], run by the CPU kernels (`crate::cpu`) over an f16 KV cache.
//!
//! A batch of tokens goes through each layer together, so a matrix is read from memory once per
//! batch rather than once per token (prefill), and decode is the batch of one. The model's
//! threads are a pool of its own, one per core by default, and a step runs inside it.

use std::sync::Arc;

use crate::cpu::ops::{self, AttentionScratch, AttentionShape, KvCache};
use crate::cpu::{product, products, Acts, Isa};
use crate::gguf::{Gguf, GgufError};
use crate::quant;
use crate::rope::RopeParams;

use super::cpu_weights::{CpuLayer, CpuWeights, MatrixAt};
use super::variant::Variant;
use super::{HParams, ModelError, PREFILL_BATCH};

/// Sets the CPU pass's threads (default: one per core the OS gives the process).
pub const THREADS_ENV: &str = "ITINERO_THREADS";

/// A loaded model on the CPU, with its KV cache.
pub struct CpuTransformer {
    gguf: Gguf,
    hp: HParams,
    variant: Variant,
    rope: RopeParams,
    /// Gemma's sliding-window layers' RoPE.
    rope_local: RopeParams,
    capacity: u32,
    isa: Isa,
    pool: Arc<rayon::ThreadPool>,
    weights: CpuWeights,
    caches: Vec<KvCache>,
    s: Scratch,
}

impl std::fmt::Debug for CpuTransformer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CpuTransformer")
            .field("hparams", &self.hp)
            .field("capacity", &self.capacity)
            .field("isa", &self.isa)
            .field("threads", &self.pool.current_num_threads())
            .finish()
    }
}

/// A step's activations, kept between steps so that decode allocates nothing.
#[derive(Debug, Default)]
struct Scratch {
    x: Vec<f32>,
    h: Vec<f32>,
    q: Vec<f32>,
    k: Vec<f32>,
    v: Vec<f32>,
    att: Vec<f32>,
    o: Vec<f32>,
    gate: Vec<f32>,
    up: Vec<f32>,
    acts: Acts,
    attention: AttentionScratch,
    rotations: Vec<(f32, f32)>,
}

/// The threads a CPU pass uses when not told: [`THREADS_ENV`], else the cores available.
pub fn default_threads() -> usize {
    std::env::var(THREADS_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n: &usize| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

impl CpuTransformer {
    /// Reads the model's shape and finds its weights in the mapped file, and makes a KV cache of
    /// `capacity` positions (at most the model's context), refusing before allocating it when
    /// it would not fit in the memory the system has free.
    pub fn load(gguf: Gguf, capacity: u32, threads: usize) -> Result<Self, ModelError> {
        let hp = HParams::from_gguf(&gguf)?;
        let variant = super::variant::of(&gguf, &hp)?;
        let rope = RopeParams::from_gguf(&gguf)?;
        let rope_local = rope.gemma3_sliding_window();
        let capacity = capacity.min(hp.context).max(1);
        let weights = CpuWeights::read(&gguf, &hp, &variant)?;
        let width = hp.kv_dim() as usize;
        let cache_bytes = u64::from(hp.layers) * u64::from(capacity) * width as u64 * 4;
        if let Some(free) = available_memory() {
            if cache_bytes > free {
                return Err(ModelError::Unsupported(format!(
                    "a KV cache of {capacity} positions takes {} MB; the system has {} MB free",
                    cache_bytes >> 20,
                    free >> 20
                )));
            }
        }
        let caches = (0..hp.layers)
            .map(|_| KvCache::new(capacity as usize, width))
            .collect();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.max(1))
            .thread_name(|i| format!("itinero-cpu-{i}"))
            .build()
            .map_err(|e| ModelError::Unsupported(format!("starting the CPU threads: {e}")))?;
        let isa = Isa::chosen();
        tracing::info!(
            ?hp,
            capacity,
            isa = isa.name(),
            threads,
            "model loaded on the CPU"
        );
        Ok(Self {
            gguf,
            hp,
            variant,
            rope,
            rope_local,
            capacity,
            isa,
            pool: Arc::new(pool),
            weights,
            caches,
            s: Scratch::default(),
        })
    }

    pub fn hparams(&self) -> &HParams {
        &self.hp
    }

    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// What runs the model, for reports: "CPU (avx2, 2 threads)".
    pub fn describe(&self) -> String {
        format!("CPU ({}, {} threads)", self.isa.name(), self.threads())
    }

    /// Bytes of weights the pass reads (in the mapped file, in their GGUF encoding).
    pub fn weights_bytes(&self) -> u64 {
        self.weights.bytes()
    }

    pub fn kv_cache_bytes(&self) -> u64 {
        self.caches.iter().map(KvCache::bytes).sum()
    }

    /// Runs `token` at `pos` and returns the next token's logits.
    pub fn step(&mut self, token: u32, pos: u32) -> Result<Vec<f32>, ModelError> {
        self.check_room(pos, 1)?;
        let pool = self.pool.clone();
        pool.install(|| self.forward(&[token], pos, true))
            .map(|l| l.expect("asked for logits"))
    }

    /// Adds `tokens` at `pos..` to the KV cache, in batches of [`PREFILL_BATCH`].
    pub fn feed(&mut self, tokens: &[u32], pos: u32) -> Result<(), ModelError> {
        self.check_room(pos, tokens.len())?;
        let pool = self.pool.clone();
        let mut at = pos;
        for batch in tokens.chunks(PREFILL_BATCH as usize) {
            pool.install(|| self.forward(batch, at, false))?;
            at += batch.len() as u32;
        }
        Ok(())
    }

    fn check_room(&self, pos: u32, tokens: usize) -> Result<(), ModelError> {
        super::check_room(pos, tokens, self.capacity)
    }

    /// `tokens` at `pos..` through every layer; the logits of the last when `logits`.
    fn forward(
        &mut self,
        tokens: &[u32],
        pos: u32,
        logits: bool,
    ) -> Result<Option<Vec<f32>>, ModelError> {
        let n = tokens.len();
        let dim = self.hp.dim as usize;
        self.embed(tokens)?;
        for l in 0..self.weights.layers.len() {
            self.layer(l, pos as usize, n);
        }
        if !logits {
            return Ok(None);
        }
        let Self {
            gguf, weights, s, ..
        } = self;
        let file = gguf.file_bytes();
        s.h.clear();
        s.h.extend_from_slice(&s.x[(n - 1) * dim..]);
        ops::rms_norm(&mut s.h, &weights.output_norm, self.hp.rms_eps);
        s.acts.prepare(&s.h, 1, dim, &[weights.output.kind()]);
        let mut out = vec![0.0; self.hp.vocab as usize];
        product(self.isa, &weights.output.on(file), &s.acts, &mut out);
        Ok(Some(out))
    }

    /// The tokens' rows of the embedding matrix, dequantised and scaled, into `x`.
    fn embed(&mut self, tokens: &[u32]) -> Result<(), ModelError> {
        let dim = self.hp.dim as usize;
        let e = &self.weights.embedding;
        let m = e.on(self.gguf.file_bytes());
        let row_bytes = m.data.len() / e.rows;
        self.s.x.resize(tokens.len() * dim, 0.0);
        for (&t, x) in tokens.iter().zip(self.s.x.chunks_exact_mut(dim)) {
            if t >= self.hp.vocab {
                return Err(ModelError::BadToken {
                    token: t,
                    vocab: self.hp.vocab,
                });
            }
            let row = &m.data[t as usize * row_bytes..(t as usize + 1) * row_bytes];
            quant::dequantize(e.ty, row, x).map_err(|source| GgufError::Dequantize {
                tensor: "token_embd.weight".into(),
                source,
            })?;
            if self.variant.embedding_scale != 1.0 {
                x.iter_mut()
                    .for_each(|v| *v *= self.variant.embedding_scale);
            }
        }
        Ok(())
    }

    fn layer(&mut self, l: usize, pos: usize, n: usize) {
        let Self {
            gguf,
            hp,
            variant,
            rope,
            rope_local,
            isa,
            weights,
            caches,
            s,
            ..
        } = self;
        let isa = *isa;
        let file = gguf.file_bytes();
        let layer: &CpuLayer = &weights.layers[l];
        let (dim, hd) = (hp.dim as usize, hp.head_dim as usize);
        let eps = hp.rms_eps;
        let mul = |s_acts: &Acts, m: &MatrixAt, out: &mut Vec<f32>| {
            out.resize(n * m.rows, 0.0);
            product(isa, &m.on(file), s_acts, out);
        };

        // Attention.
        s.h.clear();
        s.h.extend_from_slice(&s.x);
        ops::rms_norm(&mut s.h, &layer.attn_norm, eps);
        let kinds = [layer.wq.kind(), layer.wk.kind(), layer.wv.kind()];
        s.acts.prepare(&s.h, n, dim, &kinds);
        s.q.resize(n * layer.wq.rows, 0.0);
        s.k.resize(n * layer.wk.rows, 0.0);
        s.v.resize(n * layer.wv.rows, 0.0);
        products(
            isa,
            &mut [
                (layer.wq.on(file), &mut s.q[..]),
                (layer.wk.on(file), &mut s.k[..]),
                (layer.wv.on(file), &mut s.v[..]),
            ],
            &s.acts,
        );
        for (bias, y) in [
            (&layer.q_bias, &mut s.q),
            (&layer.k_bias, &mut s.k),
            (&layer.v_bias, &mut s.v),
        ] {
            if let Some(b) = bias {
                for row in y.chunks_exact_mut(b.len()) {
                    row.iter_mut().zip(b).for_each(|(y, b)| *y += b);
                }
            }
        }
        if let Some(w) = &layer.q_norm {
            ops::rms_norm(&mut s.q, w, eps);
        }
        if let Some(w) = &layer.k_norm {
            ops::rms_norm(&mut s.k, w, eps);
        }
        let rope = if layer.local { &*rope_local } else { &*rope };
        let (q_row, kv_row) = ((hp.heads as usize) * hd, hp.kv_dim() as usize);
        for t in 0..n {
            rope.rotations((pos + t) as u32, &mut s.rotations);
            rope.rotate(&mut s.q[t * q_row..(t + 1) * q_row], hd, &s.rotations);
            rope.rotate(&mut s.k[t * kv_row..(t + 1) * kv_row], hd, &s.rotations);
        }
        let cache = &mut caches[l];
        cache.store(pos, &s.k, &s.v);
        let shape = AttentionShape {
            heads: hp.heads as usize,
            kv_heads: hp.kv_heads as usize,
            head_dim: hd,
            scale: variant.attention_scale,
            window: variant.window(layer.local).map(|w| w as usize),
        };
        s.att.resize(n * q_row, 0.0);
        ops::attention(shape, &s.q, cache, pos, n, &mut s.attention, &mut s.att);
        s.acts.prepare(&s.att, n, q_row, &[layer.wo.kind()]);
        mul(&s.acts, &layer.wo, &mut s.o);
        if let Some(w) = &layer.post_attn_norm {
            ops::rms_norm(&mut s.o, w, eps);
        }
        s.x.iter_mut().zip(&s.o).for_each(|(x, o)| *x += o);

        // Feed-forward.
        s.h.clear();
        s.h.extend_from_slice(&s.x);
        ops::rms_norm(&mut s.h, &layer.ffn_norm, eps);
        s.acts
            .prepare(&s.h, n, dim, &[layer.gate.kind(), layer.up.kind()]);
        s.gate.resize(n * layer.gate.rows, 0.0);
        s.up.resize(n * layer.up.rows, 0.0);
        products(
            isa,
            &mut [
                (layer.gate.on(file), &mut s.gate[..]),
                (layer.up.on(file), &mut s.up[..]),
            ],
            &s.acts,
        );
        ops::gated(variant.gate, &mut s.gate, &s.up);
        s.acts
            .prepare(&s.gate, n, hp.ffn as usize, &[layer.down.kind()]);
        mul(&s.acts, &layer.down, &mut s.o);
        if let Some(w) = &layer.post_ffn_norm {
            ops::rms_norm(&mut s.o, w, eps);
        }
        s.x.iter_mut().zip(&s.o).for_each(|(x, o)| *x += o);
    }
}

/// MemAvailable from /proc/meminfo, where the OS says (Linux).
fn available_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
