//! Timing bound dispatches on the device, for the choices made by measuring as a model loads
//! (`tile_tuning`, `attention_tuning`, and decode's products in `model::tuning`).

use std::fmt::Display;
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

/// A choice among candidates, and each candidate's median pass where they were timed (empty
/// where the choice was taken without timing).
#[derive(Debug, Clone)]
pub struct Choice<T> {
    pub chosen: T,
    pub timings: Vec<(T, Duration)>,
}

impl<T: Copy + Display> Choice<T> {
    /// A choice taken without timing.
    pub fn fixed(chosen: T) -> Self {
        Self {
            chosen,
            timings: Vec::new(),
        }
    }

    /// The fastest of `timings`; `None` when there are none.
    pub fn fastest(timings: Vec<(T, Duration)>) -> Option<Self> {
        let chosen = timings.iter().min_by_key(|(_, t)| *t)?.0;
        Some(Self { chosen, timings })
    }

    /// One line for logs and `models bench`: the choice and, when timed, each candidate's time.
    pub fn describe(&self) -> String {
        if self.timings.is_empty() {
            return format!("{} (not timed)", self.chosen);
        }
        let each: Vec<String> = self
            .timings
            .iter()
            .map(|(c, t)| format!("{c}: {:.1} µs", t.as_secs_f64() * 1e6))
            .collect();
        format!("{} (timed: {})", self.chosen, each.join(", "))
    }
}
