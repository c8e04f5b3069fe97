//! Choosing the next token from the logits: greedy, or temperature with top-k and top-p, drawn
//! from a seeded generator so a run can be repeated; and stop sequences, found in the decoded
//! text and held back from a stream until they can no longer begin one.
//!
//! `allowed` lets a constraint (the action grammar) mask tokens before anything is chosen: a
//! masked token can never be drawn, whatever its logit.

use rand::Rng;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// How to choose; the default is greedy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampling {
    /// 0 (or less) chooses the most likely token.
    pub temperature: f32,
    /// Keep only the `top_k` most likely tokens (0: all).
    pub top_k: usize,
    /// Keep the most likely tokens whose probabilities add up to `top_p` (1: all).
    pub top_p: f32,
    pub seed: u64,
}

impl Default for Sampling {
    fn default() -> Self {
        Self {
            temperature: 0.0,
            top_k: 0,
            top_p: 1.0,
            seed: 0,
        }
    }
}

/// Draws tokens by a [`Sampling`]; the same seed and logits give the same tokens.
pub struct Sampler {
    sampling: Sampling,
    rng: ChaCha8Rng,
    /// Scratch: (token, logit or probability), reused across steps.
    candidates: Vec<(u32, f32)>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SampleError {
    #[error("every token is masked: the constraint allows nothing here")]
    NothingAllowed,
    #[error("the logits hold no finite value")]
    NoFiniteLogit,
}

impl Sampler {
    pub fn new(sampling: Sampling) -> Self {
        Self {
            sampling,
            rng: ChaCha8Rng::seed_from_u64(sampling.seed),
            candidates: Vec::new(),
        }
    }

    /// The next token among all of `logits`.
    pub fn sample(&mut self, logits: &[f32]) -> Result<u32, SampleError> {
        self.sample_allowed(logits, |_| true)
    }

    /// The next token among those `allowed` says yes to.
    pub fn sample_allowed(
        &mut self,
        logits: &[f32],
        allowed: impl Fn(u32) -> bool,
    ) -> Result<u32, SampleError> {
        self.candidates.clear();
        let mut any_allowed = false;
        for (id, &l) in logits.iter().enumerate() {
            let id = id as u32;
            if !allowed(id) {
                continue;
            }
            any_allowed = true;
            if l.is_finite() {
                self.candidates.push((id, l));
            }
        }
        if !any_allowed {
            return Err(SampleError::NothingAllowed);
        }
        if self.candidates.is_empty() {
            return Err(SampleError::NoFiniteLogit);
        }
        let s = self.sampling;
        // Most likely first; equal logits by id, so greedy is the lowest id among the best.
        let by_logit = |a: &(u32, f32), b: &(u32, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        if s.temperature <= 0.0 || s.top_k == 1 {
            let best = self
                .candidates
                .iter()
                .min_by(|a, b| by_logit(a, b))
                .expect("not empty");
            return Ok(best.0);
        }
        let keep = if s.top_k == 0 {
            self.candidates.len()
        } else {
            s.top_k.min(self.candidates.len())
        };
        if keep < self.candidates.len() {
            self.candidates.select_nth_unstable_by(keep - 1, by_logit);
            self.candidates.truncate(keep);
        }
        self.candidates.sort_unstable_by(by_logit);
        // Softmax at the temperature, in f64 so long tails do not vanish.
        let max = f64::from(self.candidates[0].1);
        let t = f64::from(s.temperature);
        let mut total = 0.0f64;
        let weights: Vec<f64> = self
            .candidates
            .iter()
            .map(|&(_, l)| {
                let w = ((f64::from(l) - max) / t).exp();
                total += w;
                w
            })
            .collect();
        // Top-p: the shortest most-likely prefix reaching `top_p` of the mass (at least one).
        let mut kept = weights.len();
        if s.top_p < 1.0 {
            let mut mass = 0.0;
            for (i, w) in weights.iter().enumerate() {
                mass += w / total;
                if mass >= f64::from(s.top_p) {
                    kept = i + 1;
                    break;
                }
            }
        }
        let kept_total: f64 = weights[..kept].iter().sum();
        let mut u = self.rng.random::<f64>() * kept_total;
        for (i, w) in weights[..kept].iter().enumerate() {
            if u < *w {
                return Ok(self.candidates[i].0);
            }
            u -= w;
        }
        Ok(self.candidates[kept - 1].0)
    }
}

/// Stop sequences of a generation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stops(pub Vec<String>);

impl Stops {
    /// Where the first stop sequence begins in `text`, if one occurs: the text ends there.
    pub fn find(&self, text: &str) -> Option<usize> {
        self.0
            .iter()
            .filter(|s| !s.is_empty())
            .filter_map(|s| text.find(s.as_str()))
            .min()
    }

    /// How many bytes at the end of `text` could still be the start of a stop sequence: a
    /// stream holds them back until the next token says.
    pub fn pending(&self, text: &str) -> usize {
        self.0
            .iter()
            .filter(|s| !s.is_empty())
            .flat_map(|s| {
                (1..s.len())
                    .rev()
                    .filter(|&n| s.is_char_boundary(n) && text.ends_with(&s[..n]))
                    .take(1)
            })
            .max()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOGITS: [f32; 6] = [1.0, 3.0, 2.5, -1.0, 3.0, 0.5];

    fn draws(sampling: Sampling, n: usize) -> Vec<u32> {
        let mut s = Sampler::new(sampling);
        (0..n).map(|_| s.sample(&LOGITS).unwrap()).collect()
    }

    fn counts(sampling: Sampling, n: usize) -> [usize; 6] {
        let mut c = [0; 6];
        for t in draws(sampling, n) {
            c[t as usize] += 1;
        }
        c
    }

    #[test]
    fn greedy_takes_the_best_and_the_lowest_id_on_a_tie() {
        assert_eq!(draws(Sampling::default(), 3), [1, 1, 1]);
        let top1 = Sampling {
            temperature: 1.0,
            top_k: 1,
            ..Default::default()
        };
        assert_eq!(draws(top1, 2), [1, 1]);
        let mut s = Sampler::new(Sampling::default());
        assert_eq!(s.sample_allowed(&LOGITS, |t| t != 1), Ok(4));
        assert_eq!(
            s.sample_allowed(&LOGITS, |_| false),
            Err(SampleError::NothingAllowed)
        );
        assert_eq!(s.sample(&[f32::NAN]), Err(SampleError::NoFiniteLogit));
    }

    #[test]
    fn a_seed_repeats_a_run_and_the_draws_follow_the_softmax() {
        let warm = Sampling {
            temperature: 1.0,
            seed: 42,
            ..Default::default()
        };
        assert_eq!(draws(warm, 50), draws(warm, 50));
        assert_ne!(draws(warm, 50), draws(Sampling { seed: 43, ..warm }, 50));
        let n = 20_000;
        let c = counts(warm, n);
        let z: f64 = LOGITS.iter().map(|l| f64::from(*l).exp()).sum();
        for (i, l) in LOGITS.iter().enumerate() {
            let want = f64::from(*l).exp() / z;
            let got = c[i] as f64 / n as f64;
            assert!((got - want).abs() < 0.015, "token {i}: {got} vs {want}");
        }
    }

    #[test]
    fn top_k_and_top_p_keep_only_the_likely_tokens() {
        let top3 = Sampling {
            temperature: 1.0,
            top_k: 3,
            seed: 1,
            ..Default::default()
        };
        let c = counts(top3, 5_000);
        assert_eq!([c[0], c[3], c[5]], [0, 0, 0], "{c:?}");
        assert!(c[1] > 0 && c[2] > 0 && c[4] > 0);
        // The two tokens at 3.0 hold about 0.64 of the mass; with 2.5 about 0.86.
        let nucleus = Sampling {
            temperature: 1.0,
            top_p: 0.6,
            seed: 1,
            ..Default::default()
        };
        let c = counts(nucleus, 5_000);
        assert_eq!([c[0], c[2], c[3], c[5]], [0, 0, 0, 0], "{c:?}");
        // A low temperature sharpens: the 2.5 token all but disappears.
        let cold = Sampling {
            temperature: 0.1,
            seed: 1,
            ..Default::default()
        };
        assert!(counts(cold, 2_000)[2] < 20);
    }

    #[test]
    fn stop_sequences_end_the_text_and_are_held_back_while_they_may_begin() {
        let stops = Stops(vec!["</action>".into(), "\n\n".into()]);
        assert_eq!(stops.find("{\"a\":1}</action> more"), Some(7));
        assert_eq!(stops.find("one\n\ntwo</action>"), Some(3));
        assert_eq!(stops.find("no stop"), None);
        assert_eq!(stops.pending("{\"a\":1}</act"), 5);
        assert_eq!(stops.pending("text\n"), 1);
        assert_eq!(stops.pending("text"), 0);
        assert_eq!(Stops(vec!["é!".into()]).pending("caf\u{e9}"), 2);
    }
}
