//! The llama forward pass on the GPU against llama.cpp (tests/reference, from
//! scripts/reference-vectors): the top-10 logits of the first positions of the agent prompt, and
//! greedy generation for three prompts.
//!
//! Tolerance: each of llama.cpp's top-10 logits within 0.75 of ours (the largest difference seen
//! is 0.69, at position 4). llama.cpp's CPU matrix products quantise the activations to 8 bits
//! (Q8_0/Q8_1) and its KV cache is f16; ours are f32 throughout. That this, not a slip in the
//! pass, is the difference is what the f64 CPU test shows: at position 0 the GPU is within 3e-5 of
//! exact arithmetic on every logit, and 0.13–0.25 from llama.cpp. Greedy tokens must be identical until the first step
//! where llama.cpp's two best logits are closer than 0.5 (a near-tie the difference can flip),
//! which the test reports.

mod common;

use itinero_engine::model::Llama;
use itinero_engine::models::SMOLLM2_135M;

const LOGIT_TOLERANCE: f32 = 0.75;
const NEAR_TIE: f64 = 0.5;

fn argmax(v: &[f32]) -> u32 {
    v.iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .unwrap()
        .0 as u32
}

fn load() -> Llama {
    let gguf = common::open(SMOLLM2_135M);
    Llama::load(common::gpu(), gguf, 256).unwrap()
}

fn rms_norm(x: &[f64], w: &[f32], eps: f32) -> Vec<f64> {
    let mean = x.iter().map(|v| v * v).sum::<f64>() / x.len() as f64;
    let scale = 1.0 / (mean + f64::from(eps)).sqrt();
    x.iter()
        .zip(w)
        .map(|(v, &w)| v * scale * f64::from(w))
        .collect()
}

/// `W·x` in f64 from the CPU dequantisation of the GGUF tensor.
fn matvec(g: &itinero_engine::gguf::Gguf, name: &str, x: &[f64]) -> Vec<f64> {
    let w = g.tensor(name).unwrap().to_f32().unwrap();
    w.chunks_exact(x.len())
        .map(|row| row.iter().zip(x).map(|(&w, x)| f64::from(w) * x).sum())
        .collect()
}

/// At position 0 the pass is exact arithmetic on the weights — RoPE turns by 0 and attention over
/// one position returns its value — so an f64 CPU pass is short, and the GPU must match it far
/// more closely than it matches llama.cpp: within 1e-3 on every logit (lavapipe: 3e-5).
#[test]
fn smollm2_first_position_matches_an_f64_cpu_pass() {
    let gpu = common::gpu();
    let g = common::open(SMOLLM2_135M);
    let hp = itinero_engine::model::HParams::from_gguf(&g).unwrap();
    let token = 1u32;
    let vec = |name: &str| g.tensor(name).unwrap().to_f32().unwrap();
    let embd = vec("token_embd.weight");
    let d = hp.dim as usize;
    let mut x: Vec<f64> = embd[token as usize * d..(token as usize + 1) * d]
        .iter()
        .map(|&v| f64::from(v))
        .collect();
    for l in 0..hp.layers {
        let t = |s: &str| format!("blk.{l}.{s}");
        let h = rms_norm(&x, &vec(&t("attn_norm.weight")), hp.rms_eps);
        let v = matvec(&g, &t("attn_v.weight"), &h);
        // Each query head's output is its KV head's value.
        let group = (hp.heads / hp.kv_heads) as usize;
        let hd = hp.head_dim as usize;
        let att: Vec<f64> = (0..hp.heads as usize * hd)
            .map(|i| v[(i / hd / group) * hd + i % hd])
            .collect();
        let o = matvec(&g, &t("attn_output.weight"), &att);
        x.iter_mut().zip(&o).for_each(|(x, o)| *x += o);
        let h = rms_norm(&x, &vec(&t("ffn_norm.weight")), hp.rms_eps);
        let gate = matvec(&g, &t("ffn_gate.weight"), &h);
        let up = matvec(&g, &t("ffn_up.weight"), &h);
        let m: Vec<f64> = gate
            .iter()
            .zip(&up)
            .map(|(g, u)| g / (1.0 + (-g).exp()) * u)
            .collect();
        let down = matvec(&g, &t("ffn_down.weight"), &m);
        x.iter_mut().zip(&down).for_each(|(x, d)| *x += d);
    }
    let h = rms_norm(&x, &vec("output_norm.weight"), hp.rms_eps);
    let want = matvec(&g, "token_embd.weight", &h);
    let model = Llama::load(gpu, g, 16).unwrap();
    let got = model.step(gpu, token, 0).unwrap();
    let worst = got
        .iter()
        .zip(&want)
        .map(|(&a, b)| (f64::from(a) - b).abs())
        .fold(0.0, f64::max);
    eprintln!("position 0: largest logit difference from the f64 CPU pass: {worst:.2e}");
    assert!(
        worst < 1e-3,
        "position 0 differs from the f64 CPU pass by {worst}"
    );
}

#[test]
fn smollm2_top_logits_match_llama_cpp() {
    let gpu = common::gpu();
    let reference = common::reference("smollm2-135m-instruct-q4_1.json");
    let model = load();
    let prompt = common::ids(&reference["logits"]["ids"]);
    let mut worst = 0.0f32;
    for p in reference["logits"]["positions"].as_array().unwrap() {
        let pos = p["position"].as_u64().unwrap() as u32;
        let logits = model.step(gpu, prompt[pos as usize], pos).unwrap();
        let top: Vec<(u32, f32)> = p["top10"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["id"].as_u64().unwrap() as u32,
                    e["logit"].as_f64().unwrap() as f32,
                )
            })
            .collect();
        if std::env::var_os("LOGITS_DEBUG").is_some() {
            let d: Vec<String> = top
                .iter()
                .map(|&(id, w)| format!("{:+.2}", logits[id as usize] - w))
                .collect();
            eprintln!("position {pos}: ours − llama.cpp: {}", d.join(" "));
            continue;
        }
        for &(id, want) in &top {
            let got = logits[id as usize];
            let err = (got - want).abs();
            assert!(
                err <= LOGIT_TOLERANCE,
                "position {pos}: logit of token {id} is {got}, llama.cpp's {want} (allowed ±{LOGIT_TOLERANCE})"
            );
            worst = worst.max(err);
        }
        if top[0].1 - top[1].1 > 2.0 * LOGIT_TOLERANCE {
            assert_eq!(argmax(&logits), top[0].0, "position {pos}: the best token");
        }
    }
    eprintln!("largest top-10 logit difference from llama.cpp: {worst:.3}");
}

#[test]
fn smollm2_greedy_tokens_match_llama_cpp() {
    let gpu = common::gpu();
    let reference = common::reference("smollm2-135m-instruct-q4_1.json");
    let model = load();
    for case in reference["greedy"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let prompt = common::ids(&case["prompt_ids"]);
        let want = common::ids(&case["tokens"]);
        let gaps: Vec<f64> = common::floats(&case["top2_gaps"]);
        let (&last, head) = prompt.split_last().unwrap();
        for (pos, &t) in head.iter().enumerate() {
            model.feed(gpu, t, pos as u32).unwrap();
        }
        let mut logits = model.step(gpu, last, head.len() as u32).unwrap();
        let mut pos = prompt.len() as u32;
        let mut matched = 0;
        for (i, &w) in want.iter().enumerate() {
            let got = argmax(&logits);
            if got != w {
                assert!(
                    gaps[i] < NEAR_TIE,
                    "{name}: step {i} gives token {got}, llama.cpp {w}, whose top-2 gap {:.3} is no near-tie",
                    gaps[i]
                );
                eprintln!(
                    "{name}: identical for {i} steps, then a near-tie (gap {:.3}) went the other way",
                    gaps[i]
                );
                break;
            }
            matched += 1;
            if i + 1 < want.len() {
                logits = model.step(gpu, got, pos).unwrap();
                pos += 1;
            }
        }
        eprintln!("{name}: {matched}/{} greedy tokens identical", want.len());
    }
}
