//! The CPU pass against llama.cpp (tests/reference, from scripts/reference-vectors), with the
//! tolerances the GPU pass is held to (`model_logits.rs` says where they come from): the top-10
//! logits of the first positions of the agent prompt, one token per step, and greedy generation
//! for three prompts, each fed as a prefill batch and then decoded. The CPU pass quantises its
//! activations as llama.cpp's does and keeps an f16 KV cache as it does, so it is expected to
//! land nearer llama.cpp than the GPU pass (which is exact f32); the largest difference is
//! printed.

mod common;

use common::llama_cpp::{greedy_tokens_match, top_logits_match};
use itinero_engine::model::CpuTransformer;
use itinero_engine::models::{KnownModel, GEMMA3_270M, SMOLLM2_135M};

fn load(model: KnownModel) -> CpuTransformer {
    CpuTransformer::load(common::open(model), 256, 2).unwrap()
}

#[test]
fn smollm2_top_logits_match_llama_cpp_on_the_cpu() {
    let label = "smollm2 on the CPU";
    top_logits_match(
        &mut load(SMOLLM2_135M),
        label,
        "smollm2-135m-instruct-q4_1.json",
        0.75,
    );
}

#[test]
fn gemma3_top_logits_match_llama_cpp_on_the_cpu() {
    let label = "gemma3 on the CPU";
    top_logits_match(
        &mut load(GEMMA3_270M),
        label,
        "gemma3-270m-q4_k_m.json",
        6.5,
    );
}

#[test]
fn smollm2_greedy_tokens_match_llama_cpp_on_the_cpu() {
    let label = "smollm2 on the CPU";
    greedy_tokens_match(
        &mut load(SMOLLM2_135M),
        label,
        "smollm2-135m-instruct-q4_1.json",
        0.5,
    );
}

#[test]
fn gemma3_greedy_tokens_match_llama_cpp_on_the_cpu() {
    let label = "gemma3 on the CPU";
    greedy_tokens_match(
        &mut load(GEMMA3_270M),
        label,
        "gemma3-270m-q4_k_m.json",
        3.5,
    );
}
