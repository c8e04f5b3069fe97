//! Constrained decoding: at every step, the tokens that keep the output inside a JSON schema
//! (the agent's action, with its element indices limited to those on the page), so a reply
//! that does not parse cannot be generated. `llguidance` does the grammar work; this module
//! gives it the model's vocabulary (as a `toktrie` trie of each token's bytes) and its real
//! tokenizer, and turns its step results into a mask the sampler honours.

use std::sync::Arc;

use llguidance::api::TopLevelGrammar;
use llguidance::{Constraint, ParserFactory};
use toktrie::{InferenceCapabilities, SimpleVob, TokEnv, TokRxInfo, TokTrie, TokenizerEnv};

use crate::tokenizer::{TokenId, Tokenizer};

#[derive(Debug, thiserror::Error)]
pub enum ConstrainError {
    #[error("the tokenizer has no end-of-generation token, which a constraint needs to end on")]
    NoEndToken,
    #[error("cannot build the grammar: {0}")]
    Grammar(String),
    #[error("the constraint failed: {0}")]
    Step(String),
}

/// The model's vocabulary as llguidance sees it; `tokenize_bytes` is the model's own tokenizer.
struct Vocabulary {
    trie: TokTrie,
    tokenizer: Arc<Tokenizer>,
}

impl TokenizerEnv for Vocabulary {
    fn tok_trie(&self) -> &TokTrie {
        &self.trie
    }

    fn tokenize_bytes(&self, s: &[u8]) -> Vec<toktrie::TokenId> {
        // Grammar text is the program's, never a page's: special tokens are not parsed.
        self.tokenizer
            .encode(&String::from_utf8_lossy(s), false, false)
            .unwrap_or_default()
    }
}

/// Builds constraints for one model; made once per model (the trie takes a moment).
pub struct Constrainer {
    factory: ParserFactory,
}

impl Constrainer {
    pub fn new(tokenizer: Arc<Tokenizer>) -> Result<Self, ConstrainError> {
        let vocab = tokenizer.vocab();
        let end = vocab
            .eot
            .or(vocab.eos)
            .or_else(|| vocab.eog.iter().next().copied())
            .ok_or(ConstrainError::NoEndToken)?;
        let words: Vec<Vec<u8>> = (0..vocab.len() as TokenId)
            .map(|id| {
                if vocab.is_eog(id) || tokenizer.token_to_piece(id, false).is_empty() {
                    // Control tokens: marked, so the grammar never spells them by accident.
                    let mut w = vec![TokTrie::SPECIAL_TOKEN_MARKER];
                    w.extend(tokenizer.token_to_piece(id, true));
                    w
                } else {
                    tokenizer.token_to_piece(id, false)
                }
            })
            .collect();
        let info = TokRxInfo {
            vocab_size: words.len() as u32,
            tok_eos: end,
            tok_bos: vocab.bos,
            tok_pad: vocab.pad,
            tok_unk: vocab.unk,
            tok_end_of_turn: vocab.eot,
        };
        let env: TokEnv = Arc::new(Vocabulary {
            trie: TokTrie::from(&info, &words),
            tokenizer: tokenizer.clone(),
        });
        let mut factory = ParserFactory::new(&env, InferenceCapabilities::default(), &[])
            .map_err(|e| ConstrainError::Grammar(e.to_string()))?;
        // Its diagnostics go to our errors, not to stderr.
        factory.quiet();
        Ok(Self { factory })
    }

    /// A fresh constraint to the JSON `schema`, for one generation. The JSON is compact (no
    /// whitespace between tokens): JSON allows any amount, and a small model would spend its
    /// token budget on it.
    pub fn json_schema(
        &self,
        mut schema: serde_json::Value,
    ) -> Result<Constrained, ConstrainError> {
        if let Some(object) = schema.as_object_mut() {
            object
                .entry("x-guidance")
                .or_insert_with(|| serde_json::json!({"whitespace_flexible": false}));
        }
        let parser = self
            .factory
            .create_parser(TopLevelGrammar::from_json_schema(schema))
            .map_err(|e| ConstrainError::Grammar(e.to_string()))?;
        Ok(Constrained {
            constraint: Constraint::new(parser),
        })
    }
}

/// What may come next.
pub enum Next {
    /// Only these tokens.
    Tokens(SimpleVob),
    /// The output is complete: stop generating.
    Stop,
}

impl Next {
    pub fn allows(&self, token: TokenId) -> bool {
        match self {
            Self::Tokens(mask) => mask.is_allowed(token),
            Self::Stop => false,
        }
    }
}

/// One generation's constraint state.
pub struct Constrained {
    constraint: Constraint,
}

impl Constrained {
    pub fn allowed(&mut self) -> Result<Next, ConstrainError> {
        let step = self
            .constraint
            .compute_mask()
            .map_err(|e| ConstrainError::Step(e.to_string()))?;
        if step.is_stop() {
            return Ok(Next::Stop);
        }
        match &step.sample_mask {
            Some(mask) => Ok(Next::Tokens(mask.clone())),
            None => Ok(Next::Stop),
        }
    }

    /// Takes the sampled `token`; true when the output is complete.
    pub fn commit(&mut self, token: TokenId) -> Result<bool, ConstrainError> {
        let r = self
            .constraint
            .commit_token(Some(token))
            .map_err(|e| ConstrainError::Step(e.to_string()))?;
        Ok(r.stop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gguf::Gguf;
    use crate::models::SMOLLM2_135M;
    use crate::sample::{Sampler, Sampling};
    use rand::{Rng, SeedableRng};

    /// An action reply like the agent's, with indices limited to the page's.
    fn schema(indices: &[u32]) -> serde_json::Value {
        serde_json::json!({
            "type": "object",
            "properties": {
                "thought": {"type": "string", "maxLength": 24},
                "action": {"enum": ["click", "type", "done"]},
                "index": {"enum": indices},
                "text": {"type": "string", "maxLength": 16},
                "answer": {"type": "string", "maxLength": 16}
            },
            "required": ["thought", "action"],
            "additionalProperties": false
        })
    }

    /// Decodes under `schema` with noise for logits (the model's own preferences play no part);
    /// returns the text of each trial.
    fn random_outputs(schema: serde_json::Value, trials: u64) -> Vec<String> {
        let path = SMOLLM2_135M.locate().expect("the test model");
        let gguf = Gguf::open(&path).unwrap();
        let tokenizer = Arc::new(Tokenizer::from_gguf(&gguf).unwrap());
        let constrainer = Constrainer::new(tokenizer.clone()).unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let vocab = tokenizer.vocab().len();
        (0..trials)
            .map(|trial| {
                let mut constrained = constrainer.json_schema(schema.clone()).unwrap();
                let mut sampler = Sampler::new(Sampling {
                    temperature: 1.0,
                    seed: trial,
                    ..Default::default()
                });
                let mut out = Vec::new();
                for _ in 0..400 {
                    let next = constrained.allowed().unwrap();
                    if matches!(next, Next::Stop) {
                        break;
                    }
                    let logits: Vec<f32> = (0..vocab).map(|_| rng.random::<f32>() * 8.0).collect();
                    let token = sampler.sample_allowed(&logits, |t| next.allows(t)).unwrap();
                    out.push(token);
                    if constrained.commit(token).unwrap() {
                        break;
                    }
                }
                let text = tokenizer.decode_lossy(&out, false, false);
                text.trim_end_matches(|c: char| !c.is_ascii_graphic() && c != '}')
                    .to_owned()
            })
            .collect()
    }

    /// A bare `"type": "integer"` lets a model write any number of digits (SmolLM2 once wrote
    /// -1.1e60 for a wait's milliseconds); bounds keep it to what the reader's type holds.
    #[test]
    fn integer_bounds_are_kept() {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {"ms": {"type": "integer", "minimum": 0, "maximum": 30000}},
            "required": ["ms"],
            "additionalProperties": false
        });
        for text in random_outputs(schema, 8) {
            let value: serde_json::Value = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{text:?} does not parse: {e}"));
            let ms = value["ms"].as_u64().unwrap_or_else(|| panic!("{text}"));
            assert!(ms <= 30000, "{text}");
        }
    }

    #[test]
    fn whatever_the_logits_the_output_parses_and_names_only_the_pages_elements() {
        let indices = [3, 7, 12];
        for (trial, text) in random_outputs(schema(&indices), 6).into_iter().enumerate() {
            let value: serde_json::Value = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("trial {trial}: {text:?} does not parse: {e}"));
            assert!(value["thought"].is_string(), "{value}");
            assert!(
                ["click", "type", "done"].contains(&value["action"].as_str().unwrap()),
                "{value}"
            );
            if let Some(i) = value.get("index") {
                assert!(indices.contains(&(i.as_u64().unwrap() as u32)), "{value}");
            }
        }
    }
}
