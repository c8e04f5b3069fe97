//! A forward pass (either backend, as a [`Decoder`]) against llama.cpp's reference vectors
//! (`tests/reference`, from scripts/reference-vectors): the top-10 logits of the first positions
//! of the agent prompt, one token per step, and greedy generation for three prompts, each fed as
//! a prefill batch and then decoded. The tolerances, and why they are what they are, are in
//! `model_logits.rs`.

use itinero_engine::generate::Decoder;

use super::{floats, ids, reference};

pub fn argmax(v: &[f32]) -> u32 {
    v.iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .unwrap()
        .0 as u32
}

/// Each of llama.cpp's top-10 logits within `tolerance` of `model`'s, and the same best token
/// where llama.cpp's is clear of the second by more than the tolerance allows either to move.
/// `LOGITS_DEBUG` prints the differences instead of asserting.
pub fn top_logits_match(model: &mut dyn Decoder, label: &str, file: &str, tolerance: f32) {
    let reference = reference(file);
    let prompt = ids(&reference["logits"]["ids"]);
    let mut worst = 0.0f32;
    for p in reference["logits"]["positions"].as_array().unwrap() {
        let pos = p["position"].as_u64().unwrap() as u32;
        let logits = model.step(prompt[pos as usize], pos).unwrap();
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
                err <= tolerance,
                "{label}, position {pos}: logit of token {id} is {got}, llama.cpp's {want} (allowed ±{tolerance})"
            );
            worst = worst.max(err);
        }
        if top[0].1 - top[1].1 > 2.0 * tolerance {
            assert_eq!(
                argmax(&logits),
                top[0].0,
                "{label}, position {pos}: the best token"
            );
        }
    }
    eprintln!("{label}: largest top-10 logit difference from llama.cpp: {worst:.3}");
}

/// Greedy tokens identical to llama.cpp's until the first step where its two best logits are
/// closer than `near_tie` (a near-tie the backends' rounding can flip, which is reported).
pub fn greedy_tokens_match(model: &mut dyn Decoder, label: &str, file: &str, near_tie: f64) {
    let reference = reference(file);
    for case in reference["greedy"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let prompt = ids(&case["prompt_ids"]);
        let want = ids(&case["tokens"]);
        let gaps: Vec<f64> = floats(&case["top2_gaps"]);
        let (&last, head) = prompt.split_last().unwrap();
        model.feed(head, 0).unwrap();
        let mut logits = model.step(last, head.len() as u32).unwrap();
        let mut pos = prompt.len() as u32;
        let mut matched = 0;
        for (i, &w) in want.iter().enumerate() {
            let got = argmax(&logits);
            if got != w {
                assert!(
                    gaps[i] < near_tie,
                    "{label} {name}: step {i} gives token {got}, llama.cpp {w}, whose top-2 gap {:.3} is no near-tie",
                    gaps[i]
                );
                eprintln!(
                    "{label} {name}: identical for {i} steps, then a near-tie (gap {:.3}) went the other way",
                    gaps[i]
                );
                break;
            }
            matched += 1;
            if i + 1 < want.len() {
                logits = model.step(got, pos).unwrap();
                pos += 1;
            }
        }
        eprintln!(
            "{label} {name}: {matched}/{} greedy tokens identical",
            want.len()
        );
    }
}
