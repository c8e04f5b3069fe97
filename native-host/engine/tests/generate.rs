//! Generation with the real SmolLM2 on the GPU (lavapipe in CI): greedy tokens as llama.cpp
//! gives them (up to a near-tie, as in `model_logits`), the same again from the kept KV cache,
//! and a constrained reply that parses whatever the model would rather say.

mod common;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use itinero_engine::constrain::Constrainer;
use itinero_engine::generate::{Finish, Generating, Generator, GpuModel, Request};
use itinero_engine::gpu::Gpu;
use itinero_engine::model::Transformer;
use itinero_engine::models::SMOLLM2_135M;
use itinero_engine::tokenizer::Tokenizer;

const NEAR_TIE: f64 = 0.5;
const STEPS: usize = 12;

/// A generator over SmolLM2 on the GPU, and its tokenizer.
fn smollm2() -> (Generator<GpuModel<&'static Gpu>>, Arc<Tokenizer>) {
    let gguf = common::open(SMOLLM2_135M);
    let tokenizer = Arc::new(Tokenizer::from_gguf(&gguf).unwrap());
    let model = Transformer::load(common::gpu(), gguf, 256).unwrap();
    let gpu = common::gpu();
    (
        Generator::new(GpuModel { gpu, model }, tokenizer.clone()),
        tokenizer,
    )
}

#[test]
fn greedy_generation_matches_llama_cpp_and_the_kept_cache_gives_the_same() {
    let (mut g, _) = smollm2();
    let reference = common::reference("smollm2-135m-instruct-q4_1.json");
    let case = &reference["greedy"][0];
    let want = common::ids(&case["tokens"]);
    let gaps: Vec<f64> = common::floats(&case["top2_gaps"]);
    let req = Request {
        prompt: common::ids(&case["prompt_ids"]),
        max_tokens: STEPS as u32,
        ..Default::default()
    };
    let mut streamed = String::new();
    let first = g
        .generate(&req, None, &AtomicBool::new(false), &mut |g| {
            if let Generating::Text(t) = g {
                streamed.push_str(t)
            }
        })
        .unwrap();
    assert_eq!(streamed, first.text);
    for (i, (&got, &w)) in first.tokens.iter().zip(&want).enumerate() {
        if got != w {
            assert!(
                gaps[i] < NEAR_TIE,
                "step {i}: {got} against llama.cpp's {w}"
            );
            eprintln!("near-tie at step {i}: the rest is not compared");
            break;
        }
    }
    let again = g
        .generate(&req, None, &AtomicBool::new(false), &mut |_| {})
        .unwrap();
    assert_eq!(again.reused, req.prompt.len() - 1);
    assert_eq!(again.tokens, first.tokens);
}

#[test]
fn a_constrained_reply_parses() {
    let (mut g, tokenizer) = smollm2();
    let prompt = tokenizer
        .encode(
            "<|im_start|>user\nWrite a haiku about the sea.<|im_end|>\n<|im_start|>assistant\n",
            false,
            true,
        )
        .unwrap();
    let constrainer = Constrainer::new(tokenizer).unwrap();
    let mut c = constrainer
        .json_schema(serde_json::json!({
            "type": "object",
            "properties": {
                "action": {"enum": ["click", "done"]},
                "index": {"enum": [2, 5]}
            },
            "required": ["action", "index"],
            "additionalProperties": false
        }))
        .unwrap();
    let out = g
        .generate(
            &Request {
                prompt,
                max_tokens: 32,
                ..Default::default()
            },
            Some(&mut c),
            &AtomicBool::new(false),
            &mut |_| {},
        )
        .unwrap();
    assert_eq!(out.finish, Finish::Constraint, "{out:?}");
    let v: serde_json::Value = serde_json::from_str(&out.text).unwrap();
    assert!(
        ["click", "done"].contains(&v["action"].as_str().unwrap()),
        "{v}"
    );
    assert!([2, 5].contains(&v["index"].as_u64().unwrap()), "{v}");
}
