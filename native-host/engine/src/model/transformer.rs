//! The forward pass of the llama family (SmolLM2, Llama 3.x) and Gemma 3 over a KV cache: decode
//! one token at a time, or a prompt in batches (prefill).
//!
//! Weights stay in their GGUF encoding on the device and are dequantised by the kernels as they
//! are read. The token embedding stays in the memory-mapped file: a step needs one row of it,
//! which the CPU dequantises and uploads (Gemma's embedding alone is 170 MB).
//!
//! Every dispatch is bound once at load, twice over: for decode and for batches of up to 512
//! tokens on a GPU, [`PREFILL_BATCH`](super::PREFILL_BATCH) through CPU drivers (the
//! matrix-matrix kernels; see `prefill_batch.rs`). A step then only writes the token
//! embeddings and the step uniform, and records what was bound. Decode records the next step's
//! commands while the device runs this one: they do not depend on the token, and recording a
//! few hundred dispatches is CPU time a step would otherwise wait for.
//!
//! On a GPU both are bound with as few dispatches as the kernels allow ([`Fusion`]). Decode: each
//! norm folded into the products after it, q, k and v (and the FFN's gate and up, with the
//! activation) from one upload in one dispatch, the new keys and values written into the cache by
//! the kernels that make them, RoPE done by attention, and attention's slices merged by the
//! output product where that was timed faster: five dispatches a llama layer, where there were
//! sixteen and two copies. Prefill: the same joined products, one dispatch each, with the values
//! and the rotated keys written into the cache at the batch's positions, so no copies there
//! either (a v whose type kept it out of the joined upload is its own product into the cache).

use std::sync::Mutex;

use crate::gguf::{Gguf, GgufError};
use crate::gpu::attention_tuning::KernelChoice;
use crate::gpu::merge_tuning::MergeChoice;
use crate::gpu::{
    record_pass, Bound, Gpu, KernelTime, Profiler, RopeParams, StepUniform, TileChoice,
};
use crate::quant;
use crate::tensor_type::TensorType;

use super::bind::{Kernels, Shape};
use super::plan::Plan;
use super::prefill_batch;
use super::tuning::{self, Fusion, GpuTuning, Products};
use super::variant::Variant;
use super::weights::{Layer, Weights};
use super::{HParams, ModelError};

/// A loaded model with its KV cache.
pub struct Transformer {
    gguf: Gguf,
    hp: HParams,
    variant: Variant,
    capacity: u32,
    embd_ty: TensorType,
    layers: Vec<Layer>,
    decode: Plan,
    prefill: Plan,
    /// The most tokens a prefill batch holds.
    prefill_batch: u32,
    /// The final norm and the output matrix on the decode activations.
    logits_pass: Vec<Bound>,
    logits: wgpu::Buffer,
    /// Where each step's logits are copied to be read back.
    logits_readback: wgpu::Buffer,
    /// The next decode step's commands, recorded while the device ran the last one.
    decode_ahead: Mutex<Option<wgpu::CommandBuffer>>,
    weights_bytes: u64,
    prefill_tile: TileChoice,
    prefill_attention: KernelChoice,
    decode_attention: KernelChoice,
    /// Where decode's products read x, and what timing measured.
    decode_x: String,
    /// Whether decode's attention rotates the step's query and key itself (RoPE's dispatch
    /// folded into attention's), where the layer allows.
    decode_rotates: bool,
    /// Where decode's attention slices are merged, and what timing measured.
    decode_merge: MergeChoice,
}

impl std::fmt::Debug for Transformer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transformer")
            .field("hparams", &self.hp)
            .field("capacity", &self.capacity)
            .finish()
    }
}

impl Transformer {
    /// Uploads the model's weights and a KV cache for `capacity` positions (at most the model's
    /// context length).
    pub fn load(gpu: &Gpu, gguf: Gguf, capacity: u32) -> Result<Self, ModelError> {
        Self::load_with(gpu, gguf, capacity, Fusion::Auto)
    }

    /// As [`load`](Self::load), with operations fused as `fusion` says.
    pub fn load_with(
        gpu: &Gpu,
        gguf: Gguf,
        capacity: u32,
        fusion: Fusion,
    ) -> Result<Self, ModelError> {
        let tuning = GpuTuning {
            fusion,
            ..GpuTuning::default()
        };
        Self::load_tuned(gpu, gguf, capacity, tuning)
    }

    /// As [`load`](Self::load), with each choice tuning makes as `tuning` says.
    pub fn load_tuned(
        gpu: &Gpu,
        gguf: Gguf,
        capacity: u32,
        tuning: GpuTuning,
    ) -> Result<Self, ModelError> {
        let hp = HParams::from_gguf(&gguf)?;
        let variant = super::variant::of(&gguf, &hp)?;
        let capacity = capacity.min(hp.context).max(1);
        let weights = Weights::load(gpu, &gguf, &hp, &variant, capacity)?;
        let types = weights.matrix_types();
        let layers = &weights.layers;
        let batch = prefill_batch::for_model(gpu, &hp, tuning.prefill_batch)?;
        let products =
            Products::choose(gpu, &types, (hp.dim, batch), variant.gate, layers, tuning)?;
        let GpuTuning {
            prefill_attention,
            decode_attention,
            slice_merge,
            ..
        } = tuning;
        let shape = Shape {
            hp: &hp,
            variant: &variant,
            capacity,
        };
        let (attention, prefill_attention, decode_attention) = tuning::attention(
            gpu,
            &shape.attention(false),
            (prefill_attention, batch),
            decode_attention,
        )?;
        // Fused decode leaves RoPE to attention where its kernel can rotate: a dispatch fewer a
        // layer. Gemma's head norms stay with RoPE's dispatch.
        let head_norms = layers.iter().any(|l| l.has_head_norms());
        let attention = if products.normed.is_some() && attention.can_rotate() && !head_norms {
            attention.with_rotating_decode(gpu)?
        } else {
            attention
        };
        let decode_rotates = attention.rotates();
        let (merging, decode_merge) = tuning::slice_merge(
            gpu,
            slice_merge,
            &products,
            &attention,
            &shape.attention(false),
            &layers[0].wo,
            &types,
        )?;
        let rope = RopeParams::from_gguf(&gguf)?;
        let k = Kernels::new(gpu, rope, variant.gate, attention, merging)?;
        let decode = Plan::decode(gpu, &k, &products, shape, layers)?;
        let prefill = Plan::prefill(gpu, &k, &products, shape, layers, batch)?;
        let logits = gpu.storage_f32("logits", hp.vocab as usize);
        let logits_readback = gpu.readback_buffer("logits read-back", logits.size());
        let logits_pass = decode.bind_logits(gpu, &k, &products, &hp, &weights, &logits)?;
        let embd_ty = gguf.tensor("token_embd.weight")?.info.ty;
        tracing::info!(?hp, capacity, ?types, prefill_batch = batch, "model loaded");
        Ok(Self {
            gguf,
            hp,
            variant,
            capacity,
            embd_ty,
            weights_bytes: weights.bytes(),
            layers: weights.layers,
            decode,
            prefill,
            prefill_batch: batch,
            logits_pass,
            logits,
            logits_readback,
            decode_ahead: Mutex::new(None),
            decode_x: products.decode.x_choice.clone(),
            decode_rotates,
            decode_merge,
            prefill_tile: products.prefill_tile,
            prefill_attention,
            decode_attention,
        })
    }

    /// The most tokens a prefill batch holds: [`Self::feed`] runs a prompt in batches of it.
    pub fn prefill_batch(&self) -> u32 {
        self.prefill_batch
    }

    /// How many dispatches one decode step records (its logits' included): what a step costs
    /// on a GPU, where each has a fixed price.
    pub fn decode_dispatches(&self) -> usize {
        self.decode.dispatches() + self.logits_pass.len()
    }

    /// Where decode's products read x (staged in workgroup memory or from its binding), and what
    /// timing measured where it was timed.
    pub fn decode_x(&self) -> &str {
        &self.decode_x
    }

    /// Prefill's tile of tokens, and what timing it (where it was timed) measured.
    pub fn prefill_tile(&self) -> &TileChoice {
        &self.prefill_tile
    }

    /// Attention's kernel for a prefill batch, and what timing (where it was timed) measured.
    pub fn prefill_attention(&self) -> &KernelChoice {
        &self.prefill_attention
    }

    /// The same for decode's token.
    pub fn decode_attention(&self) -> &KernelChoice {
        &self.decode_attention
    }

    /// Whether decode's attention rotates the step's query and key and stores them itself, so
    /// that a layer (without head norms) has no RoPE dispatch.
    pub fn decode_rotates(&self) -> bool {
        self.decode_rotates
    }

    /// Where decode's attention slices are merged (by the output product, so that a layer has
    /// no merge dispatch, or in a dispatch of their own), and each way's time where timed.
    pub fn decode_merge(&self) -> &MergeChoice {
        &self.decode_merge
    }

    /// How many dispatches one prefill batch records.
    pub fn prefill_dispatches(&self) -> usize {
        self.prefill.dispatches()
    }

    pub fn hparams(&self) -> &HParams {
        &self.hp
    }

    /// Positions the KV cache holds.
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// Bytes of weights on the device, in their GGUF encoding.
    pub fn weights_bytes(&self) -> u64 {
        self.weights_bytes
    }

    /// Bytes of the KV cache (f32 keys and values of every layer).
    pub fn kv_cache_bytes(&self) -> u64 {
        self.layers
            .iter()
            .map(|l| l.k_cache.size() + l.v_cache.size())
            .sum()
    }

    /// Runs `token` at position `pos` (positions before it must already be in the cache) and
    /// returns the logits of the next token.
    pub fn step(&self, gpu: &Gpu, token: u32, pos: u32) -> Result<Vec<f32>, ModelError> {
        self.check_room(pos, 1)?;
        self.upload(gpu, &self.decode, &[token], pos)?;
        let ahead = self.decode_ahead().take();
        gpu.queue()
            .submit([ahead.unwrap_or_else(|| self.decode_commands(gpu))]);
        // The device runs the step meanwhile.
        let next = self.decode_commands(gpu);
        let logits = gpu.read_mapped(&self.logits_readback, self.hp.vocab as usize)?;
        *self.decode_ahead() = Some(next);
        Ok(logits)
    }

    /// A decode step's commands: the layers, the logits, and their copy to be read back.
    fn decode_commands(&self, gpu: &Gpu) -> wgpu::CommandBuffer {
        let mut enc = encoder(gpu);
        self.record(&mut enc, &self.decode, None);
        record_pass(&mut enc, "logits", &self.logits_pass);
        enc.copy_buffer_to_buffer(
            &self.logits,
            0,
            &self.logits_readback,
            0,
            self.logits.size(),
        );
        enc.finish()
    }

    fn decode_ahead(&self) -> std::sync::MutexGuard<'_, Option<wgpu::CommandBuffer>> {
        // A step that panicked left at worst a recorded step, which is still good to run.
        self.decode_ahead
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Adds `tokens` at positions `pos..` to the KV cache without computing logits, in batches of
    /// [`Self::prefill_batch`]. Returns once the device has finished.
    pub fn feed(&self, gpu: &Gpu, tokens: &[u32], pos: u32) -> Result<(), ModelError> {
        self.check_room(pos, tokens.len())?;
        let mut at = pos;
        for batch in tokens.chunks(self.prefill_batch as usize) {
            let enc = self.start(gpu, &self.prefill, batch, at)?;
            gpu.queue().submit([enc.finish()]);
            at += batch.len() as u32;
        }
        gpu.wait()?;
        Ok(())
    }

    fn check_room(&self, pos: u32, tokens: usize) -> Result<(), ModelError> {
        super::check_room(pos, tokens, self.capacity)
    }

    /// Runs one token as [`Self::step`] does (with its logits), or up to
    /// [`Self::prefill_batch`] as one batch of [`Self::feed`], with a GPU timestamp after each dispatch: the device time
    /// per kernel (see [`Profiler`]). The KV cache gains the tokens as it would otherwise.
    pub fn profile(
        &self,
        gpu: &Gpu,
        tokens: &[u32],
        pos: u32,
    ) -> Result<Vec<KernelTime>, ModelError> {
        let n = tokens.len();
        let most = self.prefill_batch;
        if n == 0 || n > most as usize {
            return Err(ModelError::Unsupported(format!(
                "a profile runs 1 to {most} tokens, not {n}"
            )));
        }
        self.check_room(pos, n)?;
        let plan = if n == 1 { &self.decode } else { &self.prefill };
        self.upload(gpu, plan, tokens, pos)?;
        let mut enc = encoder(gpu);
        let mut profiler = Profiler::start(gpu, &mut enc)?;
        self.record(&mut enc, plan, Some(&mut profiler));
        if n == 1 {
            profiler.record_pass(&mut enc, "logits", &self.logits_pass);
        }
        Ok(profiler.finish(gpu, enc)?)
    }

    /// Uploads `tokens` and records `plan`'s layers for them.
    fn start(
        &self,
        gpu: &Gpu,
        plan: &Plan,
        tokens: &[u32],
        pos: u32,
    ) -> Result<wgpu::CommandEncoder, ModelError> {
        self.upload(gpu, plan, tokens, pos)?;
        let mut enc = encoder(gpu);
        self.record(&mut enc, plan, None);
        Ok(enc)
    }

    /// Writes the embeddings of `tokens` and the step uniform of `plan`. `queue.write_buffer`
    /// lands before the next submission, after those already made (whenever the submitted
    /// commands were recorded), so batches can follow each other without waiting.
    fn upload(&self, gpu: &Gpu, plan: &Plan, tokens: &[u32], pos: u32) -> Result<(), ModelError> {
        let n = tokens.len() as u32;
        debug_assert!(n >= 1 && n <= plan.s.tokens);
        let mut x = Vec::with_capacity((n * self.hp.dim) as usize);
        for &t in tokens {
            x.extend(self.embedding(t)?);
        }
        gpu.queue()
            .write_buffer(&plan.s.x, 0, bytemuck::cast_slice(&x));
        gpu.queue()
            .write_buffer(&plan.step, 0, bytemuck::bytes_of(&StepUniform::new(pos, n)));
        Ok(())
    }

    /// Records `plan`'s pass, timed by `profiler` when given.
    fn record(&self, enc: &mut wgpu::CommandEncoder, plan: &Plan, profiler: Option<&mut Profiler>) {
        match profiler {
            Some(p) => p.record_pass(enc, "layers", &plan.pass),
            None => record_pass(enc, "layers", &plan.pass),
        }
    }

    /// Row `token` of the embedding matrix, dequantised on the CPU and scaled.
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
            |source| GgufError::Dequantize {
                tensor: t.info.name.clone(),
                source,
            },
        )?;
        if self.variant.embedding_scale != 1.0 {
            row.iter_mut()
                .for_each(|v| *v *= self.variant.embedding_scale);
        }
        Ok(row)
    }
}

fn encoder(gpu: &Gpu) -> wgpu::CommandEncoder {
    gpu.device()
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("forward"),
        })
}
