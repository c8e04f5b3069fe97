//! The engine's speed on a model, as `itinero-host models bench` and `cargo bench --bench decode`
//! report it: prompt prefill and decode in tokens per second (the shapes llama.cpp's
//! `llama-bench` measures as pp512 and tg64, so the two compare), the time to the first token of
//! an agent-sized prompt with and without its start cached, and memory.
//!
//! Token ids are a fixed run of ordinary ids: what they are does not change the cost.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::device::{Device, LoadedModel};
use crate::generate::Decoder;
use crate::gguf::Gguf;
use crate::gpu::KernelTime;
use crate::model::{
    AttentionTuning, DecodeShape, Fusion, GpuTuning, ModelError, PrefillBatch, PrefillTile,
    SliceMerge,
};

/// What to measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BenchOptions {
    /// Tokens of the prefill prompt.
    pub prompt: u32,
    /// Decode steps timed.
    pub decode: u32,
    /// Runs of the prefill (the median is reported).
    pub runs: u32,
    /// Tokens of the agent-sized prompt, and how many of them are cached for the second time
    /// to first token (a later step of a task, whose prompt shares its start with the last).
    pub agent_prompt: u32,
    pub agent_cached: u32,
    /// Also time each kernel of a decode step and of a prefill batch on the device (GPU only).
    pub profile: bool,
    /// Where the model runs.
    pub device: Device,
    /// How decode is bound.
    pub fusion: Fusion,
    /// Prefill's tile of tokens.
    pub tile: PrefillTile,
    /// Attention's kernels for a prefill batch and for decode.
    pub prefill_attention: AttentionTuning,
    pub decode_attention: AttentionTuning,
    /// Where decode's attention slices are merged.
    pub slice_merge: SliceMerge,
    /// The shape of decode's products.
    pub decode_shape: DecodeShape,
    /// Tokens a prefill batch holds.
    pub prefill_batch: PrefillBatch,
}

impl Default for BenchOptions {
    fn default() -> Self {
        Self {
            prompt: 512,
            decode: 64,
            runs: 3,
            agent_prompt: 1500,
            agent_cached: 1200,
            profile: false,
            device: Device::Auto,
            fusion: Fusion::Auto,
            tile: PrefillTile::Auto,
            prefill_attention: AttentionTuning::Auto,
            decode_attention: AttentionTuning::Auto,
            slice_merge: SliceMerge::Auto,
            decode_shape: DecodeShape::Auto,
            prefill_batch: PrefillBatch::Auto,
        }
    }
}

/// The figures of one run of [`run`].
#[derive(Debug, Clone, serde::Serialize)]
pub struct BenchReport {
    pub device: String,
    pub load_ms: f64,
    /// Weights as uploaded (in their GGUF encoding).
    pub weights_bytes: u64,
    pub kv_cache_bytes: u64,
    pub kv_positions: u32,
    /// The KV cache's element type.
    pub kv_cache_type: &'static str,
    /// On a GPU, what a step records.
    pub gpu: Option<GpuWork>,
    /// Median prompt tokens per second over the runs.
    pub prefill_tokens_per_s: f64,
    /// One over the median decode step (logits read back each step).
    pub decode_tokens_per_s: f64,
    /// A fresh agent-sized prompt to its first token's logits.
    pub agent_first_token_ms: f64,
    /// The same with `agent_cached` of its tokens already in the cache.
    pub agent_first_token_cached_ms: f64,
    /// The process's peak resident memory, where the OS says (Linux).
    pub peak_rss_bytes: Option<u64>,
    /// Device time per kernel of one decode step at the prompt's end, when asked for.
    pub decode_profile: Option<Vec<KernelTime>>,
    /// The same for one prefill batch of up to the model's batch of tokens.
    pub prefill_profile: Option<Vec<KernelTime>>,
}

/// What a step records on a GPU.
#[derive(Debug, Clone, serde::Serialize)]
pub struct GpuWork {
    /// Dispatches recorded for one decode step, the logits' included.
    pub decode_dispatches: usize,
    /// The same for one prefill batch.
    pub prefill_dispatches: usize,
    /// The most tokens a prefill batch holds.
    pub prefill_batch: u32,
    /// Prefill's tile of tokens, and each candidate's time where it was timed.
    pub prefill_tile: String,
    /// Decode's products' shape and where they read x, and each way's time where timed.
    pub decode_x: String,
    /// Attention's kernel for a prefill batch and for decode, and each candidate's time where
    /// it was timed.
    pub prefill_attention: String,
    pub decode_attention: String,
    /// Where decode's attention slices are merged, and each way's time where timed.
    pub decode_merge: String,
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ids(n: u32, from: u32) -> Vec<u32> {
    (0..n).map(|i| 1000 + (from + i) % 5000).collect()
}

/// Measures the model at `path` on the device `opts` names; `progress` hears what is being
/// measured.
pub fn run(
    path: &Path,
    opts: BenchOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<BenchReport, ModelError> {
    let gguf = Gguf::open(path)?;
    let capacity = (opts.prompt + opts.decode + 1).max(opts.agent_prompt + 1);
    progress("loading the model");
    let start = Instant::now();
    let tuning = GpuTuning {
        fusion: opts.fusion,
        tile: opts.tile,
        prefill_attention: opts.prefill_attention,
        decode_attention: opts.decode_attention,
        slice_merge: opts.slice_merge,
        decode_shape: opts.decode_shape,
        prefill_batch: opts.prefill_batch,
    };
    let mut model = LoadedModel::load_tuned(opts.device, gguf, capacity, tuning)?;
    let load = start.elapsed();
    let positions = model.capacity();
    if positions < capacity {
        return Err(ModelError::Unsupported(format!(
            "the model's context holds {positions} positions; these settings need {capacity}"
        )));
    }
    // The first use of each kernel compiles it on some drivers: not part of any figure.
    progress("warming up");
    model.feed(&ids(16, 0), 0)?;
    model.step(1000, 16)?;

    progress(&format!(
        "prefill: {} runs of a {}-token prompt",
        opts.runs, opts.prompt
    ));
    let prompt = ids(opts.prompt, 0);
    let mut prefill = Vec::new();
    for _ in 0..opts.runs.max(1) {
        let t = Instant::now();
        model.feed(&prompt, 0)?;
        prefill.push(t.elapsed());
    }
    progress(&format!("decode: {} steps", opts.decode));
    let mut steps = Vec::new();
    for (pos, token) in (opts.prompt..).zip(ids(opts.decode.max(1), opts.prompt)) {
        let t = Instant::now();
        model.step(token, pos)?;
        steps.push(t.elapsed());
    }
    let (decode_profile, prefill_profile) = match model.on_gpu() {
        Some((gpu, m)) if opts.profile => {
            progress("profile: each kernel of a decode step and of a prefill batch");
            let decode = m.profile(gpu, &ids(1, 0), opts.prompt)?;
            let batch = opts.prompt.min(m.prefill_batch());
            let prefill = m.profile(gpu, &ids(batch, 0), 0)?;
            (Some(decode), Some(prefill))
        }
        _ => (None, None),
    };
    progress(&format!(
        "time to first token: a {}-token prompt, then with {} of it cached",
        opts.agent_prompt, opts.agent_cached
    ));
    let agent = ids(opts.agent_prompt, 7);
    let (&last, head) = agent
        .split_last()
        .expect("agent prompt of at least one token");
    let t = Instant::now();
    model.feed(head, 0)?;
    model.step(last, head.len() as u32)?;
    let fresh = t.elapsed();
    let cached = (opts.agent_cached as usize).min(head.len());
    let t = Instant::now();
    model.feed(&head[cached..], cached as u32)?;
    model.step(last, head.len() as u32)?;
    let warm = t.elapsed();

    let per_s = |d: Duration, n: u32| f64::from(n) / d.as_secs_f64();
    let gpu = model.on_gpu().map(|(_, m)| GpuWork {
        decode_dispatches: m.decode_dispatches(),
        prefill_dispatches: m.prefill_dispatches(),
        prefill_batch: m.prefill_batch(),
        prefill_tile: m.prefill_tile().describe(),
        decode_x: m.decode_x().to_owned(),
        prefill_attention: m.prefill_attention().describe(),
        decode_attention: format!(
            "{}{}",
            m.decode_attention().describe(),
            if m.decode_rotates() {
                "; it rotates the step's query and key and stores them itself (no RoPE dispatch)"
            } else {
                ""
            }
        ),
        decode_merge: m.decode_merge().describe(),
    });
    Ok(BenchReport {
        device: model.describe(),
        load_ms: load.as_secs_f64() * 1e3,
        weights_bytes: model.weights_bytes(),
        kv_cache_bytes: model.kv_cache_bytes(),
        kv_positions: positions,
        kv_cache_type: "f16",
        gpu,
        prefill_tokens_per_s: per_s(median(prefill), opts.prompt),
        decode_tokens_per_s: per_s(median(steps), 1),
        agent_first_token_ms: fresh.as_secs_f64() * 1e3,
        agent_first_token_cached_ms: warm.as_secs_f64() * 1e3,
        peak_rss_bytes: peak_rss(),
        decode_profile,
        prefill_profile,
    })
}

/// VmHWM from /proc/self/status.
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
