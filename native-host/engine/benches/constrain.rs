//! The cost of constrained decoding per token: llguidance's mask for the agent's reply schema
//! over SmolLM2's 49 152-token vocabulary, next to the time of one decode step.
//!
//! `cargo bench -p itinero-engine --bench constrain` builds the constrainer (timed once), then
//! generates `RUNS` replies from random logits under the schema and prints the median and p99
//! of one step's mask plus commit, and of building a fresh constraint per reply. Then it
//! generates constrained replies with SmolLM2 on the GPU (`ITINERO_DEVICE`, else a real GPU
//! where there is one, else lavapipe), greedily (so both ways write the same tokens), with the
//! mask worked out beside each step and after it, in turns, and prints the median time per
//! token of each and their ratio. It says whether generation overlaps the two on this device by
//! itself: not on the CPU engine nor a software GPU, whose steps take every core.

use std::sync::Arc;
use std::time::{Duration, Instant};

use std::sync::atomic::AtomicBool;

use itinero_engine::constrain::{Constrainer, Next};
use itinero_engine::device::{Device, LoadedModel};
use itinero_engine::generate::{Decoder, Generator, MaskOverlap, Request};
use itinero_engine::gguf::Gguf;
use itinero_engine::models::SMOLLM2_135M;
use itinero_engine::sample::{Sampler, Sampling};
use itinero_engine::tokenizer::Tokenizer;
use rand::{Rng, SeedableRng};

const RUNS: u64 = 20;
/// Replies generated each way by the real model.
const REPLIES: usize = 3;

fn pct(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    v[((v.len() - 1) as f64 * p).round() as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let path = SMOLLM2_135M.locate().unwrap_or_else(|e| panic!("{e}"));
    let tokenizer = Arc::new(Tokenizer::from_gguf(&Gguf::open(&path).unwrap()).unwrap());
    let t = Instant::now();
    let constrainer = Constrainer::new(tokenizer.clone()).unwrap();
    println!(
        "constrainer for {} tokens built in {:.2?}",
        tokenizer.vocab().len(),
        t.elapsed()
    );
    let schema = serde_json::json!({
        "type": "object",
        "properties": {
            "thought": {"type": "string", "maxLength": 160},
            "action": {"type": "string", "enum": ["click", "type", "select", "check", "hover", "scroll", "press_key", "navigate", "back", "forward", "wait", "done", "ask_user"]},
            "index": {"enum": (0..120).collect::<Vec<u32>>()},
            "text": {"type": "string"},
            "submit": {"type": "boolean"},
            "answer": {"type": "string"}
        },
        "required": ["thought", "action"],
        "additionalProperties": false
    });
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let vocab = tokenizer.vocab().len();
    let (mut steps, mut starts, mut tokens) = (Vec::new(), Vec::new(), 0usize);
    for run in 0..RUNS {
        let t = Instant::now();
        let mut c = constrainer.json_schema(schema.clone()).unwrap();
        starts.push(t.elapsed());
        let mut sampler = Sampler::new(Sampling {
            temperature: 1.0,
            seed: run,
            ..Default::default()
        });
        for _ in 0..120 {
            let logits: Vec<f32> = (0..vocab).map(|_| rng.random::<f32>() * 4.0).collect();
            let t = Instant::now();
            let next = c.allowed().unwrap();
            if matches!(next, Next::Stop) {
                break;
            }
            let token = sampler
                .sample_allowed(&logits, |id| next.allows(id))
                .unwrap();
            let done = c.commit(token).unwrap();
            steps.push(t.elapsed());
            tokens += 1;
            if done {
                break;
            }
        }
    }
    println!("{RUNS} replies, {tokens} tokens");
    println!(
        "per token (mask, sample, commit): median {:.3} ms  p99 {:.3} ms",
        ms(pct(&mut steps, 0.5)),
        ms(pct(&mut steps, 0.99))
    );
    println!(
        "new constraint per reply:         median {:.3} ms  p99 {:.3} ms",
        ms(pct(&mut starts, 0.5)),
        ms(pct(&mut starts, 0.99))
    );
    overlapped(&path, &tokenizer, &constrainer, &schema);
}

/// Constrained replies from the real model, the mask beside the step against after it.
fn overlapped(
    path: &std::path::Path,
    tokenizer: &Arc<Tokenizer>,
    constrainer: &Constrainer,
    schema: &serde_json::Value,
) {
    let device = match Device::from_env().unwrap() {
        Device::Auto => Device::Gpu,
        chosen => chosen,
    };
    let model = LoadedModel::load(device, Gguf::open(path).unwrap(), 1024).unwrap();
    println!(
        "generating with {}; generation overlaps the mask and the step here by itself: {}",
        model.describe(),
        if model.busies_the_cpu() { "no" } else { "yes" }
    );
    let mut generator = Generator::new(model, tokenizer.clone());
    let prompt = tokenizer
        .encode(
            "You are a web agent. The page shows a search box [3], a list of products and a \
             button Add to cart [17]. Goal: add the cheapest kettle to the cart. Reply with \
             the next action as JSON.\n",
            true,
            false,
        )
        .unwrap();
    let request = Request {
        prompt,
        max_tokens: 48,
        ..Default::default()
    };
    let (mut beside, mut after) = (Vec::new(), Vec::new());
    let mut replies: [Option<String>; 2] = [None, None];
    for _ in 0..REPLIES {
        for (way, times) in [(true, &mut beside), (false, &mut after)] {
            generator.overlap_constraint(if way {
                MaskOverlap::Always
            } else {
                MaskOverlap::Never
            });
            let mut c = constrainer.json_schema(schema.clone()).unwrap();
            let t = Instant::now();
            let out = generator
                .generate(&request, Some(&mut c), &AtomicBool::new(false), &mut |_| {})
                .unwrap();
            times.push(t.elapsed() / out.tokens.len().max(1) as u32);
            let seen = replies[usize::from(!way)].get_or_insert_with(|| out.text.clone());
            assert_eq!(
                *seen, out.text,
                "greedy replies differ between the two ways"
            );
        }
    }
    assert_eq!(
        replies[0], replies[1],
        "the two ways wrote different replies"
    );
    let tokens = tokenizer
        .encode(replies[0].as_deref().unwrap_or_default(), false, false)
        .map_or(0, |t| t.len());
    println!("{REPLIES} replies each way, about {tokens} tokens each");
    let (b, a) = (pct(&mut beside, 0.5), pct(&mut after, 0.5));
    println!(
        "per token, mask beside the step: median {:.3} ms; after it: {:.3} ms; beside / after {:.3}",
        ms(b),
        ms(a),
        b.as_secs_f64() / a.as_secs_f64()
    );
}
