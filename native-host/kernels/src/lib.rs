//! The built-in engine's arithmetic on the CPU, apart from everything that reads, schedules or
//! runs a model: the tensor types, dequantisation and the quantised kernels. A crate of its own
//! because it is the part that differs per CPU: the arm64 tests cross-build it and run it under
//! qemu without compiling the GPU stack, the tokenizer or the constraint, which it never uses.
//! The engine re-exports each module under the same name.
//!
//! - [`tensor_type`]: the tensor element types the engine supports and their block layouts, which
//!   the file reader, the dequantiser and the kernels all describe tensors by.
//! - [`quant`]: CPU dequantisation of every supported tensor type, block by block. It is the
//!   reference the WGSL kernels are tested against, so it follows ggml's arithmetic.
//! - [`cpu`]: the forward pass's kernels on the CPU — per-block quantised dot products vectorised
//!   for the CPU's instruction set, split over threads, attention over an f16 KV cache.
//! - [`gate`]: the feed-forward block's gated activation, which both passes apply.

pub mod cpu;
pub mod gate;
pub mod quant;
pub mod tensor_type;
