//! Rotary position embedding's settings, as a GGUF gives them (`{arch}.rope.*`), and the
//! rotation itself as ggml computes it, which the CPU pass applies and the WGSL kernels
//! (`kernels/rope_angle.wgsl`) reproduce.

use crate::gguf::{Architecture, Gguf, GgufError};

/// Which elements form a rotated pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RopeOrder {
    /// (x[2i], x[2i+1]): llama GGUFs, whose converter permuted the q/k weights to suit it.
    Normal,
    /// (x[i], x[i + n_dims/2]): Qwen2, Gemma 3 (Hugging Face's `rotate_half`).
    Neox,
}

impl RopeOrder {
    /// llama.cpp's `llama_model_rope_type` for the supported architectures.
    pub fn for_architecture(arch: Architecture) -> Self {
        match arch {
            Architecture::Llama => RopeOrder::Normal,
            Architecture::Qwen2 | Architecture::Gemma3 => RopeOrder::Neox,
        }
    }
}

/// The rotation's parameters, as ggml_rope_ext takes them.
#[derive(Debug, Clone, PartialEq)]
pub struct RopeParams {
    /// Rotated dimensions of each head (the rest pass through).
    pub n_dims: u32,
    pub order: RopeOrder,
    pub freq_base: f32,
    /// 1 / the linear or YaRN scaling factor.
    pub freq_scale: f32,
    /// YaRN's extrapolation mix (0: plain or linear scaling).
    pub ext_factor: f32,
    pub attn_factor: f32,
    /// YaRN's correction range in rotated pairs.
    pub corr_dims: [f32; 2],
    /// Per-pair frequency divisors (Llama 3.x's `rope_freqs.weight`); `None` means all 1.
    pub freq_factors: Option<Vec<f32>>,
}

/// Why a GGUF's RoPE settings cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum RopeError {
    #[error(transparent)]
    Metadata(#[from] GgufError),
    #[error("RoPE scaling {0:?} is not supported (supported: none, linear, yarn)")]
    UnknownScaling(String),
    #[error("rope_freqs.weight has {got} values, {expected} expected (one per rotated pair)")]
    FreqFactors { got: usize, expected: usize },
}

impl RopeParams {
    /// The settings of the model's (global-attention) layers, from `{arch}.rope.*`, the head
    /// size, and `rope_freqs.weight` when present — the keys llama.cpp reads.
    pub fn from_gguf(g: &Gguf) -> Result<Self, RopeError> {
        let arch = g.architecture()?;
        let m = g.metadata();
        let key = |k: &str| format!("{}.{k}", arch.name());
        let heads = m.u32(&key("attention.head_count"))?;
        let head_dim = match m.opt_u32(&key("attention.key_length"))? {
            Some(d) => d,
            None => m.u32(&key("embedding_length"))? / heads.max(1),
        };
        let n_dims = m.opt_u32(&key("rope.dimension_count"))?.unwrap_or(head_dim);
        let freq_base = m.opt_f32(&key("rope.freq_base"))?.unwrap_or(10_000.0);
        let scaling = m.opt_str(&key("rope.scaling.type"))?.unwrap_or("none");
        let factor = m
            .opt_f32(&key("rope.scaling.factor"))?
            .filter(|f| *f > 0.0)
            .unwrap_or(1.0);
        let mut params = Self {
            n_dims,
            order: RopeOrder::for_architecture(arch),
            freq_base,
            freq_scale: 1.0,
            ext_factor: 0.0,
            attn_factor: m.opt_f32(&key("rope.scaling.attn_factor"))?.unwrap_or(1.0),
            corr_dims: [0.0, 0.0],
            freq_factors: None,
        };
        match scaling {
            "none" => {}
            "linear" => params.freq_scale = 1.0 / factor,
            "yarn" => {
                params.freq_scale = 1.0 / factor;
                params.ext_factor = 1.0;
                let n_ctx_orig = match m.opt_u32(&key("rope.scaling.original_context_length"))? {
                    Some(n) => n,
                    None => m.u32(&key("context_length"))?,
                };
                params.corr_dims = yarn_corr_dims(n_dims, n_ctx_orig, freq_base, 32.0, 1.0);
            }
            other => return Err(RopeError::UnknownScaling(other.to_owned())),
        }
        if let Ok(t) = g.tensor("rope_freqs.weight") {
            let factors = t.to_f32()?;
            if factors.len() != (n_dims / 2) as usize {
                return Err(RopeError::FreqFactors {
                    got: factors.len(),
                    expected: (n_dims / 2) as usize,
                });
            }
            params.freq_factors = Some(factors);
        }
        Ok(params)
    }

    /// Gemma 3's sliding-window layers: base 10 000 and no scaling whatever the file says for the
    /// global layers (llama.cpp's `rope_freq_base_train_swa`).
    pub fn gemma3_sliding_window(&self) -> Self {
        Self {
            freq_base: 10_000.0,
            freq_scale: 1.0,
            ext_factor: 0.0,
            attn_factor: 1.0,
            corr_dims: [0.0, 0.0],
            freq_factors: None,
            ..self.clone()
        }
    }
}

/// ggml_rope_yarn_corr_dims: the pair range over which YaRN blends interpolation and extrapolation.
fn yarn_corr_dims(
    n_dims: u32,
    n_ctx_orig: u32,
    base: f32,
    beta_fast: f32,
    beta_slow: f32,
) -> [f32; 2] {
    let dim = |n_rot: f32| {
        n_dims as f32 * (n_ctx_orig as f32 / (n_rot * 2.0 * std::f32::consts::PI)).ln()
            / (2.0 * base.ln())
    };
    let start = dim(beta_fast).floor();
    let end = dim(beta_slow).ceil();
    [start.max(0.0), end.min(n_dims as f32 - 1.0)]
}

impl RopeParams {
    /// The cosine and sine (scaled by YaRN's mscale) that turn each rotated pair of a head at
    /// `pos`, into `out`: theta by repeated multiplication as ggml computes it (positions deep in
    /// the context round the same way), divided by the pair's frequency factor, scaled, with
    /// YaRN's ramp where it applies.
    pub fn rotations(&self, pos: u32, out: &mut Vec<(f32, f32)>) {
        let pairs = (self.n_dims / 2) as usize;
        let theta_scale = self.freq_base.powf(-2.0 / self.n_dims as f32);
        out.clear();
        let mut theta = pos as f32;
        for i in 0..pairs {
            let factor = self.freq_factors.as_ref().map_or(1.0, |f| f[i]);
            let extrapolated = theta / factor;
            let mut t = self.freq_scale * extrapolated;
            let mut mscale = self.attn_factor;
            if self.ext_factor != 0.0 {
                let [low, high] = self.corr_dims;
                let y = (i as f32 - low) / (high - low).max(0.001);
                let mix = (1.0 - y.clamp(0.0, 1.0)) * self.ext_factor;
                t = t * (1.0 - mix) + extrapolated * mix;
                mscale *= 1.0 + 0.1 * (1.0 / self.freq_scale).ln();
            }
            out.push((t.cos() * mscale, t.sin() * mscale));
            theta *= theta_scale;
        }
    }

    /// Rotates every head (`head_dim` values each) of `x` by `rotations` (from
    /// [`Self::rotations`]); dimensions from `n_dims` on pass through.
    pub fn rotate(&self, x: &mut [f32], head_dim: usize, rotations: &[(f32, f32)]) {
        let half = rotations.len();
        for head in x.chunks_exact_mut(head_dim) {
            for (i, &(cos, sin)) in rotations.iter().enumerate() {
                let (a, b) = match self.order {
                    RopeOrder::Neox => (i, i + half),
                    RopeOrder::Normal => (2 * i, 2 * i + 1),
                };
                let (x0, x1) = (head[a], head[b]);
                head[a] = x0 * cos - x1 * sin;
                head[b] = x0 * sin + x1 * cos;
            }
        }
    }
}
