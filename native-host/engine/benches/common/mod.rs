//! What the kernel benchmarks share: timing dispatches the way a forward pass submits them.

use std::time::{Duration, Instant};

use itinero_engine::gpu::Gpu;

/// The median of `samples` timings of `repeat` dispatches recorded by `record` in one submission,
/// each timed from submit to completion and divided by `repeat`, so submission overhead is
/// amortised as in a forward pass. One untimed sample first warms the pipelines.
pub fn median_per_dispatch(
    gpu: &Gpu,
    samples: usize,
    repeat: usize,
    record: impl Fn(&mut wgpu::CommandEncoder),
) -> Duration {
    let sample = || {
        let mut encoder = gpu
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
        for _ in 0..repeat {
            record(&mut encoder);
        }
        let start = Instant::now();
        gpu.queue().submit([encoder.finish()]);
        gpu.wait().unwrap();
        start.elapsed() / repeat as u32
    };
    sample();
    let mut times: Vec<Duration> = (0..samples).map(|_| sample()).collect();
    times.sort();
    times[times.len() / 2]
}
