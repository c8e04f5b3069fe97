//! Where a forward pass's device time goes: a GPU timestamp after each dispatch and copy, read
//! back and summed per kernel. Guessing from CPU wall time cannot tell a slow kernel from
//! per-dispatch overhead or a slow read-back; `itinero-host models bench --profile` prints this.

use std::collections::BTreeMap;

use wgpu::Features;

use super::{Bound, Gpu, GpuError};

/// What timestamps between dispatches need.
pub const FEATURES: Features = Features::TIMESTAMP_QUERY
    .union(Features::TIMESTAMP_QUERY_INSIDE_ENCODERS)
    .union(Features::TIMESTAMP_QUERY_INSIDE_PASSES);

/// The most timestamps one profile holds (wgpu's limit for a query set).
const CAPACITY: u32 = wgpu::QUERY_SET_MAX_QUERIES;

/// Timestamps recorded into one command encoder: the first when recording starts, then one after
/// each dispatch or copy, each labelled with what ran since the one before.
pub struct Profiler {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    /// `spans[i]` ran between timestamps `i` and `i + 1`.
    spans: Vec<String>,
}

/// Device time of one kind of dispatch within a profile.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct KernelTime {
    /// The kernel and its workgroup grid ("q4_1 matrix-vector 72×1×1"): one matrix shape apart
    /// from another.
    pub what: String,
    pub count: u32,
    pub total_us: f64,
}

impl Profiler {
    /// Starts a profile in `encoder`, or says the adapter cannot write timestamps in passes.
    pub fn start(gpu: &Gpu, encoder: &mut wgpu::CommandEncoder) -> Result<Self, GpuError> {
        if !gpu.features().contains(FEATURES) {
            return Err(GpuError::Unsupported {
                adapter: gpu.describe(),
                what: "timestamps inside compute passes".into(),
            });
        }
        let set = gpu.device().create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("profile"),
            ty: wgpu::QueryType::Timestamp,
            count: CAPACITY,
        });
        let resolve = gpu.device().create_buffer(&wgpu::BufferDescriptor {
            label: Some("profile"),
            size: u64::from(CAPACITY) * 8,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        encoder.write_timestamp(&set, 0);
        Ok(Self {
            set,
            resolve,
            spans: Vec::new(),
        })
    }

    /// The index of the next timestamp, or `None` when the set is full (the rest goes untimed).
    fn next(&mut self, what: String) -> Option<u32> {
        let index = self.spans.len() as u32 + 1;
        (index < CAPACITY).then(|| {
            self.spans.push(what);
            index
        })
    }

    /// Records `dispatches` in one compute pass, as [`super::record_pass`] does, with a
    /// timestamp after each.
    pub fn record_pass(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        label: &str,
        dispatches: &[Bound],
    ) {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(label),
            timestamp_writes: None,
        });
        for d in dispatches {
            d.record(&mut pass);
            let (x, y, z) = d.groups();
            if let Some(i) = self.next(format!("{} {x}×{y}×{z}", d.name())) {
                pass.write_timestamp(&self.set, i);
            }
        }
    }

    /// Submits `encoder` with the timestamps resolved, waits, and sums the spans per label,
    /// longest first.
    pub fn finish(
        self,
        gpu: &Gpu,
        mut encoder: wgpu::CommandEncoder,
    ) -> Result<Vec<KernelTime>, GpuError> {
        let n = self.spans.len() as u32 + 1;
        encoder.resolve_query_set(&self.set, 0..n, &self.resolve, 0);
        gpu.queue().submit([encoder.finish()]);
        let ticks: Vec<u64> = gpu.read(&self.resolve, n as usize)?;
        let ns_per_tick = f64::from(gpu.queue().get_timestamp_period());
        Ok(summarise(&self.spans, &ticks, ns_per_tick))
    }
}

/// Per label: how many spans and their summed duration, longest total first.
fn summarise(spans: &[String], ticks: &[u64], ns_per_tick: f64) -> Vec<KernelTime> {
    let mut by: BTreeMap<&str, (u32, f64)> = BTreeMap::new();
    for (what, w) in spans.iter().zip(ticks.windows(2)) {
        let e = by.entry(what).or_default();
        e.0 += 1;
        e.1 += w[1].saturating_sub(w[0]) as f64 * ns_per_tick / 1000.0;
    }
    let mut out: Vec<KernelTime> = by
        .into_iter()
        .map(|(what, (count, total_us))| KernelTime {
            what: what.to_owned(),
            count,
            total_us,
        })
        .collect();
    out.sort_by(|a, b| b.total_us.total_cmp(&a.total_us));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_are_summed_per_label_longest_first() {
        let spans = ["a", "b", "a", "copy"].map(String::from);
        let ticks = [0, 10, 40, 45, 46];
        let got = summarise(&spans, &ticks, 1000.0);
        let row = |w: &str, c, t| KernelTime {
            what: w.into(),
            count: c,
            total_us: t,
        };
        assert_eq!(
            got,
            vec![row("b", 1, 30.0), row("a", 2, 15.0), row("copy", 1, 1.0)]
        );
    }
}
