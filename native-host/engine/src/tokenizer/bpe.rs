//! Byte-level BPE over one pre-tokenized word, as llama.cpp's `llm_tokenizer_bpe_session` does it.
//!
//! The word (already spelled with GPT-2's byte characters) starts as one symbol per character.
//! The adjacent pair with the lowest merge rank is merged, leftmost first on ties, until no
//! adjacent pair has a rank. Each final symbol is then looked up; one that is not a token (only
//! possible with inconsistent merges) falls back to its single-byte ASCII characters, as in
//! llama.cpp.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};

use super::vocab::{TokenId, Vocab};

#[derive(Debug, Clone, Copy)]
struct Symbol {
    start: usize,
    len: usize,
    prev: Option<usize>,
    next: Option<usize>,
}

#[derive(Debug, PartialEq, Eq)]
struct Bigram {
    rank: u32,
    left: usize,
    right: usize,
    /// The merged text when queued; a pair whose symbols changed since is stale.
    text: String,
}

impl Ord for Bigram {
    /// The heap pops the lowest rank first, and on equal ranks the leftmost pair.
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .rank
            .cmp(&self.rank)
            .then_with(|| other.left.cmp(&self.left))
    }
}

impl PartialOrd for Bigram {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Appends the tokens of one byte-level `word` to `out`.
pub(crate) fn encode_word(
    word: &str,
    vocab: &Vocab,
    ranks: &HashMap<String, u32>,
    ignore_merges: bool,
    out: &mut Vec<TokenId>,
) {
    if ignore_merges {
        if let Some(id) = vocab.id(word) {
            out.push(id);
            return;
        }
    }
    let mut symbols: Vec<Symbol> = Vec::with_capacity(word.len());
    for (i, (start, c)) in word.char_indices().enumerate() {
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
    let text = |s: &Symbol| &word[s.start..s.start + s.len];
    let mut key = String::new();
    let mut queue = BinaryHeap::new();
    let mut push = |symbols: &[Symbol],
                    left: Option<usize>,
                    right: Option<usize>,
                    queue: &mut BinaryHeap<Bigram>| {
        let (Some(left), Some(right)) = (left, right) else {
            return;
        };
        key.clear();
        key.push_str(text(&symbols[left]));
        key.push(' ');
        key.push_str(text(&symbols[right]));
        if let Some(&rank) = ranks.get(&key) {
            let merged = &word[symbols[left].start..symbols[right].start + symbols[right].len];
            queue.push(Bigram {
                rank,
                left,
                right,
                text: merged.to_string(),
            });
        }
    };
    for i in 1..symbols.len() {
        push(&symbols, Some(i - 1), Some(i), &mut queue);
    }
    while let Some(bigram) = queue.pop() {
        let (l, r) = (symbols[bigram.left], symbols[bigram.right]);
        if l.len == 0 || r.len == 0 || l.next != Some(bigram.right) {
            continue;
        }
        if word[l.start..r.start + r.len] != bigram.text {
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
    for s in symbols.iter().filter(|s| s.len > 0) {
        let piece = text(s);
        match vocab.id(piece) {
            Some(id) => out.push(id),
            None => {
                // llama.cpp looks each byte up as a one-byte string: only ASCII ones can match.
                for b in piece.bytes().filter(u8::is_ascii) {
                    if let Some(id) = vocab.id(std::str::from_utf8(&[b]).expect("ascii")) {
                        out.push(id);
                    }
                }
            }
        }
    }
}
