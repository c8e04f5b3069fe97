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
    /// Candidates left out of the choice and why: a kernel on cooperative matrices the driver
    /// would not compile, or that failed its check against the portable one.
    pub left_out: Option<String>,
}

impl<T: Copy + Display> Choice<T> {
    /// A choice taken without timing.
    pub fn fixed(chosen: T) -> Self {
        Self {
            chosen,
            timings: Vec::new(),
            left_out: None,
        }
    }

    /// The fastest of `timings`; `None` when there are none.
    pub fn fastest(timings: Vec<(T, Duration)>) -> Option<Self> {
        let chosen = timings.iter().min_by_key(|(_, t)| *t)?.0;
        Some(Self {
            chosen,
            timings,
            left_out: None,
        })
    }

    /// The fastest of the timed candidates that `keep` keeps, with `why` the others were left
    /// out; `None` when it keeps none.
    pub fn without(&self, keep: impl Fn(&T) -> bool, why: String) -> Option<Self> {
        let chosen = self
            .timings
            .iter()
            .filter(|(c, _)| keep(c))
            .min_by_key(|(_, t)| *t)?
            .0;
        let left_out = match &self.left_out {
            Some(before) => format!("{before}; {why}"),
            None => why,
        };
        Some(Self {
            chosen,
            timings: self.timings.clone(),
            left_out: Some(left_out),
        })
    }

    /// One line for logs and `models bench`: the choice and, when timed, each candidate's time.
    pub fn describe(&self) -> String {
        let left_out = self
            .left_out
            .as_ref()
            .map(|why| format!("; left out: {why}"))
            .unwrap_or_default();
        if self.timings.is_empty() {
            return format!("{} (not timed{left_out})", self.chosen);
        }
        let each: Vec<String> = self
            .timings
            .iter()
            .map(|(c, t)| format!("{c}: {:.1} µs", t.as_secs_f64() * 1e6))
            .collect();
        format!("{} (timed: {}{left_out})", self.chosen, each.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_candidate_left_out_leaves_the_fastest_of_the_rest_and_says_why() {
        let ms = Duration::from_millis;
        let choice = Choice::fastest(vec![(8u32, ms(3)), (16, ms(1)), (4, ms(2))]).unwrap();
        assert_eq!(choice.chosen, 16);
        let kept = choice
            .without(|&c| c != 16, "16 failed its check".into())
            .unwrap();
        assert_eq!(kept.chosen, 4);
        assert_eq!(kept.timings, choice.timings);
        let line = kept.describe();
        assert!(line.starts_with("4 (timed: 8: 3000.0 µs"), "{line}");
        assert!(line.ends_with("; left out: 16 failed its check)"), "{line}");
        assert!(choice.without(|_| false, String::new()).is_none());
    }
}
