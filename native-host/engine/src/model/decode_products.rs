//! Decode's products: the shape of the matrix-vector kernels (how many invocations share a row),
//! where the products that stay on their own read x, and the normed products where decode
//! fuses.
//!
//! On a large model a decode step's device time is mostly these products, and what makes them
//! fastest differs between GPUs: fewer invocations a row give each more of its row and let more
//! rows share what a workgroup does once (staging x, working out the norm); more give a short row
//! more invocations. So on a GPU each shape of `MatVecConfig::candidates` is timed with the first
//! layer's products as the model loads, x staged and read from its binding, and the fastest kept.

use std::fmt::Write as _;
use std::time::Duration;

use crate::gate::Gate;
use crate::gpu::{
    timing, Bound, Destination, Gpu, GpuError, GpuMatrix, MatMul, MatVec, MatVecConfig,
    NormedInput, NormedMatVec, Output,
};
use crate::tensor_type::TensorType;

use super::weights::Layer;
use super::ModelError;

/// How decode multiplies by a matrix on its own.
pub(super) struct DecodeProducts {
    pub(super) matvec: MatVec,
    /// On CPU drivers with subgroups, the matrix-matrix kernel with a tile of one token, which
    /// shares the loads of x across lanes.
    matmul: Option<MatMul>,
    /// The shape and where the product reads x, and what timing measured where it was timed.
    pub(super) x_choice: String,
}

/// What the normed products are asked for, where decode fuses: the model's width and gate, and
/// whether they must compile (fusion asked for) or may be left out (chosen).
#[derive(Debug, Clone, Copy)]
pub(super) struct NormedAsk {
    pub(super) required: bool,
    pub(super) dim: u32,
    pub(super) gate: Gate,
}

/// One shape's kernels, and their times once timed.
struct Candidate {
    config: MatVecConfig,
    from_binding: MatVec,
    staged: Option<MatVec>,
    normed: Option<NormedMatVec>,
}

/// A candidate's times with the first layer's products.
struct Times {
    /// The plain products staging x, where they can, and reading it from its binding.
    staged: Option<Duration>,
    binding: Duration,
    /// The normed products, where decode fuses.
    normed: Option<Duration>,
}

impl Times {
    /// The layer's products with the plain ones in their faster form.
    fn best(&self) -> Duration {
        let plain = self.staged.map_or(self.binding, |s| s.min(self.binding));
        plain + self.normed.unwrap_or_default()
    }

    fn staged_wins(&self) -> bool {
        self.staged.is_some_and(|s| s <= self.binding)
    }
}

impl DecodeProducts {
    /// On CPU drivers with subgroups, the matrix-matrix kernel with a tile of one token, for
    /// [`Self::choose`]: whether decode's products are that decides whether decode fuses.
    pub(super) fn matmul_for(gpu: &Gpu, types: &[TensorType]) -> Result<Option<MatMul>, GpuError> {
        (gpu.chooses_cpu_kernels() && MatMul::can_share_x(gpu))
            .then(|| MatMul::new(gpu, types, 1))
            .transpose()
    }

    /// Products for matrices of `types` whose rows have at most `max_cols` columns, with the
    /// normed products where `normed` asks for them, in the fastest of `shapes`: where there is
    /// a choice (several shapes, or x staged or not), each timed with `layer`'s products.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn choose(
        gpu: &Gpu,
        types: &[TensorType],
        max_cols: u32,
        layer: &Layer,
        shapes: Vec<MatVecConfig>,
        matmul: Option<MatMul>,
        normed: Option<NormedAsk>,
    ) -> Result<(Self, Option<NormedMatVec>), ModelError> {
        // Unfused with the matrix-matrix kernel, decode binds no matrix-vector product: the
        // first shape is kept for form's sake, untimed.
        let unused = matmul.is_some() && normed.is_none();
        let shapes = if unused { &shapes[..1] } else { &shapes[..] };
        let mut candidates = shapes
            .iter()
            .map(|&config| Candidate::build(gpu, types, max_cols, config, normed))
            .collect::<Result<Vec<_>, _>>()?;
        if unused || (candidates.len() == 1 && candidates[0].staged.is_none()) {
            let only = candidates.remove(0);
            let x_choice = if unused {
                "the matrix-matrix kernel, a token a tile, its loads of x shared across a \
                 subgroup's lanes (not timed)"
                    .to_owned()
            } else {
                let shape = shape_words(only.config);
                format!("{shape}, x read from its binding (not timed)")
            };
            let products = Self {
                matvec: only.from_binding,
                matmul,
                x_choice,
            };
            return Ok((products, only.normed));
        }
        let dim = normed.map_or(max_cols, |ask| ask.dim);
        let timer = Timer::new(gpu, layer, max_cols, dim);
        let mut timed = Vec::new();
        for candidate in candidates {
            let times = timer.time(gpu, &candidate, layer)?;
            timed.push((candidate, times));
        }
        let timings = describe(&timed);
        let fastest = (0..timed.len())
            .min_by_key(|&i| timed[i].1.best())
            .ok_or_else(|| GpuError::Shape {
                name: "decode tuning".into(),
                reason: "no shape to time".into(),
            })?;
        let (chosen, times) = timed.swap_remove(fastest);
        let (matvec, x) = match (chosen.staged, times.staged_wins()) {
            (Some(staged), true) => (staged, "x staged in workgroup memory"),
            _ => (chosen.from_binding, "x read from its binding"),
        };
        let x_choice = format!(
            "{}, {x} (timed, the first layer's products: {timings})",
            shape_words(chosen.config)
        );
        tracing::info!(decode = %x_choice, "decode's products");
        let products = Self {
            matvec,
            matmul,
            x_choice,
        };
        Ok((products, chosen.normed))
    }

    /// Binds `y = m x` (or `y += m x`) for the one token of `step`.
    pub(super) fn bind(
        &self,
        gpu: &Gpu,
        m: &GpuMatrix,
        x: &wgpu::Buffer,
        y: &wgpu::Buffer,
        step: &wgpu::Buffer,
        out: Output,
    ) -> Result<Vec<Bound>, GpuError> {
        match &self.matmul {
            Some(mm) => mm.bind_output(gpu, m, x, y, step, 1, out),
            None => self.matvec.bind_output(gpu, m, x, y, out),
        }
    }
}

/// Each timed shape's times, in words, for the `x:` line.
fn describe(timed: &[(Candidate, Times)]) -> String {
    let micros = |d: Duration| format!("{:.1} µs", d.as_secs_f64() * 1e6);
    let each: Vec<String> = timed
        .iter()
        .map(|(c, t)| {
            let mut line = format!("{} a row: ", c.config.threads_per_row);
            if let Some(s) = t.staged {
                let _ = write!(line, "staged {}, ", micros(s));
            }
            let _ = write!(line, "from its binding {}", micros(t.binding));
            if let Some(n) = t.normed {
                let _ = write!(line, ", normed {}", micros(n));
            }
            line
        })
        .collect();
    each.join("; ")
}

/// How `config` shares out a row, in words.
fn shape_words(config: MatVecConfig) -> String {
    match config.threads_per_row {
        1 => "a row an invocation".into(),
        n => format!("{n} invocations a row"),
    }
}

impl Candidate {
    /// `config`'s kernels: the plain products from x's binding, staging it where they can, and
    /// the normed products where `normed` asks for them.
    fn build(
        gpu: &Gpu,
        types: &[TensorType],
        max_cols: u32,
        config: MatVecConfig,
        normed: Option<NormedAsk>,
    ) -> Result<Self, ModelError> {
        let from_binding = MatVec::with_config(gpu, types, config)?;
        let staged = MatVec::staging_for(gpu, config, max_cols)
            .map(|cols| MatVec::with_x_staged(gpu, types, config, cols))
            .transpose()?;
        let normed = match normed {
            Some(ask) => normed_matvec(gpu, ask, types, config)?,
            None => None,
        };
        Ok(Self {
            config,
            from_binding,
            staged,
            normed,
        })
    }
}

/// Decode's norm folded into the products after it. Required it must compile; otherwise the
/// norm stays separate where the device's workgroup memory cannot hold a hidden state.
fn normed_matvec(
    gpu: &Gpu,
    ask: NormedAsk,
    types: &[TensorType],
    config: MatVecConfig,
) -> Result<Option<NormedMatVec>, ModelError> {
    let normed = NormedMatVec::new(gpu, types, ask.dim, ask.gate, config);
    Ok(match (ask.required, normed) {
        (false, Err(e)) => {
            tracing::info!(error = %e, "decode keeps a separate norm");
            None
        }
        (_, normed) => Some(normed?),
    })
}

/// Scratch buffers the first layer's products are timed over.
struct Timer {
    x: wgpu::Buffer,
    norm: wgpu::Buffer,
    /// Where the products write: one buffer per output of a normed product, as wide as the
    /// layer's widest.
    y: [wgpu::Buffer; 3],
}

impl Timer {
    fn new(gpu: &Gpu, layer: &Layer, max_cols: u32, dim: u32) -> Self {
        let rows = [&layer.wq, &layer.wk, &layer.wv, &layer.wo]
            .into_iter()
            .chain([&layer.gate, &layer.up, &layer.down])
            .map(|m| m.rows())
            .fold(max_cols, u32::max) as usize;
        Self {
            x: gpu.storage_f32("decode tuning x", max_cols as usize),
            norm: gpu.storage_f32("decode tuning norm", dim as usize),
            y: std::array::from_fn(|_| gpu.storage_f32("decode tuning y", rows)),
        }
    }

    /// `candidate`'s times with `layer`'s products as decode binds them.
    fn time(&self, gpu: &Gpu, candidate: &Candidate, layer: &Layer) -> Result<Times, GpuError> {
        let plain = |kernels: &MatVec| -> Result<Duration, GpuError> {
            let mut bound = Vec::new();
            for m in [&layer.wo, &layer.down] {
                bound.extend(kernels.bind(gpu, m, &self.x, &self.y[0])?);
            }
            timing::median_pass(gpu, "decode tuning", &bound)
        };
        let staged = candidate.staged.as_ref().map(plain).transpose()?;
        let binding = plain(&candidate.from_binding)?;
        let normed = match &candidate.normed {
            Some(nm) => {
                let bound = self.bind_normed(gpu, nm, layer)?;
                Some(timing::median_pass(gpu, "decode tuning", &bound)?)
            }
            None => None,
        };
        Ok(Times {
            staged,
            binding,
            normed,
        })
    }

    /// `layer`'s normed products as fused decode binds them: q, k and v (joined where the layer
    /// joins them), and gate and up with the activation.
    fn bind_normed(
        &self,
        gpu: &Gpu,
        nm: &NormedMatVec,
        layer: &Layer,
    ) -> Result<Vec<Bound>, GpuError> {
        let input = NormedInput {
            x: &self.x,
            norm: &self.norm,
            eps: 1e-6,
        };
        let to = |i: usize, m: &GpuMatrix| Destination::new(&self.y[i], m.rows());
        let mut bound = Vec::new();
        match &layer.qkv {
            Some(qkv) => {
                let to = [to(0, &layer.wq), to(1, &layer.wk), to(2, &layer.wv)];
                bound.extend(nm.bind_split(gpu, qkv, input, &to, None)?);
            }
            None => {
                for m in [&layer.wq, &layer.wk, &layer.wv] {
                    bound.extend(nm.bind_split(gpu, m, input, &[to(0, m)], None)?);
                }
            }
        }
        match &layer.gate_up {
            Some(gate_up) => bound.extend(nm.bind_gated(gpu, gate_up, input, &self.y[0])?),
            None => {
                for m in [&layer.gate, &layer.up] {
                    bound.extend(nm.bind_split(gpu, m, input, &[to(0, m)], None)?);
                }
            }
        }
        Ok(bound)
    }
}
