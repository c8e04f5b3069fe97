//! The GPU side of the engine: one wgpu device, tensors uploaded to it, and the WGSL kernels.
//!
//! Everything here is blocking: the engine runs on its own worker threads, and each wait is a
//! `device.poll(wait)` on a submission, never a sleep loop.
//!
//! - [`device`]: picks the adapter (high-performance first; `WGPU_BACKEND`, `WGPU_ADAPTER_NAME` and
//!   `WGPU_POWER_PREF` honoured) and opens a device with every limit and optional feature it offers.
//! - [`buffer`]: f32 vectors up and down.
//! - [`matrix`]: a GGUF weight matrix on the device, cut into whole-row chunks no larger than one
//!   storage binding.
//! - [`matvec`]: the dequantising matrix-vector kernels, one pipeline per tensor type, in the
//!   shape [`matvec_config`] gives.
//! - [`merging_matvec`]: decode's attention output product, merging attention's slices of the
//!   keys as it reads them: the merge's dispatch folded into the product.
//! - [`normed_matvec`]: decode's products with the RMSNorm before them (and the FFN's
//!   activation after them) folded in: fewer dispatches per step.
//! - [`matmul`]: the same for a batch of tokens (prompt prefill), each part decoded once per tile,
//!   or on cooperative matrices (tensor cores) in blocks whose shapes are [`coop_shape`]'s.
//! - [`joined_matmul`]: prefill's products over joined matrices (q, k and v; gate and up with the
//!   activation), one dispatch each.
//! - [`tile_tuning`]: times a model's prefill products with each tile of tokens on a GPU, when it
//!   loads, and keeps the fastest; [`attention_tuning`] and [`merge_tuning`] the same for
//!   attention's kernels and for where decode's attention slices are merged; [`timing`] times a
//!   pass for them and for decode's choices.
//! - [`profile`]: GPU timestamps around each dispatch, for `models bench --profile`.
//! - [`coop_attention`]: a prefill batch's attention in blocks of query rows on cooperative
//!   matrices, where the adapter has them; [`coop_check`] checks the kernels on them against
//!   the portable ones before a model uses them.
//! - [`norm`], [`rope`], [`softmax`], [`activation`], [`attention`], [`add`]: the other kernels of
//!   a transformer block, each with the ggml semantics the reference logits were computed with.

pub mod activation;
pub mod add;
pub mod attention;
pub mod attention_block;
pub mod attention_shape;
pub mod attention_tuning;
pub mod buffer;
pub mod coop_attention;
pub mod coop_check;
pub mod coop_shape;
pub mod device;
mod error;
pub mod joined_matmul;
pub mod kernel;
pub mod matmul;
pub mod matrix;
pub mod matvec;
pub mod matvec_config;
pub mod merge_tuning;
pub mod merging_matvec;
pub mod norm;
pub mod normed_matvec;
pub mod profile;
pub mod rope;
mod shader;
pub mod softmax;
pub mod tile_tuning;
pub mod timing;
mod typed_pipelines;

pub use activation::GatedActivation;
pub use add::Add;
pub use attention::{Attention, AttentionForm, AttentionSlices, NewKeys};
pub use attention_block::{AttentionBlock, BlockAttention};
pub use attention_shape::{AttentionBuffers, AttentionShape};
pub use coop_attention::{CoopAttention, CoopAttentionBlock};
pub use coop_shape::CoopShape;
pub use device::{Gpu, GpuOptions};
pub use error::GpuError;
pub use joined_matmul::JoinedMatMul;
pub use kernel::{record_pass, Bound, StepUniform};
pub use matmul::{Blocking, MatMul, BATCH_TILE, TILES};
pub use matrix::{GpuMatrix, Joined, Output};
pub use matvec::MatVec;
pub use matvec_config::{MatVecConfig, Reduction};
pub use merging_matvec::MergingMatVec;
pub use norm::RmsNorm;
pub use normed_matvec::{Destination, NormedInput, NormedMatVec};
pub use profile::{KernelTime, Profiler};
pub use rope::{HeadNorms, KvStore, Rope, RopeOrder, RopeParams};
pub use softmax::Softmax;
pub use tile_tuning::TileChoice;
