//! Timing bound dispatches on the device, for the choices made by measuring as a model loads
//! (`tile_tuning`, `attention_tuning`, and decode's products in `model::tuning`).

use std::fmt::Display;
use std::time::{Duration, Instant};

use super::kernel::{record_pass, Bound};
use super::{Gpu, GpuError};

/// The most times a recorded pass is repeated in one submission, for short passes: enough that
/// the submission's own cost (tens of microseconds) does not decide.
const REPEATS: u32 = 8;
/// A submission this long needs no more repeats: the submission's cost is a few percent of it.
/// A long pass (a 3B model's products over a batch of 512 take milliseconds) is repeated less,
/// so that timing it does not add seconds to the model's load.
const ENOUGH: Duration = Duration::from_millis(2);
/// Timed submissions after a warm-up one; the median counts.
const SAMPLES: usize = 5;

/// The median wall time of one pass over `bound` on `gpu`.
pub fn median_pass(gpu: &Gpu, label: &str, bound: &[Bound]) -> Result<Duration, GpuError> {
    let run = |repeats: u32| -> Result<Duration, GpuError> {
        let mut encoder = gpu
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
        for _ in 0..repeats {
            record_pass(&mut encoder, label, bound);
        }
        let start = Instant::now();
        gpu.queue().submit([encoder.finish()]);
        gpu.wait()?;
        Ok(start.elapsed() / repeats)
    };
    let repeats = repeats_for(run(1)?);
    let mut samples = (0..SAMPLES)
        .map(|_| run(repeats))
        .collect::<Result<Vec<_>, _>>()?;
    samples.sort();
    Ok(samples[SAMPLES / 2])
}

/// Repeats of a pass that took `once` (warming up) for a submission of about [`ENOUGH`], from
/// 1 to [`REPEATS`].
fn repeats_for(once: Duration) -> u32 {
    let fit = ENOUGH.as_nanos() / once.as_nanos().max(1);
    u32::try_from(fit).unwrap_or(REPEATS).clamp(1, REPEATS)
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
    fn a_long_pass_is_repeated_less_a_short_one_up_to_eight_times() {
        let us = Duration::from_micros;
        assert_eq!(repeats_for(us(10)), REPEATS);
        assert_eq!(repeats_for(Duration::ZERO), REPEATS);
        assert_eq!(repeats_for(us(500)), 4);
        assert_eq!(repeats_for(us(1_500)), 1);
        assert_eq!(repeats_for(us(13_000)), 1);
    }

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
