//! Decode speed of the llama forward pass on SmolLM2-135M Q4_1 (from the model cache;
//! `scripts/models` fetches it): tokens per second of one-token steps, with and without reading
//! the logits back.
//!
//! `cargo bench -p itinero-engine --bench decode` prints the median step time over `STEPS` steps
//! after a warm-up. Each step is one submission of ~17 dispatches per layer; on a fast GPU the
//! host's encoding of them, not the kernels, is what this measures. `WGPU_BACKEND` /
//! `WGPU_ADAPTER_NAME` choose the device.

use std::time::{Duration, Instant};

use itinero_engine::gguf::Gguf;
use itinero_engine::gpu::Gpu;
use itinero_engine::model::Llama;
use itinero_engine::models::SMOLLM2_135M;

const STEPS: u32 = 32;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let gpu = Gpu::new().unwrap_or_else(|e| panic!("{e}"));
    let path = SMOLLM2_135M.locate().unwrap_or_else(|e| panic!("{e}"));
    let start = Instant::now();
    let model = Llama::load(&gpu, Gguf::open(&path).unwrap(), 2 * STEPS + 8).unwrap();
    println!("device: {}", gpu.describe());
    println!(
        "model: {} loaded in {:.2?}",
        SMOLLM2_135M.file,
        start.elapsed()
    );
    let token = 1;
    model.step(&gpu, token, 0).unwrap();
    let mut pos = 1;
    let mut with_logits = Vec::new();
    for _ in 0..STEPS {
        let t = Instant::now();
        model.step(&gpu, token, pos).unwrap();
        with_logits.push(t.elapsed());
        pos += 1;
    }
    let mut without = Vec::new();
    for _ in 0..STEPS {
        let t = Instant::now();
        model.feed(&gpu, token, pos).unwrap();
        without.push(t.elapsed());
        pos += 1;
    }
    for (what, times) in [
        ("step (logits read back)", with_logits),
        ("feed (no output matrix)", without),
    ] {
        let m = median(times);
        println!(
            "{what:26} median {:9.2} ms  {:8.1} tokens/s",
            m.as_secs_f64() * 1e3,
            1.0 / m.as_secs_f64()
        );
    }
}
