//! Timing bound dispatches on the device, for the choices made by measuring as a model loads
//! (`tile_tuning`, and decode's products in `model::tuning`).

use std::time::{Duration, Instant};

use super::kernel::{record_pass, Bound};
use super::{Gpu, GpuError};

/// Times each recorded pass is repeated in one submission: long enough that the submission's
/// own cost (tens of microseconds) does not decide.
const REPEATS: u32 = 8;
/// Timed submissions after a warm-up one; the median counts.
const SAMPLES: usize = 5;

/// The median wall time of one pass over `bound` on `gpu`.
pub fn median_pass(gpu: &Gpu, label: &str, bound: &[Bound]) -> Result<Duration, GpuError> {
    let run = || -> Result<Duration, GpuError> {
        let mut encoder = gpu
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
        for _ in 0..REPEATS {
            record_pass(&mut encoder, label, bound);
        }
        let start = Instant::now();
        gpu.queue().submit([encoder.finish()]);
        gpu.wait()?;
        Ok(start.elapsed() / REPEATS)
    };
    run()?;
    let mut samples = (0..SAMPLES).map(|_| run()).collect::<Result<Vec<_>, _>>()?;
    samples.sort();
    Ok(samples[SAMPLES / 2])
}
