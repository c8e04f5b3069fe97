//! The forward pass of the llama family (SmolLM2, Llama 3.x) and Gemma 3 over a KV cache: decode
//! one token at a time, or a prompt in batches (prefill).
//!
//! Weights stay in their GGUF encoding on the device and are dequantised by the kernels as they
//! are read. The token embedding stays in the memory-mapped file: a step needs one row of it,
//! which the CPU dequantises and uploads (Gemma's embedding alone is 170 MB).
//!
//! Every dispatch is bound once at load, twice over: for decode and for batches of up to
//! [`PREFILL_BATCH`] tokens (the matrix-matrix kernels). A step then only writes the token
//! embeddings and the step uniform, and records what was bound.
//!
//! On a GPU both are bound with as few dispatches as the kernels allow ([`Fusion`]). Decode: each
//! norm folded into the products after it, q, k and v (and the FFN's gate and up, with the
//! activation) from one upload in one dispatch, the new keys and values written into the cache by
//! the kernels that make them: seven dispatches a llama layer, where there were sixteen and two
//! copies. Prefill: the same joined products, one dispatch each, with the values and the rotated
//! keys written into the cache at the batch's positions, so no copies there either (a v whose
//! type kept it out of the joined upload is its own product into the cache).

use crate::gguf::{Architecture, Gguf, TensorType};
use crate::gpu::tile_tuning;
use crate::gpu::{
    record_pass, Add, Attention, AttentionBuffers, AttentionShape, Bound, Destination, Gate,
    GatedActivation, Gpu, GpuError, GpuMatrix, HeadNorms, JoinedMatMul, KernelTime, MatMul, MatVec,
    NormedInput, NormedMatVec, Output, Profiler, RmsNorm, Rope, RopeParams, StepUniform,
    TileChoice, BATCH_TILE,
};
use crate::quant;

use super::{HParams, ModelError};

/// Tokens per prefill batch: enough that the weights' decoding is spread over many tokens, small
/// enough that the batch's activations are a few megabytes even for an 8B model.
pub const PREFILL_BATCH: u32 = 128;

/// Whether operations are fused into fewer dispatches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fusion {
    /// The fastest known for the device: [`Self::Fused`] on GPUs (decode keeps a separate norm
    /// where the device's workgroup memory cannot hold a hidden state), [`Self::Separate`] on
    /// CPU drivers with subgroups, where decode's products are the matrix-matrix kernel.
    #[default]
    Auto,
    /// Decode: norms folded into the products, q/k/v and gate/up/activation in one dispatch each,
    /// keys and values written into the cache by the kernels that make them. Prefill: q/k/v and
    /// gate/up/activation in one dispatch each. (Tests force it on CPU drivers to check it.)
    Fused,
    /// One kernel per operation (to compare with [`Self::Fused`] on one device).
    Separate,
}

/// How many tokens each invocation of prefill's products takes (see `gpu::tile_tuning`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PrefillTile {
    /// On a GPU, the fastest of the candidates, timed with the model's own products as it
    /// loads; on CPU drivers [`BATCH_TILE`].
    #[default]
    Auto,
    /// This tile (one of `gpu::TILES` but 1), untimed: to compare tiles on one device.
    Fixed(u32),
}

/// What sets an architecture's block apart from the llama block.
#[derive(Debug, Clone, PartialEq)]
struct Variant {
    /// Multiplies the token embedding (Gemma: √dim).
    embedding_scale: f32,
    /// Multiplies q·k.
    attention_scale: f32,
    gate: Gate,
    /// Gemma 3: five sliding-window layers (local RoPE) to each global one.
    sliding_window: Option<u32>,
}

impl Variant {
    fn of(gguf: &Gguf, hp: &HParams) -> Result<Self, ModelError> {
        let head_scale = 1.0 / (hp.head_dim as f32).sqrt();
        match hp.arch {
            // Qwen 2 differs from llama in its q/k/v biases (loaded wherever a GGUF has them)
            // and its NeoX RoPE order (which `RopeParams` reads from the architecture).
            Architecture::Llama | Architecture::Qwen2 => Ok(Self {
                embedding_scale: 1.0,
                attention_scale: head_scale,
                gate: Gate::SwiGlu,
                sliding_window: None,
            }),
            Architecture::Gemma3 => Ok(Self {
                embedding_scale: (hp.dim as f32).sqrt(),
                // llama.cpp's choice: Gemma 3 27B scales by its query_pre_attn_scalar (dim /
                // heads), the others by the head size.
                attention_scale: if hp.layers == 62 {
                    1.0 / ((hp.dim / hp.heads) as f32).sqrt()
                } else {
                    head_scale
                },
                gate: Gate::GeGlu,
                sliding_window: Some(gguf.metadata().u32("gemma3.attention.sliding_window")?),
            }),
        }
    }

    /// Gemma 3's pattern (llama.cpp's `set_swa_pattern(6)`): every sixth layer is global.
    fn is_local(&self, layer: u32) -> bool {
        self.sliding_window.is_some() && layer % 6 < 5
    }
}

struct Layer {
    attn_norm: wgpu::Buffer,
    wq: GpuMatrix,
    wk: GpuMatrix,
    wv: GpuMatrix,
    wo: GpuMatrix,
    /// Qwen 2: biases added to the q, k and v projections.
    q_bias: Option<wgpu::Buffer>,
    k_bias: Option<wgpu::Buffer>,
    v_bias: Option<wgpu::Buffer>,
    /// Gemma: RMSNorm of each query and key head before RoPE.
    q_norm: Option<wgpu::Buffer>,
    k_norm: Option<wgpu::Buffer>,
    /// Gemma: RMSNorm of the attention and feed-forward outputs before the residual add.
    post_attn_norm: Option<wgpu::Buffer>,
    post_ffn_norm: Option<wgpu::Buffer>,
    ffn_norm: wgpu::Buffer,
    gate: GpuMatrix,
    up: GpuMatrix,
    down: GpuMatrix,
    /// q, k and v in one upload (the three above are its parts), where their types and the
    /// device's alignment allow.
    qkv: Option<GpuMatrix>,
    /// The q, k and v biases joined likewise, where there are any.
    qkv_bias: Option<wgpu::Buffer>,
    /// gate and up in one upload, likewise.
    gate_up: Option<GpuMatrix>,
    local: bool,
    /// capacity × kv_dim floats each.
    k_cache: wgpu::Buffer,
    v_cache: wgpu::Buffer,
}

/// The activations of `tokens` tokens, reused by every layer.
struct Scratch {
    tokens: u32,
    x: wgpu::Buffer,
    h: wgpu::Buffer,
    q: wgpu::Buffer,
    k: wgpu::Buffer,
    v: wgpu::Buffer,
    /// The projections before Gemma's q/k norms.
    q_raw: wgpu::Buffer,
    k_raw: wgpu::Buffer,
    att: wgpu::Buffer,
    o: wgpu::Buffer,
    g: wgpu::Buffer,
    u: wgpu::Buffer,
    m: wgpu::Buffer,
}

impl Scratch {
    fn new(gpu: &Gpu, hp: &HParams, tokens: u32) -> Self {
        let f = |label: &str, n: u32| gpu.storage_f32(label, (n * tokens) as usize);
        let q_dim = hp.heads * hp.head_dim;
        Self {
            tokens,
            x: f("x", hp.dim),
            h: f("h", hp.dim),
            q: f("q", q_dim),
            k: f("k", hp.kv_dim()),
            v: f("v", hp.kv_dim()),
            q_raw: f("q raw", q_dim),
            k_raw: f("k raw", hp.kv_dim()),
            att: f("att", q_dim),
            o: f("o", hp.dim),
            g: f("g", hp.ffn),
            u: f("u", hp.ffn),
            m: f("m", hp.ffn),
        }
    }
}

/// A stage of the bound work: compute passes, and between them the copies of the new tokens'
/// keys and values into layer `l`'s cache (a copy cannot sit inside a pass).
enum Stage {
    Pass(Vec<Bound>),
    CopyKv(usize),
}

/// One way of running the layers (decode or prefill): its activations, its step uniform and its
/// bound stages.
struct Plan {
    s: Scratch,
    step: wgpu::Buffer,
    stages: Vec<Stage>,
}

impl Plan {
    /// Dispatches and copies recorded each time.
    fn counts(&self) -> (usize, usize) {
        self.stages
            .iter()
            .fold((0, 0), |(d, c), stage| match stage {
                Stage::Pass(dispatches) => (d + dispatches.len(), c),
                Stage::CopyKv(_) => (d, c + 2),
            })
    }
}

/// The kernels a plan binds.
struct Kernels {
    norm: RmsNorm,
    rope_global: Rope,
    rope_local: Rope,
    attention: Attention,
    act: GatedActivation,
    add: Add,
}

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
    /// The final norm and the output matrix on the decode activations.
    logits_pass: Vec<Bound>,
    logits: wgpu::Buffer,
    weights_bytes: u64,
    prefill_tile: TileChoice,
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
        Self::load_tuned(gpu, gguf, capacity, fusion, PrefillTile::Auto)
    }

    /// As [`load_with`](Self::load_with), with prefill's tile of tokens as `tile` says.
    pub fn load_tuned(
        gpu: &Gpu,
        gguf: Gguf,
        capacity: u32,
        fusion: Fusion,
        tile: PrefillTile,
    ) -> Result<Self, ModelError> {
        let hp = HParams::from_gguf(&gguf)?;
        let variant = Variant::of(&gguf, &hp)?;
        let capacity = capacity.min(hp.context).max(1);
        let matrix = |name: &str| -> Result<GpuMatrix, ModelError> {
            Ok(GpuMatrix::from_tensor(gpu, &gguf.tensor(name)?)?)
        };
        let vector = |name: &str| -> Result<wgpu::Buffer, ModelError> {
            Ok(gpu.upload_f32(name, &gguf.tensor(name)?.to_f32()?))
        };
        let gemma = hp.arch == Architecture::Gemma3;
        let extra = |name: &str| gemma.then(|| vector(name)).transpose();
        let has = |name: &str| gguf.tensor_infos().iter().any(|t| t.name == name);
        let optional = |name: &str| has(name).then(|| vector(name)).transpose();
        let kv_bytes = u64::from(capacity) * u64::from(hp.kv_dim()) * 4;
        let cache = |label: &str| {
            gpu.device().create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: kv_bytes,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        };
        // Matrices uploaded into one buffer where they can be, else apart.
        let joined = |names: &[String]| -> Result<(Option<GpuMatrix>, Vec<GpuMatrix>), ModelError> {
            let tensors = names
                .iter()
                .map(|n| gguf.tensor(n))
                .collect::<Result<Vec<_>, _>>()?;
            let refs: Vec<_> = tensors.iter().collect();
            match GpuMatrix::upload_joined(gpu, &names.join(" + "), &refs)? {
                Some(j) => Ok((Some(j.whole), j.parts)),
                None => Ok((
                    None,
                    names.iter().map(|n| matrix(n)).collect::<Result<_, _>>()?,
                )),
            }
        };
        let mut layers = Vec::with_capacity(hp.layers as usize);
        for l in 0..hp.layers {
            let t = |s: &str| format!("blk.{l}.{s}");
            let (qkv, parts) =
                joined(&[t("attn_q.weight"), t("attn_k.weight"), t("attn_v.weight")])?;
            let [wq, wk, wv]: [GpuMatrix; 3] = parts.try_into().expect("three names, three parts");
            let (gate_up, parts) = joined(&[t("ffn_gate.weight"), t("ffn_up.weight")])?;
            let [gate, up]: [GpuMatrix; 2] = parts.try_into().expect("two names, two parts");
            let q_bias = optional(&t("attn_q.bias"))?;
            let k_bias = optional(&t("attn_k.bias"))?;
            let v_bias = optional(&t("attn_v.bias"))?;
            let qkv_bias = joined_bias(gpu, &gguf, &hp, l)?;
            layers.push(Layer {
                attn_norm: vector(&t("attn_norm.weight"))?,
                wq,
                wk,
                wv,
                wo: matrix(&t("attn_output.weight"))?,
                q_bias,
                k_bias,
                v_bias,
                qkv,
                qkv_bias,
                gate_up,
                q_norm: extra(&t("attn_q_norm.weight"))?,
                k_norm: extra(&t("attn_k_norm.weight"))?,
                post_attn_norm: extra(&t("post_attention_norm.weight"))?,
                post_ffn_norm: extra(&t("post_ffw_norm.weight"))?,
                ffn_norm: vector(&t("ffn_norm.weight"))?,
                gate,
                up,
                down: matrix(&t("ffn_down.weight"))?,
                local: variant.is_local(l),
                k_cache: cache("k cache"),
                v_cache: cache("v cache"),
            });
        }
        // Tied embeddings (SmolLM2, Gemma) reuse the embedding matrix as the output.
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
        // On CPU drivers with subgroups, decode's products are the matrix-matrix kernel with a
        // tile of one token, which shares the loads of x across lanes; elsewhere matrix-vector.
        let decode_matmul = (gpu.is_cpu() && MatMul::can_share_x(gpu))
            .then(|| MatMul::new(gpu, &types, 1))
            .transpose()?;
        let decode_mat = |m: &GpuMatrix,
                          x: &wgpu::Buffer,
                          y: &wgpu::Buffer,
                          step: &wgpu::Buffer,
                          out: Output| match &decode_matmul {
            Some(mm) => mm.bind_output(gpu, m, x, y, step, 1, out),
            None => matvec.bind_output(gpu, m, x, y, out),
        };
        let rope = RopeParams::from_gguf(&gguf)?;
        let k = Kernels {
            norm: RmsNorm::new(gpu)?,
            rope_local: Rope::new(gpu, rope.gemma3_sliding_window())?,
            rope_global: Rope::new(gpu, rope)?,
            attention: Attention::new(gpu)?,
            act: GatedActivation::new(gpu, variant.gate)?,
            add: Add::new(gpu)?,
        };
        let shape = Shape {
            hp: &hp,
            variant: &variant,
            capacity,
        };
        let fused = match fusion {
            Fusion::Fused => true,
            Fusion::Separate => false,
            Fusion::Auto => decode_matmul.is_none(),
        };
        let normed = match fusion {
            _ if !fused => None,
            Fusion::Auto => {
                match NormedMatVec::new(gpu, &types, hp.dim, variant.gate, matvec.config()) {
                    Ok(normed) => Some(normed),
                    Err(e) => {
                        tracing::info!(error = %e, "decode keeps a separate norm");
                        None
                    }
                }
            }
            _ => Some(NormedMatVec::new(
                gpu,
                &types,
                hp.dim,
                variant.gate,
                matvec.config(),
            )?),
        };
        let prefill_tile = match tile {
            PrefillTile::Fixed(1) => {
                return Err(GpuError::Compile {
                    what: "prefill".into(),
                    message: "a tile of 1 token is decode's, not a batch's".into(),
                }
                .into())
            }
            PrefillTile::Fixed(t) => TileChoice::fixed(t),
            PrefillTile::Auto if gpu.is_cpu() => TileChoice::fixed(BATCH_TILE),
            PrefillTile::Auto => {
                // The first layer's products as prefill binds them: joined where it joins them.
                let l = &layers[0];
                let mut timed: Vec<&GpuMatrix> = Vec::new();
                match (&l.qkv, fused) {
                    (Some(qkv), true) => timed.push(qkv),
                    _ => timed.extend([&l.wq, &l.wk, &l.wv]),
                }
                timed.push(&l.wo);
                match (&l.gate_up, fused) {
                    (Some(gate_up), true) => timed.push(gate_up),
                    _ => timed.extend([&l.gate, &l.up]),
                }
                timed.push(&l.down);
                tile_tuning::fastest(gpu, &types, &timed, PREFILL_BATCH, &tile_tuning::CANDIDATES)?
            }
        };
        tracing::info!(tile = %prefill_tile.describe(), "prefill's tile of tokens");
        let matmul = MatMul::new(gpu, &types, prefill_tile.tile)?;
        let joined = fused
            .then(|| JoinedMatMul::new(gpu, &types, variant.gate, prefill_tile.tile))
            .transpose()?;
        let decode = {
            let s = Scratch::new(gpu, &hp, 1);
            let step = StepUniform::new(0, 1).buffer(gpu);
            let stages = match &normed {
                Some(nm) => {
                    bind_layers_normed(gpu, &k, nm, shape, &layers, &s, &step, |m, x, y, out| {
                        matvec.bind_output(gpu, m, x, y, out)
                    })?
                }
                None => bind_layers(gpu, &k, None, shape, &layers, &s, &step, |m, x, y, out| {
                    decode_mat(m, x, y, &step, out)
                })?,
            };
            Plan { s, step, stages }
        };
        let prefill = {
            let s = Scratch::new(gpu, &hp, PREFILL_BATCH);
            let step = StepUniform::new(0, PREFILL_BATCH).buffer(gpu);
            let stages = bind_layers(
                gpu,
                &k,
                joined.as_ref(),
                shape,
                &layers,
                &s,
                &step,
                |m, x, y, out| matmul.bind_output(gpu, m, x, y, &step, PREFILL_BATCH, out),
            )?;
            Plan { s, step, stages }
        };
        let output_norm = vector("output_norm.weight")?;
        let logits = gpu.storage_f32("logits", hp.vocab as usize);
        let d = &decode.s;
        let logits_pass = match &normed {
            Some(nm) => nm.bind_split(
                gpu,
                &output,
                NormedInput {
                    x: &d.x,
                    norm: &output_norm,
                    eps: hp.rms_eps,
                },
                &[Destination::at_start(&logits, hp.vocab)],
                None,
                &decode.step,
            )?,
            None => {
                let mut pass =
                    vec![k
                        .norm
                        .bind(gpu, &d.x, &output_norm, &d.h, 1, hp.dim, hp.rms_eps)?];
                pass.extend(decode_mat(
                    &output,
                    &d.h,
                    &logits,
                    &decode.step,
                    Output::Write,
                )?);
                pass
            }
        };
        let embd_ty = gguf.tensor("token_embd.weight")?.info.ty;
        let weights_bytes = layers
            .iter()
            .flat_map(|l| {
                let matrices = [&l.wq, &l.wk, &l.wv, &l.wo, &l.gate, &l.up, &l.down];
                let vectors = [Some(&l.attn_norm), Some(&l.ffn_norm)]
                    .into_iter()
                    .chain(
                        [
                            &l.q_norm,
                            &l.k_norm,
                            &l.post_attn_norm,
                            &l.post_ffn_norm,
                            &l.q_bias,
                            &l.k_bias,
                            &l.v_bias,
                        ]
                        .map(Option::as_ref),
                    )
                    .flatten()
                    .map(wgpu::Buffer::size);
                matrices.map(GpuMatrix::bytes).into_iter().chain(vectors)
            })
            .sum::<u64>()
            + output.bytes()
            + output_norm.size();
        tracing::info!(?hp, capacity, ?types, "model loaded");
        Ok(Self {
            gguf,
            hp,
            variant,
            capacity,
            embd_ty,
            layers,
            decode,
            prefill,
            logits_pass,
            logits,
            weights_bytes,
            prefill_tile,
        })
    }

    /// How many dispatches one decode step records (its logits' included), and how many
    /// copies between its passes: what a step costs on a GPU, where each has a fixed price.
    pub fn decode_dispatches(&self) -> (usize, usize) {
        let (dispatches, copies) = self.decode.counts();
        (dispatches + self.logits_pass.len(), copies)
    }

    /// Prefill's tile of tokens, and what timing it (where it was timed) measured.
    pub fn prefill_tile(&self) -> &TileChoice {
        &self.prefill_tile
    }

    /// The same for one prefill batch.
    pub fn prefill_dispatches(&self) -> (usize, usize) {
        self.prefill.counts()
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
        let mut enc = self.start(gpu, &self.decode, &[token], pos)?;
        record_pass(&mut enc, "logits", &self.logits_pass);
        gpu.queue().submit([enc.finish()]);
        Ok(gpu.read_f32(&self.logits, self.hp.vocab as usize)?)
    }

    /// Adds `tokens` at positions `pos..` to the KV cache without computing logits, in batches of
    /// [`PREFILL_BATCH`]. Returns once the device has finished.
    pub fn feed(&self, gpu: &Gpu, tokens: &[u32], pos: u32) -> Result<(), ModelError> {
        self.check_room(pos, tokens.len())?;
        let mut at = pos;
        for batch in tokens.chunks(PREFILL_BATCH as usize) {
            let enc = self.start(gpu, &self.prefill, batch, at)?;
            gpu.queue().submit([enc.finish()]);
            at += batch.len() as u32;
        }
        gpu.wait()?;
        Ok(())
    }

    fn check_room(&self, pos: u32, tokens: usize) -> Result<(), ModelError> {
        if pos as usize + tokens > self.capacity as usize {
            return Err(ModelError::ContextFull {
                pos: pos + tokens.saturating_sub(1) as u32,
                capacity: self.capacity,
            });
        }
        Ok(())
    }

    /// Runs one token as [`Self::step`] does (with its logits), or up to [`PREFILL_BATCH`] as
    /// one batch of [`Self::feed`], with a GPU timestamp after each dispatch: the device time
    /// per kernel (see [`Profiler`]). The KV cache gains the tokens as it would otherwise.
    pub fn profile(
        &self,
        gpu: &Gpu,
        tokens: &[u32],
        pos: u32,
    ) -> Result<Vec<KernelTime>, ModelError> {
        let n = tokens.len();
        if n == 0 || n > PREFILL_BATCH as usize {
            return Err(ModelError::Unsupported(format!(
                "a profile runs 1 to {PREFILL_BATCH} tokens, not {n}"
            )));
        }
        self.check_room(pos, n)?;
        let plan = if n == 1 { &self.decode } else { &self.prefill };
        let mut enc = self.upload(gpu, plan, tokens, pos)?;
        let mut profiler = Profiler::start(gpu, &mut enc)?;
        self.record(&mut enc, plan, pos, n as u32, Some(&mut profiler));
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
        let mut enc = self.upload(gpu, plan, tokens, pos)?;
        self.record(&mut enc, plan, pos, tokens.len() as u32, None);
        Ok(enc)
    }

    /// Writes the embeddings of `tokens` and the step uniform of `plan`, and opens an encoder.
    /// `queue.write_buffer` lands before the next submission, after those already made, so
    /// batches can follow each other without waiting.
    fn upload(
        &self,
        gpu: &Gpu,
        plan: &Plan,
        tokens: &[u32],
        pos: u32,
    ) -> Result<wgpu::CommandEncoder, ModelError> {
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
        Ok(gpu
            .device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("forward"),
            }))
    }

    /// Records `plan`'s stages for `n` tokens at `pos`, timed by `profiler` when given.
    fn record(
        &self,
        enc: &mut wgpu::CommandEncoder,
        plan: &Plan,
        pos: u32,
        n: u32,
        mut profiler: Option<&mut Profiler>,
    ) {
        let row = u64::from(self.hp.kv_dim()) * 4;
        for stage in &plan.stages {
            match stage {
                Stage::Pass(dispatches) => match profiler.as_deref_mut() {
                    Some(p) => p.record_pass(enc, "layers", dispatches),
                    None => record_pass(enc, "layers", dispatches),
                },
                Stage::CopyKv(l) => {
                    let l = &self.layers[*l];
                    let (at, len) = (u64::from(pos) * row, u64::from(n) * row);
                    enc.copy_buffer_to_buffer(&plan.s.k, 0, &l.k_cache, at, len);
                    enc.copy_buffer_to_buffer(&plan.s.v, 0, &l.v_cache, at, len);
                    if let Some(p) = profiler.as_deref_mut() {
                        p.mark(enc, "copy new keys and values into the cache");
                    }
                }
            }
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
            |source| crate::gguf::GgufError::Dequantize {
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

#[derive(Clone, Copy)]
struct Shape<'a> {
    hp: &'a HParams,
    variant: &'a Variant,
    capacity: u32,
}

/// Binds every layer's dispatches over `s`, with `mat` binding a weight matrix's product and
/// `joined` (prefill) the products of the matrices a layer could join.
#[allow(clippy::too_many_arguments)]
fn bind_layers(
    gpu: &Gpu,
    k: &Kernels,
    joined: Option<&JoinedMatMul>,
    shape: Shape<'_>,
    layers: &[Layer],
    s: &Scratch,
    step: &wgpu::Buffer,
    mat: impl Fn(&GpuMatrix, &wgpu::Buffer, &wgpu::Buffer, Output) -> Result<Vec<Bound>, GpuError>,
) -> Result<Vec<Stage>, ModelError> {
    let hp = shape.hp;
    let n = s.tokens;
    let (dim, eps) = (hp.dim, hp.rms_eps);
    let mut stages = Vec::new();
    let mut pass: Vec<Bound> = Vec::new();
    for (i, l) in layers.iter().enumerate() {
        pass.push(k.norm.bind(gpu, &s.x, &l.attn_norm, &s.h, n, dim, eps)?);
        // Each projection: its matrix, bias, head norm (Gemma: the projection goes to the raw
        // buffer, normed into the other), raw and final buffers, and heads.
        let projections = [
            (
                &l.wq,
                &l.q_bias,
                l.q_norm.is_some(),
                &s.q_raw,
                &s.q,
                hp.heads,
            ),
            (
                &l.wk,
                &l.k_bias,
                l.k_norm.is_some(),
                &s.k_raw,
                &s.k,
                hp.kv_heads,
            ),
            (&l.wv, &l.v_bias, false, &s.v, &s.v, hp.kv_heads),
        ];
        // With the joined kernels the values go straight into their cache and the keys into
        // theirs with their rotation (`Rope::bind_qk`): no copies. Where v could not join q
        // and k (its type differs), it is a product of its own into the cache; the joined
        // kernel takes one binding only.
        let direct = joined.is_some() && (l.qkv.is_some() || l.wv.chunk_count() == 1);
        if let (Some(jm), Some(qkv)) = (joined, &l.qkv) {
            let [q, k, _] = projections.map(|(_, _, normed, raw, out, heads)| {
                Destination::at_start(if normed { raw } else { out }, heads * hp.head_dim)
            });
            let to = [q, k, Destination::at_position(&l.v_cache, hp.kv_dim())];
            pass.extend(jm.bind_split(gpu, qkv, &s.h, &to, l.qkv_bias.as_ref(), step, n)?);
        } else {
            let separate = match joined {
                Some(jm) if direct => {
                    let bias = l.v_bias.as_ref();
                    pass.extend(jm.bind_at_position(gpu, &l.wv, &s.h, &l.v_cache, bias, step, n)?);
                    &projections[..2]
                }
                _ => &projections[..],
            };
            for &(w, bias, normed, raw, out, heads) in separate {
                let y = if normed { raw } else { out };
                pass.extend(mat(w, &s.h, y, Output::Write)?);
                if let Some(b) = bias {
                    let width = heads * hp.head_dim;
                    pass.push(k.add.bind_repeating(gpu, b, y, n * width, width));
                }
            }
        }
        if direct {
            bind_rope_qk(gpu, k, hp, l, s, step, &mut pass)?;
        } else {
            let rope = l.rope(k);
            bind_qk_norms(gpu, k, hp, l, s, &mut pass)?;
            pass.push(rope.bind(gpu, &s.q, n, hp.heads, hp.head_dim, step));
            pass.push(rope.bind(gpu, &s.k, n, hp.kv_heads, hp.head_dim, step));
            stages.push(Stage::Pass(std::mem::take(&mut pass)));
            stages.push(Stage::CopyKv(i));
        }
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
    stages.push(Stage::Pass(pass));
    Ok(stages)
}

/// Binds decode's steps with the fewest dispatches (see [`Fusion::Fused`]): one pass,
/// no copies. `mat` binds the products that stay on their own (the attention output and the
/// FFN's down matrix, each adding into the residual stream).
#[allow(clippy::too_many_arguments)]
fn bind_layers_normed(
    gpu: &Gpu,
    k: &Kernels,
    nm: &NormedMatVec,
    shape: Shape<'_>,
    layers: &[Layer],
    s: &Scratch,
    step: &wgpu::Buffer,
    mat: impl Fn(&GpuMatrix, &wgpu::Buffer, &wgpu::Buffer, Output) -> Result<Vec<Bound>, GpuError>,
) -> Result<Vec<Stage>, ModelError> {
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
        let q = if l.q_norm.is_some() { &s.q_raw } else { &s.q };
        let kk = if l.k_norm.is_some() { &s.k_raw } else { &s.k };
        let to_q = Destination::at_start(q, q_rows);
        let to_k = Destination::at_start(kk, kv_rows);
        let to_cache = Destination::at_position(&l.v_cache, kv_rows);
        match &l.qkv {
            Some(qkv) => pass.extend(nm.bind_split(
                gpu,
                qkv,
                input,
                &[to_q, to_k, to_cache],
                l.qkv_bias.as_ref(),
                step,
            )?),
            None => {
                for (w, bias, to) in [
                    (&l.wq, &l.q_bias, to_q),
                    (&l.wk, &l.k_bias, to_k),
                    (&l.wv, &l.v_bias, to_cache),
                ] {
                    pass.extend(nm.bind_split(gpu, w, input, &[to], bias.as_ref(), step)?);
                }
            }
        }
        bind_rope_qk(gpu, k, hp, l, s, step, &mut pass)?;
        pass.extend(bind_attention(gpu, k, shape, l, s, step)?);
        bind_residual(gpu, k, hp, s, &mut pass, &l.post_attn_norm, |y, out| {
            mat(&l.wo, &s.att, y, out)
        })?;
        let input = NormedInput {
            norm: &l.ffn_norm,
            ..input
        };
        match &l.gate_up {
            Some(gate_up) => pass.extend(nm.bind_gated(gpu, gate_up, input, &s.m, step)?),
            None => {
                for (w, y) in [(&l.gate, &s.g), (&l.up, &s.u)] {
                    let to = Destination::at_start(y, hp.ffn);
                    pass.extend(nm.bind_split(gpu, w, input, &[to], None, step)?);
                }
                pass.push(k.act.bind(gpu, &s.g, &s.u, &s.m, hp.ffn));
            }
        }
        bind_residual(gpu, k, hp, s, &mut pass, &l.post_ffn_norm, |y, out| {
            mat(&l.down, &s.m, y, out)
        })?;
    }
    Ok(vec![Stage::Pass(pass)])
}

impl Layer {
    fn rope<'k>(&self, k: &'k Kernels) -> &'k Rope {
        if self.local {
            &k.rope_local
        } else {
            &k.rope_global
        }
    }
}

/// RoPE of the step's queries and keys, the keys into layer `l`'s cache, in one dispatch; with
/// Gemma's head norms folded in where the layer has both.
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
    if let (Some(q_norm), Some(k_norm)) = (&l.q_norm, &l.k_norm) {
        let norms = HeadNorms {
            q_raw: &s.q_raw,
            k_raw: &s.k_raw,
            q_norm,
            k_norm,
            eps: hp.rms_eps,
        };
        let (q, cache) = (&s.q, &l.k_cache);
        pass.push(rope.bind_qk_normed(gpu, norms, q, cache, n, heads, hp.head_dim, step));
        return Ok(());
    }
    bind_qk_norms(gpu, k, hp, l, s, pass)?;
    pass.push(rope.bind_qk(gpu, &s.q, &s.k, &l.k_cache, n, heads, hp.head_dim, step));
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
    let hp = shape.hp;
    let buffers = AttentionBuffers {
        q: &s.q,
        k_cache: &l.k_cache,
        v_cache: &l.v_cache,
        out: &s.att,
    };
    let attention = AttentionShape {
        heads: hp.heads,
        kv_heads: hp.kv_heads,
        head_dim: hp.head_dim,
        capacity: shape.capacity,
        window: if l.local {
            shape.variant.sliding_window
        } else {
            None
        },
        scale: shape.variant.attention_scale,
    };
    Ok(k.attention.bind(gpu, buffers, attention, step, s.tokens)?)
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

/// The q, k and v biases of layer `l` joined as the joined q/k/v upload's rows are (zeros for a
/// missing one), where the layer has any.
fn joined_bias(
    gpu: &Gpu,
    gguf: &Gguf,
    hp: &HParams,
    l: u32,
) -> Result<Option<wgpu::Buffer>, ModelError> {
    let parts = [
        ("attn_q.bias", hp.heads * hp.head_dim),
        ("attn_k.bias", hp.kv_dim()),
        ("attn_v.bias", hp.kv_dim()),
    ];
    let mut any = false;
    let mut joined = Vec::new();
    for (name, len) in parts {
        match gguf.tensor(&format!("blk.{l}.{name}")) {
            Ok(t) => {
                any = true;
                joined.extend(t.to_f32()?);
            }
            Err(_) => joined.extend(std::iter::repeat_n(0.0, len as usize)),
        }
    }
    Ok(any.then(|| gpu.upload_f32("q, k, v biases", &joined)))
}
