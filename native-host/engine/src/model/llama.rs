//! The llama-family forward pass (SmolLM2, Llama 3.x), one token per step over a KV cache.
//!
//! Weights stay in their GGUF encoding on the device and are dequantised by the matrix-vector
//! kernels as they are read. The token embedding stays in the memory-mapped file: a step needs
//! one row of it, which the CPU dequantises and uploads (Gemma's embedding alone is 170 MB).

use crate::gguf::{Architecture, Gguf, TensorType};
use crate::gpu::{
    record_pass, Add, Attention, AttentionBuffers, AttentionShape, Bound, Gate, GatedActivation,
    Gpu, GpuMatrix, MatVec, RmsNorm, Rope, RopeParams, StepUniform,
};
use crate::quant;

use super::{HParams, ModelError};

struct Layer {
    attn_norm: wgpu::Buffer,
    wq: GpuMatrix,
    wk: GpuMatrix,
    wv: GpuMatrix,
    wo: GpuMatrix,
    ffn_norm: wgpu::Buffer,
    gate: GpuMatrix,
    up: GpuMatrix,
    down: GpuMatrix,
    /// capacity × kv_dim floats each.
    k_cache: wgpu::Buffer,
    v_cache: wgpu::Buffer,
}

/// The activations of one step, reused by every layer.
struct Scratch {
    x: wgpu::Buffer,
    h: wgpu::Buffer,
    q: wgpu::Buffer,
    k: wgpu::Buffer,
    v: wgpu::Buffer,
    att: wgpu::Buffer,
    o: wgpu::Buffer,
    g: wgpu::Buffer,
    u: wgpu::Buffer,
    m: wgpu::Buffer,
    scores: wgpu::Buffer,
    logits: wgpu::Buffer,
}

/// A step's work, bound at load: compute passes, and between them the copies of the new
/// token's k and v into layer `l`'s cache (a copy cannot sit inside a pass).
enum Stage {
    Pass(Vec<Bound>),
    CopyKv(usize),
}

/// A loaded llama-family model with its KV cache.
pub struct Llama {
    gguf: Gguf,
    hp: HParams,
    capacity: u32,
    embd_ty: TensorType,
    layers: Vec<Layer>,
    /// The token's position and attention's length, written once per step.
    step_uniform: wgpu::Buffer,
    stages: Vec<Stage>,
    /// The final norm and the output matrix, skipped by [`Llama::feed`].
    logits_pass: Vec<Bound>,
    s: Scratch,
}

impl std::fmt::Debug for Llama {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Llama")
            .field("hparams", &self.hp)
            .field("capacity", &self.capacity)
            .finish()
    }
}

impl Llama {
    /// Uploads the model's weights and a KV cache for `capacity` positions (at most the model's
    /// context length).
    pub fn load(gpu: &Gpu, gguf: Gguf, capacity: u32) -> Result<Self, ModelError> {
        let hp = HParams::from_gguf(&gguf)?;
        if hp.arch != Architecture::Llama {
            return Err(ModelError::Unsupported(format!(
                "the llama forward pass cannot run a {} model",
                hp.arch.name()
            )));
        }
        let capacity = capacity.min(hp.context).max(1);
        let matrix = |name: &str| -> Result<GpuMatrix, ModelError> {
            Ok(GpuMatrix::from_tensor(gpu, &gguf.tensor(name)?)?)
        };
        let vector = |name: &str| -> Result<wgpu::Buffer, ModelError> {
            Ok(gpu.upload_f32(name, &gguf.tensor(name)?.to_f32()?))
        };
        let kv_bytes = u64::from(capacity) * u64::from(hp.kv_dim()) * 4;
        let cache = |label: &str| {
            gpu.device().create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: kv_bytes,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        };
        let mut layers = Vec::with_capacity(hp.layers as usize);
        for l in 0..hp.layers {
            let t = |s: &str| format!("blk.{l}.{s}");
            layers.push(Layer {
                attn_norm: vector(&t("attn_norm.weight"))?,
                wq: matrix(&t("attn_q.weight"))?,
                wk: matrix(&t("attn_k.weight"))?,
                wv: matrix(&t("attn_v.weight"))?,
                wo: matrix(&t("attn_output.weight"))?,
                ffn_norm: vector(&t("ffn_norm.weight"))?,
                gate: matrix(&t("ffn_gate.weight"))?,
                up: matrix(&t("ffn_up.weight"))?,
                down: matrix(&t("ffn_down.weight"))?,
                k_cache: cache("k cache"),
                v_cache: cache("v cache"),
            });
        }
        // Tied embeddings (SmolLM2) reuse the embedding matrix as the output.
        let output = match gguf.tensor("output.weight") {
            Ok(_) => matrix("output.weight")?,
            Err(_) => matrix("token_embd.weight")?,
        };
        let mut types: Vec<TensorType> = layers
            .iter()
            .flat_map(|l| [&l.wq, &l.wk, &l.wv, &l.wo, &l.gate, &l.up, &l.down])
            .chain([&output])
            .map(|m| m.ty())
            .collect();
        types.sort_by_key(|t| t.ggml_id());
        types.dedup();
        let matvec = MatVec::new(gpu, &types)?;
        let norm = RmsNorm::new(gpu)?;
        let rope = Rope::new(gpu, RopeParams::from_gguf(&gguf)?)?;
        let attention = Attention::new(gpu)?;
        let act = GatedActivation::new(gpu, Gate::SwiGlu)?;
        let add = Add::new(gpu)?;
        let f = |label: &str, n: u32| gpu.storage_f32(label, n as usize);
        let s = Scratch {
            x: f("x", hp.dim),
            h: f("h", hp.dim),
            q: f("q", hp.heads * hp.head_dim),
            k: f("k", hp.kv_dim()),
            v: f("v", hp.kv_dim()),
            att: f("att", hp.heads * hp.head_dim),
            o: f("o", hp.dim),
            g: f("g", hp.ffn),
            u: f("u", hp.ffn),
            m: f("m", hp.ffn),
            scores: f("scores", hp.heads * capacity),
            logits: f("logits", hp.vocab),
        };
        let step_uniform = StepUniform::new(0, 1).buffer(gpu);
        let shape = AttentionShape {
            heads: hp.heads,
            kv_heads: hp.kv_heads,
            head_dim: hp.head_dim,
            n_kv: capacity,
            scratch_stride: capacity,
            scale: 1.0 / (hp.head_dim as f32).sqrt(),
        };
        let mut stages = Vec::new();
        let mut pass: Vec<Bound> = Vec::new();
        for (i, l) in layers.iter().enumerate() {
            pass.push(norm.bind(gpu, &s.x, &l.attn_norm, &s.h, 1, hp.dim, hp.rms_eps)?);
            pass.extend(matvec.bind(gpu, &l.wq, &s.h, &s.q)?);
            pass.extend(matvec.bind(gpu, &l.wk, &s.h, &s.k)?);
            pass.extend(matvec.bind(gpu, &l.wv, &s.h, &s.v)?);
            pass.push(rope.bind(gpu, &s.q, 1, hp.heads, hp.head_dim, &step_uniform));
            pass.push(rope.bind(gpu, &s.k, 1, hp.kv_heads, hp.head_dim, &step_uniform));
            stages.push(Stage::Pass(std::mem::take(&mut pass)));
            stages.push(Stage::CopyKv(i));
            let buffers = AttentionBuffers {
                q: &s.q,
                k_cache: &l.k_cache,
                v_cache: &l.v_cache,
                scratch: &s.scores,
                out: &s.att,
            };
            pass.push(attention.bind(gpu, buffers, shape, &step_uniform)?);
            pass.extend(matvec.bind(gpu, &l.wo, &s.att, &s.o)?);
            pass.push(add.bind(gpu, &s.o, &s.x, hp.dim));
            pass.push(norm.bind(gpu, &s.x, &l.ffn_norm, &s.h, 1, hp.dim, hp.rms_eps)?);
            pass.extend(matvec.bind(gpu, &l.gate, &s.h, &s.g)?);
            pass.extend(matvec.bind(gpu, &l.up, &s.h, &s.u)?);
            pass.push(act.bind(gpu, &s.g, &s.u, &s.m, hp.ffn));
            pass.extend(matvec.bind(gpu, &l.down, &s.m, &s.o)?);
            pass.push(add.bind(gpu, &s.o, &s.x, hp.dim));
        }
        stages.push(Stage::Pass(pass));
        let output_norm = vector("output_norm.weight")?;
        let mut logits_pass =
            vec![norm.bind(gpu, &s.x, &output_norm, &s.h, 1, hp.dim, hp.rms_eps)?];
        logits_pass.extend(matvec.bind(gpu, &output, &s.h, &s.logits)?);
        let embd_ty = gguf.tensor("token_embd.weight")?.info.ty;
        tracing::info!(?hp, capacity, ?types, "llama model loaded");
        Ok(Self {
            gguf,
            hp,
            capacity,
            embd_ty,
            layers,
            step_uniform,
            stages,
            logits_pass,
            s,
        })
    }

    pub fn hparams(&self) -> &HParams {
        &self.hp
    }

    /// Positions the KV cache holds.
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// Runs `token` at position `pos` (positions before it must already be in the cache, from
    /// earlier steps) and returns the logits of the next token.
    pub fn step(&self, gpu: &Gpu, token: u32, pos: u32) -> Result<Vec<f32>, ModelError> {
        self.run(gpu, token, pos, true)
            .map(|l| l.expect("logits were asked for"))
    }

    /// Adds `token` at `pos` to the KV cache without computing logits: a prompt's tokens before
    /// its last skip the output matrix, the largest of the model.
    pub fn feed(&self, gpu: &Gpu, token: u32, pos: u32) -> Result<(), ModelError> {
        self.run(gpu, token, pos, false)?;
        gpu.wait()?;
        Ok(())
    }

    fn run(
        &self,
        gpu: &Gpu,
        token: u32,
        pos: u32,
        logits: bool,
    ) -> Result<Option<Vec<f32>>, ModelError> {
        if pos >= self.capacity {
            return Err(ModelError::ContextFull {
                pos,
                capacity: self.capacity,
            });
        }
        let s = &self.s;
        gpu.queue()
            .write_buffer(&s.x, 0, bytemuck::cast_slice(&self.embedding(token)?));
        gpu.queue().write_buffer(
            &self.step_uniform,
            0,
            bytemuck::bytes_of(&StepUniform::new(pos, pos + 1)),
        );
        let mut enc = gpu
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("step"),
            });
        let kv_bytes = u64::from(self.hp.kv_dim()) * 4;
        let at = u64::from(pos) * kv_bytes;
        for stage in &self.stages {
            match stage {
                Stage::Pass(dispatches) => record_pass(&mut enc, "layers", dispatches),
                Stage::CopyKv(l) => {
                    let l = &self.layers[*l];
                    enc.copy_buffer_to_buffer(&s.k, 0, &l.k_cache, at, kv_bytes);
                    enc.copy_buffer_to_buffer(&s.v, 0, &l.v_cache, at, kv_bytes);
                }
            }
        }
        if !logits {
            gpu.queue().submit([enc.finish()]);
            return Ok(None);
        }
        record_pass(&mut enc, "logits", &self.logits_pass);
        gpu.queue().submit([enc.finish()]);
        Ok(Some(gpu.read_f32(&s.logits, self.hp.vocab as usize)?))
    }

    /// Row `token` of the embedding matrix, dequantised on the CPU.
    fn embedding(&self, token: u32) -> Result<Vec<f32>, ModelError> {
        if token >= self.hp.vocab {
            return Err(ModelError::BadToken {
                token,
                vocab: self.hp.vocab,
            });
        }
        let t = self.gguf.tensor("token_embd.weight")?;
        let row_bytes = self
            .embd_ty
            .bytes_for(u64::from(self.hp.dim))
            .expect("checked when the matrix was uploaded") as usize;
        let start = token as usize * row_bytes;
        let mut row = vec![0.0; self.hp.dim as usize];
        quant::dequantize(self.embd_ty, &t.data[start..start + row_bytes], &mut row).map_err(
            |source| crate::gguf::GgufError::Dequantize {
                tensor: t.info.name.clone(),
                source,
            },
        )?;
        Ok(row)
    }
}
