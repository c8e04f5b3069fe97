//! Splitting special tokens out of raw text before tokenising, as llama.cpp's
//! `tokenizer_st_partition` does.
//!
//! Control and unknown tokens (`<|im_start|>`, `<start_of_turn>`) are only recognised when the
//! caller asks for special tokens to be parsed — text from a web page must not be able to forge a
//! turn boundary. User-defined tokens (Gemma's runs of spaces and newlines, `[multimodal]`) are
//! always split out: they are ordinary text that the vocabulary spells as one token.

use super::vocab::{TokenAttr, TokenId, Vocab};

/// A piece of the input: text still to tokenise, or a token already recognised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fragment<'a> {
    Text(&'a str),
    Token(TokenId),
}

/// Splits `text` at every occurrence of a special token, longest tokens first.
pub(crate) fn partition<'a>(
    text: &'a str,
    vocab: &Vocab,
    parse_special: bool,
) -> Vec<Fragment<'a>> {
    let mut fragments = Vec::new();
    if text.is_empty() {
        return fragments;
    }
    fragments.push(Fragment::Text(text));
    // Every fragment is a piece of `text`, so a token absent from `text` is absent from all of
    // them: one pass finds the few tokens worth splitting on.
    let present = match &vocab.special_matcher {
        Some(matcher) => {
            let mut present = vec![false; vocab.special_cache.len()];
            for m in matcher.find_overlapping_iter(text) {
                present[m.pattern().as_usize()] = true;
            }
            present
        }
        None => vec![true; vocab.special_cache.len()],
    };
    for (i, &id) in vocab.special_cache.iter().enumerate() {
        if !present[i] {
            continue;
        }
        let token = &vocab.tokens[id as usize];
        if !parse_special
            && token
                .attr
                .intersects(TokenAttr::CONTROL | TokenAttr::UNKNOWN)
        {
            continue;
        }
        let needle = token.text.as_str();
        let mut next = Vec::with_capacity(fragments.len() + 2);
        for fragment in fragments {
            let Fragment::Text(mut rest) = fragment else {
                next.push(fragment);
                continue;
            };
            while let Some(at) = rest.find(needle) {
                if at > 0 {
                    next.push(Fragment::Text(&rest[..at]));
                }
                next.push(Fragment::Token(id));
                rest = &rest[at + needle.len()..];
            }
            if !rest.is_empty() {
                next.push(Fragment::Text(rest));
            }
        }
        fragments = next;
    }
    fragments
}
