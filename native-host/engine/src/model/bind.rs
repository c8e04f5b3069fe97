//! Binding the layers' dispatches over a set of activations, once, at load: a step then records
//! what was bound. The llama block, with what an architecture's [`Variant`] adds to it (Qwen's
//! biases, Gemma's head and post norms, local layers) bound where the layer has it.

use crate::gpu::{
    Add, Attention, AttentionBuffers, AttentionShape, Bound, Destination, GatedActivation, Gpu,
    GpuError, GpuMatrix, HeadNorms, JoinedMatMul, KvStore, MergingMatVec, NewKeys, NormedInput,
    NormedMatVec, Output, RmsNorm, Rope, RopeParams,
};

use super::scratch::Scratch;
use super::variant::Variant;
use super::weights::Layer;
use super::{HParams, ModelError};
use crate::gate::Gate;

/// The kernels a plan binds.
pub(super) struct Kernels {
    pub(super) norm: RmsNorm,
    rope_global: Rope,
    rope_local: Rope,
    attention: Attention,
    /// Decode's output product merging attention's slices, where tuning chose it.
    merging: Option<MergingMatVec>,
    act: GatedActivation,
    add: Add,
}

impl Kernels {
    /// The kernels, with `attention` and `merging` as tuning chose them.
    pub(super) fn new(
        gpu: &Gpu,
        rope: RopeParams,
        gate: Gate,
        attention: Attention,
        merging: Option<MergingMatVec>,
    ) -> Result<Self, ModelError> {
        Ok(Self {
            norm: RmsNorm::new(gpu)?,
            rope_local: Rope::new(gpu, rope.gemma3_sliding_window())?,
            rope_global: Rope::new(gpu, rope)?,
            attention,
            merging,
            act: GatedActivation::new(gpu, gate)?,
            add: Add::new(gpu)?,
        })
    }
}

/// What every layer's binding reads besides its weights.
#[derive(Clone, Copy)]
pub(super) struct Shape<'a> {
    pub(super) hp: &'a HParams,
    pub(super) variant: &'a Variant,
    pub(super) capacity: u32,
}

impl Shape<'_> {
    /// The attention of a layer, local (a sliding window, where the model has one) or not.
    pub(super) fn attention(&self, local: bool) -> AttentionShape {
        AttentionShape {
            heads: self.hp.heads,
            kv_heads: self.hp.kv_heads,
            head_dim: self.hp.head_dim,
            capacity: self.capacity,
            window: self.variant.window(local),
            scale: self.variant.attention_scale,
        }
    }
}

/// Binds every layer's dispatches over `s`, with `mat` binding a weight matrix's product and
/// `joined` (prefill) the products of the matrices a layer could join.
#[allow(clippy::too_many_arguments)]
pub(super) fn bind_layers(
    gpu: &Gpu,
    k: &Kernels,
    joined: Option<&JoinedMatMul>,
    shape: Shape<'_>,
    layers: &[Layer],
    s: &Scratch,
    step: &wgpu::Buffer,
    mat: impl Fn(&GpuMatrix, &wgpu::Buffer, &wgpu::Buffer, Output) -> Result<Vec<Bound>, GpuError>,
) -> Result<Vec<Bound>, ModelError> {
    let hp = shape.hp;
    let n = s.tokens;
    let (dim, eps) = (hp.dim, hp.rms_eps);
    let mut pass: Vec<Bound> = Vec::new();
    for l in layers {
        pass.push(k.norm.bind(gpu, &s.x, &l.attn_norm, &s.h, n, dim, eps)?);
        bind_qkv(gpu, k, joined, hp, l, s, step, &mut pass, &mat)?;
        bind_rope_qk(gpu, k, hp, l, s, step, &mut pass)?;
        pass.extend(bind_attention(gpu, k, shape, l, s, step)?);
        bind_residual(gpu, k, hp, s, &mut pass, &l.post_attn_norm, |y, out| {
            mat(&l.wo, &s.att, y, out)
        })?;
        pass.push(k.norm.bind(gpu, &s.x, &l.ffn_norm, &s.h, n, dim, eps)?);
        if let (Some(jm), Some(gate_up)) = (joined, &l.gate_up) {
            pass.extend(jm.bind_gated(gpu, gate_up, &s.h, &s.m, step, n)?);
        } else {
            pass.extend(mat(&l.gate, &s.h, &s.g, Output::Write)?);
            pass.extend(mat(&l.up, &s.h, &s.u, Output::Write)?);
            pass.push(k.act.bind(gpu, &s.g, &s.u, &s.m, n * hp.ffn));
        }
        bind_residual(gpu, k, hp, s, &mut pass, &l.post_ffn_norm, |y, out| {
            mat(&l.down, &s.m, y, out)
        })?;
    }
    Ok(pass)
}

/// The q, k and v projections of layer `l` (with their biases) into the step's scratch, joined
/// where `joined` and the layer allow; the keys and values reach the cache in the RoPE dispatch
/// after ([`bind_rope_qk`]).
#[allow(clippy::too_many_arguments)]
fn bind_qkv(
    gpu: &Gpu,
    k: &Kernels,
    joined: Option<&JoinedMatMul>,
    hp: &HParams,
    l: &Layer,
    s: &Scratch,
    step: &wgpu::Buffer,
    pass: &mut Vec<Bound>,
    mat: &impl Fn(&GpuMatrix, &wgpu::Buffer, &wgpu::Buffer, Output) -> Result<Vec<Bound>, GpuError>,
) -> Result<(), ModelError> {
    let n = s.tokens;
    // Each projection: its matrix, bias, where it goes (Gemma's head norms read the raw
    // projection and write the final one), and heads.
    let projections = [
        (&l.wq, &l.q_bias, l.q_raw_or(s), hp.heads),
        (&l.wk, &l.k_bias, l.k_raw_or(s), hp.kv_heads),
        (&l.wv, &l.v_bias, &s.v, hp.kv_heads),
    ];
    if let (Some(jm), Some(qkv)) = (joined, &l.qkv) {
        let to = projections.map(|(_, _, y, heads)| Destination::new(y, heads * hp.head_dim));
        pass.extend(jm.bind_split(gpu, qkv, &s.h, &to, l.qkv_bias.as_ref(), step, n)?);
        return Ok(());
    }
    for (w, bias, y, heads) in projections {
        pass.extend(mat(w, &s.h, y, Output::Write)?);
        if let Some(b) = bias {
            let width = heads * hp.head_dim;
            pass.push(k.add.bind_repeating(gpu, b, y, n * width, width));
        }
    }
    Ok(())
}

/// Binds decode's steps with the fewest dispatches (see
/// [`Fusion::Fused`](super::Fusion::Fused)): one pass, no copies; RoPE done by attention where
/// its kernel rotates and the layer has no head norms; attention's slices merged by the output
/// product where tuning chose that. `mat` binds the products that stay on their own (the
/// attention output and the FFN's down matrix, each adding into the residual stream).
#[allow(clippy::too_many_arguments)]
pub(super) fn bind_layers_normed(
    gpu: &Gpu,
    k: &Kernels,
    nm: &NormedMatVec,
    shape: Shape<'_>,
    layers: &[Layer],
    s: &Scratch,
    step: &wgpu::Buffer,
    mat: impl Fn(&GpuMatrix, &wgpu::Buffer, &wgpu::Buffer, Output) -> Result<Vec<Bound>, GpuError>,
) -> Result<Vec<Bound>, ModelError> {
    let hp = shape.hp;
    debug_assert_eq!(s.tokens, 1, "decode binds one token");
    let (q_rows, kv_rows) = (hp.heads * hp.head_dim, hp.kv_dim());
    let mut pass: Vec<Bound> = Vec::new();
    for l in layers {
        let input = NormedInput {
            x: &s.x,
            norm: &l.attn_norm,
            eps: hp.rms_eps,
        };
        let to_q = Destination::new(l.q_raw_or(s), q_rows);
        let to_k = Destination::new(l.k_raw_or(s), kv_rows);
        let to_v = Destination::new(&s.v, kv_rows);
        match &l.qkv {
            Some(qkv) => pass.extend(nm.bind_split(
                gpu,
                qkv,
                input,
                &[to_q, to_k, to_v],
                l.qkv_bias.as_ref(),
            )?),
            None => {
                for (w, bias, to) in [
                    (&l.wq, &l.q_bias, to_q),
                    (&l.wk, &l.k_bias, to_k),
                    (&l.wv, &l.v_bias, to_v),
                ] {
                    pass.extend(nm.bind_split(gpu, w, input, &[to], bias.as_ref())?);
                }
            }
        }
        let rotates = k.attention.rotates() && !l.has_head_norms();
        if !rotates {
            bind_rope_qk(gpu, k, hp, l, s, step, &mut pass)?;
        }
        let new = rotates.then(|| NewKeys {
            rope: l.rope(k),
            k: &s.k,
            v: &s.v,
        });
        let attention = shape.attention(l.local);
        let buffers = attention_buffers(l, s);
        let (attend, slices) = k
            .attention
            .bind_unmerged(gpu, buffers, attention, step, new)?;
        pass.push(attend);
        let post_norm = &l.post_attn_norm;
        match (&slices, &k.merging) {
            (Some(slices), Some(merging)) => {
                bind_residual(gpu, k, hp, s, &mut pass, post_norm, |y, out| {
                    merging.bind(gpu, &l.wo, slices, step, y, out)
                })?
            }
            (slices, _) => {
                if let Some(slices) = slices {
                    pass.push(k.attention.bind_merge(gpu, slices, &s.att, step));
                }
                bind_residual(gpu, k, hp, s, &mut pass, post_norm, |y, out| {
                    mat(&l.wo, &s.att, y, out)
                })?
            }
        }
        let input = NormedInput {
            norm: &l.ffn_norm,
            ..input
        };
        match &l.gate_up {
            Some(gate_up) => pass.extend(nm.bind_gated(gpu, gate_up, input, &s.m)?),
            None => {
                for (w, y) in [(&l.gate, &s.g), (&l.up, &s.u)] {
                    let to = Destination::new(y, hp.ffn);
                    pass.extend(nm.bind_split(gpu, w, input, &[to], None)?);
                }
                pass.push(k.act.bind(gpu, &s.g, &s.u, &s.m, hp.ffn));
            }
        }
        bind_residual(gpu, k, hp, s, &mut pass, &l.post_ffn_norm, |y, out| {
            mat(&l.down, &s.m, y, out)
        })?;
    }
    Ok(pass)
}

impl Layer {
    /// Where the query projection goes: its raw buffer when Gemma's head norm follows.
    fn q_raw_or<'s>(&self, s: &'s Scratch) -> &'s wgpu::Buffer {
        if self.q_norm.is_some() {
            &s.q_raw
        } else {
            &s.q
        }
    }

    /// The same for the keys.
    fn k_raw_or<'s>(&self, s: &'s Scratch) -> &'s wgpu::Buffer {
        if self.k_norm.is_some() {
            &s.k_raw
        } else {
            &s.k
        }
    }

    fn rope<'k>(&self, k: &'k Kernels) -> &'k Rope {
        if self.local {
            &k.rope_local
        } else {
            &k.rope_global
        }
    }
}

/// RoPE of the step's queries and keys, the keys and values into layer `l`'s cache, in one
/// dispatch; with Gemma's head norms folded in where the layer has both.
fn bind_rope_qk(
    gpu: &Gpu,
    k: &Kernels,
    hp: &HParams,
    l: &Layer,
    s: &Scratch,
    step: &wgpu::Buffer,
    pass: &mut Vec<Bound>,
) -> Result<(), ModelError> {
    let (n, heads, rope) = (s.tokens, (hp.heads, hp.kv_heads), l.rope(k));
    let store = KvStore {
        v: &s.v,
        k_cache: &l.k_cache,
        v_cache: &l.v_cache,
    };
    if let (Some(q_norm), Some(k_norm)) = (&l.q_norm, &l.k_norm) {
        let norms = HeadNorms {
            q_raw: &s.q_raw,
            k_raw: &s.k_raw,
            q_norm,
            k_norm,
            eps: hp.rms_eps,
        };
        pass.push(rope.bind_qk_normed(gpu, norms, &s.q, store, n, heads, hp.head_dim, step));
        return Ok(());
    }
    bind_qk_norms(gpu, k, hp, l, s, pass)?;
    pass.push(rope.bind_qk(gpu, &s.q, &s.k, store, n, heads, hp.head_dim, step));
    Ok(())
}

/// Gemma's RMSNorm of each query and key head (from the raw projections into q and k).
fn bind_qk_norms(
    gpu: &Gpu,
    k: &Kernels,
    hp: &HParams,
    l: &Layer,
    s: &Scratch,
    pass: &mut Vec<Bound>,
) -> Result<(), ModelError> {
    let n = s.tokens;
    for (norm, raw, out, heads) in [
        (&l.q_norm, &s.q_raw, &s.q, hp.heads),
        (&l.k_norm, &s.k_raw, &s.k, hp.kv_heads),
    ] {
        if let Some(norm) = norm {
            pass.push(
                k.norm
                    .bind(gpu, raw, norm, out, n * heads, hp.head_dim, hp.rms_eps)?,
            );
        }
    }
    Ok(())
}

/// Attention of the tokens' queries over layer `l`'s cache, into `s.att`.
fn bind_attention(
    gpu: &Gpu,
    k: &Kernels,
    shape: Shape<'_>,
    l: &Layer,
    s: &Scratch,
    step: &wgpu::Buffer,
) -> Result<Vec<Bound>, ModelError> {
    let attention = shape.attention(l.local);
    Ok(k.attention
        .bind(gpu, attention_buffers(l, s), attention, step, s.tokens)?)
}

/// Attention's buffers in layer `l` over `s`: the queries, the layer's cache, the output.
fn attention_buffers<'a>(l: &'a Layer, s: &'a Scratch) -> AttentionBuffers<'a> {
    AttentionBuffers {
        q: &s.q,
        k_cache: &l.k_cache,
        v_cache: &l.v_cache,
        out: &s.att,
    }
}

/// x += product: added by the product itself (one dispatch), or through Gemma's post-norm when
/// the layer has one (the norm adds into x: two). `product` binds the product into the buffer
/// it is given.
fn bind_residual(
    gpu: &Gpu,
    k: &Kernels,
    hp: &HParams,
    s: &Scratch,
    pass: &mut Vec<Bound>,
    post_norm: &Option<wgpu::Buffer>,
    product: impl Fn(&wgpu::Buffer, Output) -> Result<Vec<Bound>, GpuError>,
) -> Result<(), ModelError> {
    let n = s.tokens;
    match post_norm {
        None => pass.extend(product(&s.x, Output::Add)?),
        Some(norm) => {
            pass.extend(product(&s.o, Output::Write)?);
            let shape = (n, hp.dim, hp.rms_eps);
            pass.push(
                k.norm
                    .bind_output(gpu, &s.o, norm, &s.x, shape, Output::Add)?,
            );
        }
    }
    Ok(())
}
