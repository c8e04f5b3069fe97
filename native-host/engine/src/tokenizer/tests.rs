//! Tokenizers built from tiny hand-made GGUF vocabularies, for the behaviours the two real models
//! do not exercise (the SentencePiece space prefix, score ties, byte fallback, merge ranks).

use super::*;
use crate::gguf::tests::Builder;

fn spm(add_space_prefix: bool) -> Tokenizer {
    // id: 0 <unk>, 1 <s>, 2 </s>, 3 <0xC3>, 4 <0xA9>, then pieces with scores.
    let tokens = [
        "<unk>", "<s>", "</s>", "<0xC3>", "<0xA9>", "▁", "a", "b", "c", "ab", "bc", "▁a", "▁ab",
        "<ctl>", "[ud]",
    ];
    let scores = [
        0.0, 0.0, 0.0, 0.0, 0.0, -1.0, -2.0, -2.0, -2.0, -0.5, -0.5, -0.7, -0.1, 0.0, 0.0,
    ];
    // 1 normal, 2 unknown, 3 control, 4 user-defined, 6 byte
    let types = [2, 3, 3, 6, 6, 1, 1, 1, 1, 1, 1, 1, 1, 3, 4];
    let gguf = Gguf::from_bytes(
        Builder::new()
            .str("general.architecture", "llama")
            .str("tokenizer.ggml.model", "llama")
            .str_array("tokenizer.ggml.tokens", &tokens)
            .f32_array("tokenizer.ggml.scores", &scores)
            .i32_array("tokenizer.ggml.token_type", &types)
            .bool("tokenizer.ggml.add_space_prefix", add_space_prefix)
            .build(),
    )
    .unwrap();
    Tokenizer::from_gguf(&gguf).unwrap()
}

#[test]
fn spm_merges_by_score_and_breaks_ties_leftmost() {
    let t = spm(false);
    // "abc": "ab" and "bc" score the same; the leftmost pair wins, leaving "c".
    assert_eq!(t.encode("abc", false, false).unwrap(), [9, 8]);
    // "ab" (-0.5) beats "▁a" (-0.7); then "▁" + "ab" makes "▁ab" (-0.1).
    assert_eq!(t.encode(" ab", false, false).unwrap(), [12]);
}

#[test]
fn spm_falls_back_to_bytes_and_adds_bos() {
    let t = spm(false);
    // "é" is no token: its UTF-8 bytes are.
    assert_eq!(t.encode("é", true, false).unwrap(), [1, 3, 4]);
    assert_eq!(t.decode(&[1, 3, 4], true, false), "é".as_bytes());
    // A character with no byte token either becomes <unk>.
    assert_eq!(t.encode("z", false, false).unwrap(), [0]);
}

#[test]
fn spm_space_prefix_follows_bos_and_special_tokens_and_is_removed_on_decode() {
    let t = spm(true);
    // The prefix is added at the start and after a special token, not after text.
    assert_eq!(t.encode("ab", true, false).unwrap(), [1, 12]);
    assert_eq!(t.encode("ab<ctl>ab", false, true).unwrap(), [12, 13, 12]);
    assert_eq!(t.encode("ab[ud]ab", false, false).unwrap(), [12, 14, 12]);
    // Decoding drops the leading space again (and keeps it when BOS was removed).
    assert_eq!(t.decode(&[12, 9], false, false), b"abab");
    assert_eq!(t.decode(&[1, 12], true, false), b" ab");
}

#[test]
fn spm_control_tokens_need_parse_special_and_render_only_when_asked() {
    let t = spm(false);
    assert_eq!(t.encode("<ctl>", false, true).unwrap(), [13]);
    assert_ne!(t.encode("<ctl>", false, false).unwrap(), [13]);
    // user-defined tokens are always split out, and always rendered
    assert_eq!(t.encode("a[ud]", false, false).unwrap(), [6, 14]);
    assert_eq!(t.decode(&[6, 13, 14], false, false), b"a[ud]");
    assert_eq!(t.decode(&[6, 13, 14], false, true), b"a<ctl>[ud]");
}

fn bpe() -> Tokenizer {
    let tokens = ["<|end|>", "a", "b", "c", "Ġ", "ab", "bc", "abc", "Ġa"];
    let merges = ["b c", "a b", "ab c", "Ġ a"];
    let gguf = Gguf::from_bytes(
        Builder::new()
            .str("general.architecture", "llama")
            .str("tokenizer.ggml.model", "gpt2")
            .str("tokenizer.ggml.pre", "smollm")
            .str_array("tokenizer.ggml.tokens", &tokens)
            .str_array("tokenizer.ggml.merges", &merges)
            .i32_array("tokenizer.ggml.token_type", &[3, 1, 1, 1, 1, 1, 1, 1, 1])
            .build(),
    )
    .unwrap();
    Tokenizer::from_gguf(&gguf).unwrap()
}

#[test]
fn bpe_merges_by_rank_within_each_word() {
    let t = bpe();
    // rank 0 "b c" first, so "abc" becomes "a" + "bc" ("ab c" never applies).
    assert_eq!(t.encode("abc", false, false).unwrap(), [1, 6]);
    // alone, "a b" applies
    assert_eq!(t.encode("ab", false, false).unwrap(), [5]);
    // the space joins the next word ("Ġa") and words never merge across
    assert_eq!(t.encode("a a", false, false).unwrap(), [1, 8]);
    assert_eq!(t.decode(&[1, 8], false, false), b"a a");
    // "<|end|>" is an end-of-generation control token, found by its text
    assert!(t.vocab().is_eog(0));
    assert_eq!(t.encode("a<|end|>", false, true).unwrap(), [1, 0]);
}

#[test]
fn unsupported_tokenizers_are_refused_by_name() {
    let gguf = Gguf::from_bytes(
        Builder::new()
            .str("tokenizer.ggml.model", "rwkv")
            .str_array("tokenizer.ggml.tokens", &["a"])
            .build(),
    )
    .unwrap();
    let err = Tokenizer::from_gguf(&gguf).unwrap_err().to_string();
    assert_eq!(
        err,
        "tokenizer model \"rwkv\" is not supported (supported: gpt2, llama)"
    );
}
#[test]
fn clean_spaces_matches_llama_cpp() {
    let mut t = b"Hello , world ! it 's a ' quote ' and we 're done .".to_vec();
    clean_spaces(&mut t);
    assert_eq!(
        String::from_utf8(t).unwrap(),
        "Hello, world! it's a'quote'and we're done."
    );
}

#[test]
fn byte_level_decoding_spells_unknown_characters_like_llama_cpp() {
    assert_eq!(decode_byte_level("Ġhi"), b" hi");
    assert_eq!(
        decode_byte_level("€"),
        b"[UNK_BYTE_0xe282ac\xe2\x82\xac]".to_vec()
    );
}
