//! SentencePiece-style tokenisation as llama.cpp's `llm_tokenizer_spm_session` does it.
//!
//! GGUF vocabularies of type "llama" carry a score per token but no merge list. llama.cpp starts
//! from one symbol per UTF-8 character and repeatedly merges the adjacent pair whose concatenation
//! is the vocabulary token with the highest score (leftmost on ties). Characters that end up as no
//! token are emitted as byte tokens `<0xXX>`. This is not Hugging Face's Unigram (Viterbi)
//! algorithm, which is why the engine implements it rather than using the `tokenizers` crate.
//!
//! Every merge produces a vocabulary token, so llama.cpp's re-segmentation of unknown merged
//! symbols never applies: only single characters fall back to bytes.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::vocab::{TokenId, Vocab};

#[derive(Debug, Clone, Copy)]
struct Symbol {
    start: usize,
    len: usize,
    prev: Option<usize>,
    next: Option<usize>,
}

#[derive(Debug)]
struct Bigram {
    score: f32,
    left: usize,
    right: usize,
    size: usize,
}

impl PartialEq for Bigram {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Bigram {}

impl Ord for Bigram {
    /// Highest score first; on equal scores the leftmost pair.
    fn cmp(&self, other: &Self) -> Ordering {
        self.score
            .total_cmp(&other.score)
            .then_with(|| other.left.cmp(&self.left))
    }
}

impl PartialOrd for Bigram {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Appends the tokens of `text` (spaces already replaced by U+2581) to `out`.
pub(crate) fn encode(text: &str, vocab: &Vocab, out: &mut Vec<TokenId>) {
    let mut symbols: Vec<Symbol> = Vec::with_capacity(text.len());
    for (i, (start, c)) in text.char_indices().enumerate() {
        symbols.push(Symbol {
            start,
            len: c.len_utf8(),
            prev: i.checked_sub(1),
            next: None,
        });
        if i > 0 {
            symbols[i - 1].next = Some(i);
        }
    }
    let mut queue = BinaryHeap::new();
    let push = |symbols: &[Symbol],
                left: Option<usize>,
                right: Option<usize>,
                queue: &mut BinaryHeap<Bigram>| {
        let (Some(left), Some(right)) = (left, right) else {
            return;
        };
        let merged = &text[symbols[left].start..symbols[right].start + symbols[right].len];
        if let Some(id) = vocab.id(merged) {
            queue.push(Bigram {
                score: vocab.tokens[id as usize].score,
                left,
                right,
                size: merged.len(),
            });
        }
    };
    for i in 1..symbols.len() {
        push(&symbols, Some(i - 1), Some(i), &mut queue);
    }
    while let Some(bigram) = queue.pop() {
        let (l, r) = (symbols[bigram.left], symbols[bigram.right]);
        if l.len == 0 || r.len == 0 || l.len + r.len != bigram.size {
            continue;
        }
        symbols[bigram.left].len += r.len;
        symbols[bigram.right].len = 0;
        symbols[bigram.left].next = r.next;
        if let Some(n) = r.next {
            symbols[n].prev = Some(bigram.left);
        }
        let left = symbols[bigram.left];
        push(&symbols, left.prev, Some(bigram.left), &mut queue);
        push(&symbols, Some(bigram.left), left.next, &mut queue);
    }
    let mut i = if symbols.is_empty() { None } else { Some(0) };
    while let Some(at) = i {
        let s = symbols[at];
        let piece = &text[s.start..s.start + s.len];
        match vocab.id(piece) {
            Some(id) => out.push(id),
            None => {
                for b in piece.bytes() {
                    match vocab.byte_token(b).or(vocab.unk) {
                        Some(id) => out.push(id),
                        None => tracing::warn!(byte = b, "no token for a byte; dropping it"),
                    }
                }
            }
        }
        i = s.next;
    }
}
