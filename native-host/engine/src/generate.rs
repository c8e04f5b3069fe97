//! Generation: a prompt's tokens into the KV cache, then tokens one by one — sampled, masked by
//! the constraint when there is one — until an end-of-generation token, a stop sequence, the
//! constraint's end, the token limit, or cancellation. Text is streamed as it becomes certain
//! (whole characters, and not what may still turn into a stop sequence).
//!
//! The KV cache is kept between calls: an agent's prompts share their start (rules, goal, the
//! history so far), so only the tokens after the common prefix are fed again.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::constrain::{ConstrainError, Constrained, Next};
use crate::gpu::Gpu;
use crate::model::{CpuTransformer, ModelError, Transformer, PREFILL_BATCH};
use crate::sample::{SampleError, Sampler, Sampling, Stops};
use crate::tokenizer::{TokenId, Tokenizer};

/// A forward pass over a KV cache.
pub trait Decoder {
    /// Positions the KV cache holds.
    fn capacity(&self) -> u32;
    /// Puts `tokens` at `pos..` in the cache (earlier positions must be there).
    fn feed(&mut self, tokens: &[TokenId], pos: u32) -> Result<(), ModelError>;
    /// Puts `token` at `pos` and returns the next token's logits.
    fn step(&mut self, token: TokenId, pos: u32) -> Result<Vec<f32>, ModelError>;
    /// Whether a step keeps every CPU core busy itself, so that other work beside it only
    /// takes turns with it.
    fn busies_the_cpu(&self) -> bool {
        false
    }
    /// Prompt tokens fed between checks for cancellation: one of the model's batches, so a
    /// stopped task stops within a batch's time (about a second on two CPU cores).
    fn feed_chunk(&self) -> usize {
        PREFILL_BATCH as usize
    }
}

/// A model on a GPU (held as `&Gpu` or `Arc<Gpu>`).
pub struct GpuModel<G> {
    pub gpu: G,
    pub model: Transformer,
}

impl<G: std::ops::Deref<Target = Gpu>> Decoder for GpuModel<G> {
    fn capacity(&self) -> u32 {
        self.model.capacity()
    }
    fn feed(&mut self, tokens: &[TokenId], pos: u32) -> Result<(), ModelError> {
        self.model.feed(&self.gpu, tokens, pos)
    }
    fn step(&mut self, token: TokenId, pos: u32) -> Result<Vec<f32>, ModelError> {
        self.model.step(&self.gpu, token, pos)
    }
    /// A software adapter (lavapipe) runs its kernels on the CPU's cores.
    fn busies_the_cpu(&self) -> bool {
        self.gpu.is_cpu()
    }
    fn feed_chunk(&self) -> usize {
        self.model.prefill_batch() as usize
    }
}

impl Decoder for CpuTransformer {
    fn capacity(&self) -> u32 {
        CpuTransformer::capacity(self)
    }
    fn feed(&mut self, tokens: &[TokenId], pos: u32) -> Result<(), ModelError> {
        CpuTransformer::feed(self, tokens, pos)
    }
    fn step(&mut self, token: TokenId, pos: u32) -> Result<Vec<f32>, ModelError> {
        CpuTransformer::step(self, token, pos)
    }
    fn busies_the_cpu(&self) -> bool {
        true
    }
}

#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    #[error("the prompt is empty")]
    EmptyPrompt,
    #[error("the prompt has {prompt} tokens; the context holds {capacity}")]
    PromptTooLong { prompt: usize, capacity: u32 },
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error(transparent)]
    Sample(#[from] SampleError),
    #[error(transparent)]
    Constrain(#[from] ConstrainError),
}

/// Why generation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finish {
    /// The model ended its turn.
    EndOfGeneration,
    StopSequence,
    /// The constrained output is complete.
    Constraint,
    MaxTokens,
    ContextFull,
    Cancelled,
}

/// What to generate.
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub prompt: Vec<TokenId>,
    pub max_tokens: u32,
    pub sampling: Sampling,
    pub stops: Stops,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Generated {
    /// The text, without a stop sequence that ended it.
    pub text: String,
    pub tokens: Vec<TokenId>,
    pub finish: Finish,
    /// Prompt tokens found in the cache from an earlier call (not fed again).
    pub reused: usize,
}

/// What [`Generator::generate`] reports as it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generating<'a> {
    /// Prompt tokens run through the model so far, of the `total` it has to run (the cached
    /// prefix is not counted): on a CPU a long prompt takes seconds before the first token, and
    /// whoever waits should see it move. Sent after each batch when there is more than one.
    Prompt { done: usize, total: usize },
    /// Reply text that has become certain.
    Text(&'a str),
}

/// Whether the constraint's next mask is worked out on another thread while the model runs the
/// step the mask will apply to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MaskOverlap {
    /// Where the step leaves the CPU free (a real GPU); beside the CPU engine and lavapipe,
    /// which take every core, it measured slower.
    #[default]
    Auto,
    Always,
    Never,
}

impl MaskOverlap {
    fn beside(self, decoder: &impl Decoder) -> bool {
        match self {
            MaskOverlap::Auto => !decoder.busies_the_cpu(),
            MaskOverlap::Always => true,
            MaskOverlap::Never => false,
        }
    }
}

/// Generation over one model; keeps its KV cache between calls.
pub struct Generator<D> {
    decoder: D,
    tokenizer: Arc<Tokenizer>,
    /// The tokens in the KV cache, position by position.
    cached: Vec<TokenId>,
    overlap: MaskOverlap,
}

/// Bytes of `bytes` that form whole UTF-8 characters.
fn whole_chars(bytes: &[u8]) -> &str {
    match std::str::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => std::str::from_utf8(&bytes[..e.valid_up_to()]).expect("valid prefix"),
    }
}

impl<D: Decoder> Generator<D> {
    pub fn new(decoder: D, tokenizer: Arc<Tokenizer>) -> Self {
        Self {
            decoder,
            tokenizer,
            cached: Vec::new(),
            overlap: MaskOverlap::Auto,
        }
    }

    /// Chooses whether the constraint's mask is worked out beside the model's step rather than
    /// leaving it to the device ([`MaskOverlap::Auto`]): the benchmark compares the two ways in
    /// one run.
    pub fn overlap_constraint(&mut self, overlap: MaskOverlap) {
        self.overlap = overlap;
    }

    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }

    /// Generates for `req`, constrained by `constraint` when given; `on` hears how far the
    /// prompt has been run and receives the text as it becomes certain; `cancel` is checked
    /// between tokens.
    pub fn generate(
        &mut self,
        req: &Request,
        mut constraint: Option<&mut Constrained>,
        cancel: &AtomicBool,
        on: &mut dyn FnMut(Generating<'_>),
    ) -> Result<Generated, GenerateError> {
        let prompt = &req.prompt;
        let Some((&last, before)) = prompt.split_last() else {
            return Err(GenerateError::EmptyPrompt);
        };
        let capacity = self.decoder.capacity();
        if prompt.len() as u64 >= u64::from(capacity) {
            return Err(GenerateError::PromptTooLong {
                prompt: prompt.len(),
                capacity,
            });
        }
        // The cache up to the first difference is kept; the last prompt token is always run
        // again, for its logits.
        let reused = self
            .cached
            .iter()
            .zip(before)
            .take_while(|(a, b)| a == b)
            .count();
        self.cached.truncate(reused);
        let done = |finish, tokens, text: String, reused| Generated {
            text,
            tokens,
            finish,
            reused,
        };
        let to_feed = &before[reused..];
        let mut fed = 0;
        let chunk_len = self.decoder.feed_chunk();
        for chunk in to_feed.chunks(chunk_len) {
            if cancel.load(Ordering::SeqCst) {
                return Ok(done(Finish::Cancelled, Vec::new(), String::new(), reused));
            }
            self.decoder.feed(chunk, self.cached.len() as u32)?;
            self.cached.extend_from_slice(chunk);
            fed += chunk.len();
            if to_feed.len() > chunk_len {
                on(Generating::Prompt {
                    done: fed,
                    total: to_feed.len(),
                });
            }
        }
        let mut logits = self.decoder.step(last, before.len() as u32)?;
        let mut on_text = |text: &str| on(Generating::Text(text));
        self.cached.push(last);

        let vocab = self.tokenizer.vocab();
        let mut sampler = Sampler::new(req.sampling);
        let mut tokens = Vec::new();
        let mut bytes: Vec<u8> = Vec::new();
        let mut sent = 0usize;
        // The mask for the next token, when it was worked out during the step.
        let mut ahead: Option<Next> = None;
        let finish = loop {
            if tokens.len() as u32 >= req.max_tokens {
                break Finish::MaxTokens;
            }
            if cancel.load(Ordering::SeqCst) {
                break Finish::Cancelled;
            }
            let next = match constraint.as_deref_mut() {
                Some(c) => Some(match ahead.take() {
                    Some(next) => next,
                    None => c.allowed()?,
                }),
                None => None,
            };
            if matches!(next, Some(Next::Stop)) {
                break Finish::Constraint;
            }
            let token =
                sampler.sample_allowed(&logits, |t| next.as_ref().is_none_or(|n| n.allows(t)))?;
            if vocab.is_eog(token) {
                break Finish::EndOfGeneration;
            }
            tokens.push(token);
            bytes.extend(self.tokenizer.token_to_piece(token, false));
            let complete = match constraint.as_deref_mut() {
                Some(c) => c.commit(token)?,
                None => false,
            };
            let text = whole_chars(&bytes);
            if let Some(at) = req.stops.find(text) {
                on_text(&text[sent.min(at)..at]);
                bytes.truncate(at);
                sent = at;
                break Finish::StopSequence;
            }
            // Held back: what may still begin a stop sequence.
            let certain = text.len() - req.stops.pending(text);
            if certain > sent {
                on_text(&text[sent..certain]);
                sent = certain;
            }
            if complete {
                break Finish::Constraint;
            }
            let pos = self.cached.len() as u32;
            if pos >= capacity {
                break Finish::ContextFull;
            }
            logits = match constraint.as_deref_mut() {
                // The mask depends only on the tokens so far, the step only on the model: on a
                // GPU the CPU would otherwise sit idle during the step, then the GPU during the
                // mask (about 4 ms on a small machine, more than a fast GPU's whole step).
                Some(c) if self.overlap.beside(&self.decoder) => {
                    let decoder = &mut self.decoder;
                    let (stepped, next) = std::thread::scope(|s| {
                        let mask = s.spawn(|| c.allowed());
                        let stepped = decoder.step(token, pos);
                        let next = mask
                            .join()
                            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                        (stepped, next)
                    });
                    ahead = Some(next?);
                    stepped?
                }
                _ => self.decoder.step(token, pos)?,
            };
            self.cached.push(token);
        };
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if finish != Finish::StopSequence && text.len() > sent {
            on_text(&text[sent..]);
        }
        Ok(done(finish, tokens, text, reused))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::constrain::Constrainer;
    use crate::gguf::Gguf;
    use crate::models::SMOLLM2_135M;

    /// Stands in for a model: the next token is always `bias`'s favourite after the last one;
    /// records what it was asked.
    struct Fake {
        vocab: usize,
        capacity: u32,
        /// (token, position, with logits)
        calls: Vec<(TokenId, u32, bool)>,
        favourite: Box<dyn Fn(TokenId) -> TokenId>,
    }

    impl Decoder for Fake {
        fn capacity(&self) -> u32 {
            self.capacity
        }
        fn feed(&mut self, tokens: &[TokenId], pos: u32) -> Result<(), ModelError> {
            let at = (pos..).zip(tokens);
            self.calls
                .extend(at.map(|(pos, &token)| (token, pos, false)));
            Ok(())
        }
        fn step(&mut self, token: TokenId, pos: u32) -> Result<Vec<f32>, ModelError> {
            self.calls.push((token, pos, true));
            let mut logits = vec![0.0; self.vocab];
            logits[(self.favourite)(token) as usize] = 10.0;
            Ok(logits)
        }
    }

    fn tokenizer() -> Arc<Tokenizer> {
        let gguf = Gguf::open(SMOLLM2_135M.locate().expect("the test model")).unwrap();
        Arc::new(Tokenizer::from_gguf(&gguf).unwrap())
    }

    /// A generator whose model spells `script` (token ids) whatever the prompt, then ends.
    fn spelling(tok: &Arc<Tokenizer>, text: &str) -> Generator<Fake> {
        let script = tok.encode(text, false, false).unwrap();
        let end = tok.vocab().eos.unwrap();
        let favourite = move |last: TokenId| {
            script
                .iter()
                .position(|&t| t == last)
                .and_then(|i| script.get(i + 1).copied())
                .unwrap_or(if last == 0 { script[0] } else { end })
        };
        let fake = Fake {
            vocab: tok.vocab().len(),
            capacity: 64,
            calls: Vec::new(),
            favourite: Box::new(favourite),
        };
        Generator::new(fake, tok.clone())
    }

    fn collect(g: &mut Generator<Fake>, req: &Request) -> (Generated, String) {
        let mut streamed = String::new();
        let out = g
            .generate(req, None, &AtomicBool::new(false), &mut |g| {
                if let Generating::Text(t) = g {
                    streamed.push_str(t)
                }
            })
            .unwrap();
        (out, streamed)
    }

    #[test]
    fn the_cache_keeps_the_shared_start_of_the_prompts() {
        let tok = tokenizer();
        let mut g = spelling(&tok, " alpha beta gamma");
        let req = Request {
            prompt: vec![5, 6, 7, 0],
            max_tokens: 10,
            ..Default::default()
        };
        let (first, streamed) = collect(&mut g, &req);
        assert_eq!(first.text, " alpha beta gamma");
        assert_eq!(streamed, first.text, "streamed whole");
        assert_eq!(first.finish, Finish::EndOfGeneration);
        assert_eq!(first.reused, 0);
        // The next prompt shares its first three tokens.
        g.decoder.calls.clear();
        let req = Request {
            prompt: vec![5, 6, 7, 9, 0],
            ..req
        };
        let (second, _) = collect(&mut g, &req);
        assert_eq!(second.reused, 3);
        assert_eq!(
            g.decoder.calls[0],
            (9, 3, false),
            "fed from the first difference"
        );
        assert_eq!(g.decoder.calls[1], (0, 4, true));
    }

    #[test]
    fn a_long_prompt_reports_its_progress_batch_by_batch() {
        let tok = tokenizer();
        let mut g = spelling(&tok, " ok");
        g.decoder.capacity = 1024;
        let batch = g.decoder.feed_chunk();
        // The fake model starts its text after token 0.
        let mut prompt = vec![7; 2 * batch + 10];
        prompt.push(0);
        let req = Request {
            prompt,
            max_tokens: 4,
            ..Default::default()
        };
        let mut seen = Vec::new();
        let mut order = Vec::new();
        g.generate(&req, None, &AtomicBool::new(false), &mut |e| match e {
            Generating::Prompt { done, total } => {
                seen.push((done, total));
                order.push("prompt");
            }
            Generating::Text(_) => order.push("text"),
        })
        .unwrap();
        // The last prompt token is run for its logits, not fed: 2 batches and 10 tokens.
        let total = 2 * batch + 10;
        assert_eq!(
            seen,
            vec![(batch, total), (2 * batch, total), (total, total)]
        );
        assert_eq!(
            order.iter().position(|&o| o == "text"),
            Some(3),
            "{order:?}"
        );
        // The same prompt again is cached: nothing to report. A short tail fits one batch: no
        // progress either, since it would not move before it was done.
        seen.clear();
        let mut longer = req.prompt.clone();
        longer.extend([8; 20]);
        for prompt in [req.prompt.clone(), longer] {
            let req = Request {
                prompt,
                ..req.clone()
            };
            g.generate(&req, None, &AtomicBool::new(false), &mut |e| {
                if let Generating::Prompt { done, total } = e {
                    seen.push((done, total));
                }
            })
            .unwrap();
        }
        assert_eq!(seen, vec![]);
    }

    #[test]
    fn stop_sequences_limits_and_cancellation_end_it() {
        let tok = tokenizer();
        let mut g = spelling(&tok, " one two STOP three");
        let prompt = vec![0];
        let stops = Stops(vec![" STOP".into()]);
        let (out, streamed) = collect(
            &mut g,
            &Request {
                prompt: prompt.clone(),
                max_tokens: 20,
                stops: stops.clone(),
                ..Default::default()
            },
        );
        assert_eq!(out.finish, Finish::StopSequence);
        assert_eq!(out.text, " one two");
        assert_eq!(
            streamed, " one two",
            "nothing of the stop sequence was streamed"
        );
        let (out, _) = collect(
            &mut g,
            &Request {
                prompt: prompt.clone(),
                max_tokens: 2,
                ..Default::default()
            },
        );
        assert_eq!((out.finish, out.tokens.len()), (Finish::MaxTokens, 2));
        let out = g
            .generate(
                &Request {
                    prompt,
                    max_tokens: 20,
                    ..Default::default()
                },
                None,
                &AtomicBool::new(true),
                &mut |_| {},
            )
            .unwrap();
        assert_eq!(out.finish, Finish::Cancelled);
        let empty = g.generate(
            &Request::default(),
            None,
            &AtomicBool::new(false),
            &mut |_| {},
        );
        assert!(matches!(empty, Err(GenerateError::EmptyPrompt)));
        let long = Request {
            prompt: vec![1; 64],
            ..Default::default()
        };
        let too_long = g.generate(&long, None, &AtomicBool::new(false), &mut |_| {});
        assert!(matches!(too_long, Err(GenerateError::PromptTooLong { .. })));
    }

    #[test]
    fn a_constraint_overrules_the_model() {
        let tok = tokenizer();
        let constrainer = Constrainer::new(tok.clone()).unwrap();
        let schema = serde_json::json!({
            "type": "object",
            "properties": {
                "action": {"enum": ["click", "type"]},
                "index": {"enum": [4, 14]},
                "text": {"type": "string", "maxLength": 12}
            },
            "required": ["action", "index", "text"],
            "additionalProperties": false
        });
        // Its mask worked out beside each step, or after it: the same reply either way.
        let mut replies = Vec::new();
        for overlap in [MaskOverlap::Always, MaskOverlap::Never] {
            // The model wants prose; the schema wants an action.
            let mut g = spelling(&tok, " I would rather write a poem about the sea");
            g.overlap_constraint(overlap);
            let mut c = constrainer.json_schema(schema.clone()).unwrap();
            let out = g
                .generate(
                    &Request {
                        prompt: vec![0],
                        max_tokens: 40,
                        ..Default::default()
                    },
                    Some(&mut c),
                    &AtomicBool::new(false),
                    &mut |_| {},
                )
                .unwrap();
            assert_eq!(out.finish, Finish::Constraint);
            let v: serde_json::Value = serde_json::from_str(&out.text).unwrap();
            assert!(
                ["click", "type"].contains(&v["action"].as_str().unwrap()),
                "{v}"
            );
            assert!([4, 14].contains(&v["index"].as_u64().unwrap()), "{v}");
            assert!(v["text"].as_str().unwrap().chars().count() <= 12, "{v}");
            replies.push(out);
        }
        assert_eq!(replies[0], replies[1]);
    }
}
