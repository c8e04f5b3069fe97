//! The engine's speed on the two test models (from the model cache; `scripts/models` fetches
//! them): prefill and decode tokens per second, time to first token of an agent-sized prompt, and
//! memory — `itinero_engine::bench`, as `itinero-host models bench` runs it, without the llama.cpp
//! reference (which that command adds).
//!
//! `cargo bench -p itinero-engine --bench decode`; `ITINERO_DEVICE` (`auto`, `cpu`, `gpu`) chooses
//! the backend, `WGPU_BACKEND` / `WGPU_ADAPTER_NAME` the GPU, `BENCH_MODELS=smollm2` (or
//! `gemma3`) one model.

use itinero_engine::bench::{self, BenchOptions};
use itinero_engine::device::Device;
use itinero_engine::models::{GEMMA3_270M, SMOLLM2_135M};

fn main() {
    let device = Device::from_env().unwrap_or_else(|e| panic!("{e}"));
    let only = std::env::var("BENCH_MODELS").unwrap_or_default();
    for model in [SMOLLM2_135M, GEMMA3_270M] {
        if !only.is_empty() && !model.id.starts_with(only.as_str()) {
            continue;
        }
        let path = model.locate().unwrap_or_else(|e| panic!("{e}"));
        let opts = BenchOptions {
            device,
            ..BenchOptions::default()
        };
        let r = bench::run(&path, opts, &mut |what| eprintln!("{}: {what}", model.id))
            .unwrap_or_else(|e| panic!("{}: {e}", model.id));
        println!(
            "{} on {}: prefill ({} tokens) {:.1} tokens/s, decode {:.2} tokens/s; first token of a {}-token prompt {:.1} s, with {} cached {:.1} s; weights {} MB, KV cache {} MB, peak resident {} MB",
            model.id,
            r.device,
            opts.prompt,
            r.prefill_tokens_per_s,
            r.decode_tokens_per_s,
            opts.agent_prompt,
            r.agent_first_token_ms / 1e3,
            opts.agent_cached,
            r.agent_first_token_cached_ms / 1e3,
            r.weights_bytes >> 20,
            r.kv_cache_bytes >> 20,
            r.peak_rss_bytes.map_or(0, |b| b >> 20),
        );
    }
}
