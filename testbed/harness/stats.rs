//! Summaries for benchmarks: every benchmark reports the same percentiles the same way.

/// Nearest-rank percentile `p` (0–100) of already sorted samples.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

/// The samples in ascending order.
pub fn sorted(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(|a, b| a.total_cmp(b));
    v
}

/// A median with a distribution-free 95 % confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub median: f64,
    pub low: f64,
    pub high: f64,
}

/// The median of the ratios `a[i] / b[i]` of runs made side by side, with its 95 % interval.
///
/// Two walks timed in turn share whatever the machine was doing at that moment; the
/// ratio of each pair cancels that drift, where a ratio of two medians taken apart
/// keeps it. The interval is the pair of order statistics a sign test gives, so it
/// assumes nothing about how the times are spread.
pub fn paired_ratio(a: &[f64], b: &[f64]) -> Interval {
    let ratios = sorted(a.iter().zip(b).map(|(x, y)| x / y).collect());
    let n = ratios.len();
    let k = median_rank_bound(n);
    Interval {
        median: percentile(&ratios, 50.0),
        low: ratios[k - 1],
        high: ratios[n - k],
    }
}

/// The largest 1-based rank k for which the k-th and (n+1-k)-th of n sorted samples
/// bound the median with at least 95 % confidence: P(Bin(n, ½) < k) ≤ 2.5 %.
fn median_rank_bound(n: usize) -> usize {
    let mut pmf = 0.5f64.powi(n as i32);
    let mut cdf = 0.0;
    let mut k = 0;
    for j in 0..n {
        cdf += pmf;
        if cdf > 0.025 {
            break;
        }
        k = j + 1;
        pmf *= (n - j) as f64 / (j + 1) as f64;
    }
    k.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_bounds_match_the_sign_test_tables() {
        // Published ranks for a 95 % interval of the median: n=10 → 2nd and 9th, n=30 → 10th and 21st.
        assert_eq!(median_rank_bound(10), 2);
        assert_eq!(median_rank_bound(30), 10);
        assert_eq!(median_rank_bound(5), 1);
    }

    #[test]
    fn paired_ratios_cancel_a_shared_drift() {
        // Both walks slow down together; each pair still says the first takes twice as long.
        let b: Vec<f64> = (1..=30).map(f64::from).collect();
        let a: Vec<f64> = b.iter().map(|x| x * 2.0).collect();
        let r = paired_ratio(&a, &b);
        assert_eq!((r.median, r.low, r.high), (2.0, 2.0, 2.0));
        let mixed: Vec<f64> = b
            .iter()
            .enumerate()
            .map(|(i, x)| x * (1.0 + i as f64 / 100.0))
            .collect();
        let r = paired_ratio(&mixed, &b);
        assert!(r.low < r.median && r.median < r.high, "{r:?}");
        assert!(
            (r.low - 1.09).abs() < 1e-9 && (r.high - 1.20).abs() < 1e-9,
            "{r:?}"
        );
    }
}
