//! The cost of constrained decoding per token: llguidance's mask for the agent's reply schema
//! over SmolLM2's 49 152-token vocabulary, next to the time of one decode step.
//!
//! `cargo bench -p itinero-engine --bench constrain` builds the constrainer (timed once), then
//! generates `RUNS` replies from random logits under the schema and prints the median and p99
//! of one step's mask plus commit, and of building a fresh constraint per reply. CPU only.

use std::sync::Arc;
use std::time::{Duration, Instant};

use itinero_engine::constrain::{Constrainer, Next};
use itinero_engine::gguf::Gguf;
use itinero_engine::models::SMOLLM2_135M;
use itinero_engine::sample::{Sampler, Sampling};
use itinero_engine::tokenizer::Tokenizer;
use rand::{Rng, SeedableRng};

const RUNS: u64 = 20;

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
}
