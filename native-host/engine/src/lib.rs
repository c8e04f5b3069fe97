//! itinero's built-in inference engine.
//!
//! The host runs models itself, on the user's GPU through wgpu, so that itinero works with no model
//! server. This crate is that engine, behind the host's built-in backend (`llm/builtin.rs`). Its CPU
//! parts (file, dequantisation, tokenizer, templates) follow llama.cpp and ggml closely because
//! they are the references the GPU side is tested against:
//!
//! - [`gguf`]: the GGUF v3 file, memory-mapped: metadata, tensor table, tensor data slices; refuses
//!   tensor types and architectures the engine cannot run, naming them.
//! - [`tensor_type`]: the tensor element types the engine supports and their block layouts, which
//!   the file reader, the dequantiser and the kernels all describe tensors by.
//! - [`quant`]: CPU dequantisation of every supported tensor type, block by block. It is the
//!   reference the WGSL kernels are tested against, so it follows ggml's arithmetic.
//! - [`tokenizer`]: the model's tokenizer built from the GGUF (byte-level BPE with llama.cpp's
//!   pre-tokenizers, and SentencePiece-style merging), giving llama.cpp's token ids.
//! - [`chat`]: the GGUF's chat template rendered with minijinja the way Hugging Face renders it.
//! - [`models`]: the model cache (the small test models, the backend's default) and resolving a
//!   path, a cache id or an Ollama name to a file; [`model_info`]: what a GGUF holds, for the CLI.
//! - [`gpu`]: the wgpu device, weight matrices uploaded in their GGUF encoding (split to fit the
//!   device's storage bindings), the dequantising matrix-vector (decode) and matrix-matrix
//!   (prefill) kernels (`src/kernels/*.wgsl`), tested against [`quant`], and the other kernels of a
//!   transformer block.
//! - [`cpu`]: the same kernels on the CPU — per-block quantised dot products vectorised for the
//!   CPU's instruction set, split over threads, attention over an f16 KV cache.
//! - [`rope`]: rotary position embedding's settings and rotation, for both backends; [`gate`]:
//!   the feed-forward block's gated activation, likewise.
//! - [`device`]: which backend runs a model (a real GPU where there is one, else the CPU).
//! - [`model`]: the forward pass of the llama family, Qwen 2 and Gemma 3 on those kernels over a
//!   KV cache, prompts in batches and then one token per step, checked against an f64 CPU pass and
//!   llama.cpp's logits.
//! - [`sample`]: choosing tokens (greedy, temperature, top-k, top-p, seeded) and stop sequences.
//! - [`constrain`]: constrained decoding to a JSON schema with llguidance.
//! - [`ollama_store`]: models pulled with Ollama, found in its store without its server.
//! - [`generate`]: the generation loop joining a forward pass, sampling and the constraint, with
//!   the KV cache kept across calls.
//! - [`bench`]: prefill and decode speed, time to first token and memory on a model.
//!
//! [`tensor_type`], [`quant`], [`cpu`] and [`gate`] are the `itinero-kernels` crate's (the part
//! that differs per CPU, built and tested on its own), re-exported here under the same names.

pub use itinero_kernels::{cpu, gate, quant, tensor_type};

pub mod bench;
pub mod chat;
pub mod constrain;
pub mod device;
pub mod generate;
pub mod gguf;
pub mod gpu;
pub mod model;
pub mod model_info;
pub mod models;
pub mod ollama_store;
pub mod rope;
pub mod sample;
pub mod synthetic;
pub mod tokenizer;
