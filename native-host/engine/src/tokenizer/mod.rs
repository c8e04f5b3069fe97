//! The model's tokenizer, built from the GGUF alone, giving the same token ids as llama.cpp.
//!
//! Two kinds of vocabulary are supported: `gpt2` (byte-level BPE with a named pre-tokenizer, as
//! SmolLM2, Llama 3 and Qwen 2.5 use) and `llama` (SentencePiece-style, as Gemma 3 uses). The
//! behaviour — special-token splitting, BOS/EOS, the SentencePiece space prefix, detokenisation —
//! follows llama.cpp's llama-vocab.cpp, because llama.cpp is the reference the engine's output is
//! compared with (tests/reference/*.json).
//!
//! Hand-written rather than the `tokenizers` crate: a GGUF carries llama.cpp's view of the
//! tokenizer (scores instead of SentencePiece merges, token types instead of `added_tokens`), and
//! llama.cpp's algorithms over that data differ from Hugging Face's in ways that change ids.

mod bpe;
mod byte_level;
mod pretokenize;
mod special;
mod spm;
mod vocab;

pub use pretokenize::PreTokenizer;
pub use vocab::{TokenAttr, TokenData, TokenId, Vocab};

use crate::gguf::{Gguf, GgufError};
use special::Fragment;
use vocab::VocabKind;

/// Why a tokenizer could not be built or run.
#[derive(Debug, thiserror::Error)]
pub enum TokenizerError {
    #[error("reading the tokenizer from the GGUF: {0}")]
    Gguf(#[from] GgufError),
    #[error("tokenizer model {0:?} is not supported (supported: gpt2, llama)")]
    UnsupportedModel(String),
    #[error("pre-tokenizer {0:?} is not supported (supported: default, smollm, command-r, starcoder, refact, codeshell, exaone, minerva, llama3 and its aliases, qwen2, deepseek-r1-qwen)")]
    UnsupportedPreTokenizer(String),
    #[error("the GGUF's tokenizer is invalid: {0}")]
    Invalid(String),
    #[error("the pre-tokenizer regex failed: {0}")]
    Regex(String),
}

/// A tokenizer for one model.
#[derive(Debug)]
pub struct Tokenizer {
    vocab: Vocab,
}

impl Tokenizer {
    pub fn from_gguf(gguf: &Gguf) -> Result<Self, TokenizerError> {
        let vocab = Vocab::from_metadata(gguf.metadata())?;
        tracing::debug!(
            tokens = vocab.len(),
            special = vocab.special_cache.len(),
            "tokenizer loaded"
        );
        Ok(Self { vocab })
    }

    pub fn vocab(&self) -> &Vocab {
        &self.vocab
    }

    /// Token ids for `text`, like llama.cpp's `llama_tokenize`.
    ///
    /// `add_special` adds BOS/EOS where the model asks for them; `parse_special` recognises
    /// control tokens written in the text (only for text the program wrote, such as a rendered
    /// chat template — never for page content).
    pub fn encode(
        &self,
        text: &str,
        add_special: bool,
        parse_special: bool,
    ) -> Result<Vec<TokenId>, TokenizerError> {
        let v = &self.vocab;
        let mut out = Vec::with_capacity(text.len() / 3 + 2);
        if add_special && v.add_bos {
            out.extend(v.bos);
        }
        let fragments = special::partition(text, v, parse_special);
        match &v.kind {
            VocabKind::Spm => {
                let mut prev_special = true;
                let mut buf = String::new();
                for fragment in fragments {
                    match fragment {
                        Fragment::Text(t) => {
                            buf.clear();
                            if v.add_space_prefix && prev_special {
                                buf.push(' ');
                            }
                            buf.push_str(t);
                            let escaped = buf.replace(' ', "\u{2581}");
                            spm::encode(&escaped, v, &mut out);
                            prev_special = false;
                        }
                        Fragment::Token(id) => {
                            out.push(id);
                            prev_special = true;
                        }
                    }
                }
            }
            VocabKind::Bpe {
                pre,
                ranks,
                ignore_merges,
            } => {
                for fragment in fragments {
                    match fragment {
                        Fragment::Text(t) => {
                            for word in pre.split(t)? {
                                let word = byte_level::encode(word);
                                bpe::encode_word(&word, v, ranks, *ignore_merges, &mut out);
                            }
                        }
                        Fragment::Token(id) => out.push(id),
                    }
                }
            }
        }
        if add_special && v.add_eos {
            out.extend(v.eos);
        }
        Ok(out)
    }

    /// The bytes one token stands for, like llama.cpp's `llama_token_to_piece` (no lstrip).
    /// Control and unknown tokens are empty unless `special`. A byte token can be part of a
    /// UTF-8 sequence, hence bytes rather than a string.
    pub fn token_to_piece(&self, id: TokenId, special: bool) -> Vec<u8> {
        let Some(token) = self.vocab.token(id) else {
            return Vec::new();
        };
        let attr = token.attr;
        let special_attr = TokenAttr::UNKNOWN | TokenAttr::CONTROL;
        if !special && attr.intersects(special_attr) {
            return Vec::new();
        }
        if attr.intersects(special_attr | TokenAttr::USER_DEFINED) {
            return token.text.as_bytes().to_vec();
        }
        if attr.intersects(TokenAttr::NORMAL) {
            return match self.vocab.kind {
                VocabKind::Spm => token.text.replace('\u{2581}', " ").into_bytes(),
                VocabKind::Bpe { .. } => decode_byte_level(&token.text),
            };
        }
        if attr.intersects(TokenAttr::BYTE) {
            let hex = token.text.get(3..5).unwrap_or("");
            return u8::from_str_radix(hex, 16)
                .map(|b| vec![b])
                .unwrap_or_default();
        }
        Vec::new()
    }

    /// The text of `ids`, like llama.cpp's `llama_detokenize`: bytes, since a sequence cut
    /// mid-character is not valid UTF-8. `remove_special` drops a leading BOS / trailing EOS the
    /// model adds; `unparse_special` renders control tokens as their text.
    pub fn decode(&self, ids: &[TokenId], remove_special: bool, unparse_special: bool) -> Vec<u8> {
        let v = &self.vocab;
        let mut ids = ids;
        let mut remove_space = v.add_space_prefix;
        if remove_special && v.add_bos && !ids.is_empty() && Some(ids[0]) == v.bos {
            remove_space = false;
            ids = &ids[1..];
        }
        if remove_special && v.add_eos && !ids.is_empty() && Some(ids[ids.len() - 1]) == v.eos {
            ids = &ids[..ids.len() - 1];
        }
        let mut out = Vec::new();
        for &id in ids {
            let piece = self.token_to_piece(id, unparse_special);
            let piece = match piece.first() {
                Some(b' ') if remove_space => &piece[1..],
                _ => &piece[..],
            };
            out.extend_from_slice(piece);
            remove_space = false;
        }
        if v.clean_spaces {
            clean_spaces(&mut out);
        }
        out
    }

    /// [`Self::decode`] as a string, with invalid UTF-8 replaced (for display and tests).
    pub fn decode_lossy(
        &self,
        ids: &[TokenId],
        remove_special: bool,
        unparse_special: bool,
    ) -> String {
        String::from_utf8_lossy(&self.decode(ids, remove_special, unparse_special)).into_owned()
    }
}

/// A byte-level BPE token's bytes. Characters outside GPT-2's byte alphabet are spelled as
/// llama.cpp spells them.
fn decode_byte_level(text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    for c in text.chars() {
        match byte_level::char_to_byte(c) {
            Some(b) => out.push(b),
            None => {
                out.extend_from_slice(b"[UNK_BYTE_0x");
                let mut buf = [0; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.extend_from_slice(format!("{b:02x}").as_bytes());
                }
                out.extend_from_slice(text.as_bytes());
                out.push(b']');
            }
        }
    }
    out
}

/// llama.cpp's `clean_up_tokenization_spaces`: drops the space before `? ! . ,`, around a lone
/// apostrophe, and before the contractions `'s 'm 're 've`.
fn clean_spaces(text: &mut Vec<u8>) {
    // first pass: " ?", " !", " .", " ,"
    let mut out: Vec<u8> = Vec::with_capacity(text.len());
    for (i, &x) in text.iter().enumerate() {
        if i > 0 && text[i - 1] == b' ' && matches!(x, b'?' | b'!' | b'.' | b',') {
            out.pop();
        }
        out.push(x);
    }
    // second pass: " ' " → "'"
    let t = std::mem::take(&mut out);
    let mut i = 0;
    while i < t.len() {
        let x = t[i];
        if i > 0 && x == b'\'' && i + 1 < t.len() && t[i - 1] == b' ' && t[i + 1] == b' ' {
            out.pop();
            out.push(x);
            i += 2;
            continue;
        }
        out.push(x);
        i += 1;
    }
    // third pass: " 's", " 'm", " 're", " 've"
    let t = std::mem::take(&mut out);
    for (i, &x) in t.iter().enumerate() {
        if i > 0 && t[i - 1] == b' ' && x == b'\'' && i + 1 < t.len() {
            let x1 = t[i + 1];
            let contraction = matches!(x1, b's' | b'm')
                || (i + 2 < t.len() && matches!((x1, t[i + 2]), (b'r', b'e') | (b'v', b'e')));
            if contraction {
                out.pop();
            }
        }
        out.push(x);
    }
    *text = out;
}

#[cfg(test)]
mod tests;
