//! Byte-level BPE pre-tokenizers: the regexes that cut text into words before merging.
//!
//! The GGUF names its pre-tokenizer (`tokenizer.ggml.pre`); the regexes are llama.cpp's for that
//! name (llama-vocab.cpp), applied the way llama.cpp applies them (unicode.cpp): each regex in
//! turn splits every fragment left by the previous one, and both the matches and the text between
//! matches become fragments. That is why SmolLM2's `\p{N}` pass puts every digit — and the text
//! around it — in a word of its own before the GPT-2 pass runs.
//!
//! `fancy-regex` is used because the GPT-2 pattern needs look-ahead (`\s+(?!\S)`). llama.cpp
//! runs hand-written equivalents of some patterns; they agree with the regexes except on
//! unassigned code points, which llama.cpp puts in words of their own.

use fancy_regex::Regex;

use super::TokenizerError;

const GPT2_WORDS: &str = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)";
const LLAMA3_WORDS: &str = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
const QWEN2_WORDS: &str = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// A named pre-tokenizer and the vocabulary settings llama.cpp ties to that name.
#[derive(Debug)]
pub struct PreTokenizer {
    pub name: String,
    regexes: Vec<Regex>,
    /// Whether decoding tidies spaces before punctuation (llama.cpp's `clean_spaces`).
    pub(crate) clean_spaces: bool,
    /// Whether a BOS token is added by default.
    pub(crate) add_bos: bool,
    /// Whether a word that is a whole token skips merging.
    pub(crate) ignore_merges: bool,
}

impl PreTokenizer {
    /// The pre-tokenizer llama.cpp uses for `name`; names it does not know — and ones whose
    /// llama.cpp behaviour we have not reproduced — are refused.
    pub fn by_name(name: &str) -> Result<Self, TokenizerError> {
        let (patterns, clean_spaces, add_bos, ignore_merges): (&[&str], bool, bool, bool) =
            match name {
                "default" => (
                    &[
                        r"[\p{P}\$\+<=>\^~\|]+",
                        GPT2_WORDS,
                        r"\p{N}+",
                        "[0-9][0-9][0-9]",
                    ],
                    true,
                    false,
                    false,
                ),
                "smollm" | "command-r" => (&[r"\p{N}", GPT2_WORDS], false, false, false),
                "starcoder" | "refact" | "codeshell" | "exaone" | "minerva" => {
                    (&[r"\p{N}", GPT2_WORDS], true, false, false)
                }
                "llama3" | "llama-v3" | "llama-bpe" | "falcon3" | "falcon-h1" | "pixtral"
                | "midm-2.0" | "lfm2" => (&[LLAMA3_WORDS], true, true, true),
                "qwen2" | "deepseek-r1-qwen" => (&[QWEN2_WORDS], false, false, false),
                other => return Err(TokenizerError::UnsupportedPreTokenizer(other.to_string())),
            };
        let regexes = patterns
            .iter()
            .map(|p| {
                Regex::new(p)
                    .map_err(|e| TokenizerError::Invalid(format!("pre-tokenizer regex {p:?}: {e}")))
            })
            .collect::<Result<_, _>>()?;
        Ok(Self {
            name: name.to_string(),
            regexes,
            clean_spaces,
            add_bos,
            ignore_merges,
        })
    }

    /// Cuts `text` into words (non-empty, in order, covering all of it).
    pub fn split<'t>(&self, text: &'t str) -> Result<Vec<&'t str>, TokenizerError> {
        let mut fragments: Vec<&'t str> = vec![text];
        for re in &self.regexes {
            let mut next = Vec::with_capacity(fragments.len() * 2);
            for fragment in fragments {
                let mut last = 0;
                for m in re.find_iter(fragment) {
                    let m = m.map_err(|e| TokenizerError::Regex(e.to_string()))?;
                    if m.start() > last {
                        next.push(&fragment[last..m.start()]);
                    }
                    if m.end() > m.start() {
                        next.push(m.as_str());
                    }
                    last = m.end();
                }
                if last < fragment.len() {
                    next.push(&fragment[last..]);
                }
            }
            fragments = next;
        }
        Ok(fragments)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(name: &str, text: &str) -> Vec<String> {
        PreTokenizer::by_name(name)
            .unwrap()
            .split(text)
            .unwrap()
            .into_iter()
            .map(String::from)
            .collect()
    }

    #[test]
    fn smollm_isolates_digits_then_splits_gpt2_words() {
        assert_eq!(
            split("smollm", "Hello world's 2024!!  ok\n"),
            ["Hello", " world", "'s", " ", "2", "0", "2", "4", "!!", " ", " ok", "\n"]
        );
    }

    #[test]
    fn whitespace_runs_leave_their_last_space_to_the_next_word() {
        assert_eq!(split("smollm", "a   b"), ["a", "  ", " b"]);
        assert_eq!(split("smollm", "a   "), ["a", "   "]);
        assert_eq!(split("smollm", "x\n\ty"), ["x", "\n", "\t", "y"]);
    }

    #[test]
    fn llama3_groups_digits_by_three() {
        assert_eq!(split("llama3", "12345 abc"), ["123", "45", " abc"]);
    }

    #[test]
    fn unknown_names_are_refused() {
        let err = PreTokenizer::by_name("tekken").unwrap_err();
        assert!(err.to_string().contains("\"tekken\""), "{err}");
    }
}
