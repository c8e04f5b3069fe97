//! The vocabulary as llama.cpp builds it from a GGUF: token texts, scores, attributes, the special
//! token ids, and the fix-ups llama.cpp applies by token text (which tokens end a turn, which are
//! treated as control tokens). Tokenisation depends on those fix-ups — a token llama.cpp forces to
//! "control" is only split out of text when special tokens are parsed — so they are reproduced here.

use std::collections::{BTreeSet, HashMap};

use crate::gguf::{Array, Metadata};

use super::pretokenize::PreTokenizer;
use super::TokenizerError;

/// A token id.
pub type TokenId = u32;

/// llama.cpp's token attributes (`llama_token_attr`), a bit set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TokenAttr(u16);

impl TokenAttr {
    pub const UNDEFINED: Self = Self(0);
    pub const UNKNOWN: Self = Self(1 << 0);
    pub const UNUSED: Self = Self(1 << 1);
    pub const NORMAL: Self = Self(1 << 2);
    pub const CONTROL: Self = Self(1 << 3);
    pub const USER_DEFINED: Self = Self(1 << 4);
    pub const BYTE: Self = Self(1 << 5);

    /// Whether any bit of `other` is set.
    pub fn intersects(self, other: Self) -> bool {
        self.0 & other.0 != 0
    }

    fn insert(&mut self, other: Self) {
        self.0 |= other.0;
    }

    /// The attribute for a GGUF `tokenizer.ggml.token_type` value (llama_token_type).
    fn from_token_type(t: i32) -> Self {
        match t {
            1 => Self::NORMAL,
            2 => Self::UNKNOWN,
            3 => Self::CONTROL,
            4 => Self::USER_DEFINED,
            5 => Self::UNUSED,
            6 => Self::BYTE,
            _ => Self::UNDEFINED,
        }
    }
}

impl std::ops::BitOr for TokenAttr {
    type Output = Self;
    fn bitor(self, rhs: Self) -> Self {
        Self(self.0 | rhs.0)
    }
}

/// One vocabulary entry.
#[derive(Debug, Clone)]
pub struct TokenData {
    pub text: String,
    pub score: f32,
    pub attr: TokenAttr,
}

/// Which tokenisation algorithm the vocabulary uses (`tokenizer.ggml.model`).
#[derive(Debug)]
pub enum VocabKind {
    /// "gpt2": byte-level BPE over pre-tokenized words, merges ranked by `tokenizer.ggml.merges`.
    Bpe {
        pre: PreTokenizer,
        /// "left right" → rank (the merge line itself; byte-level tokens never hold a space).
        ranks: HashMap<String, u32>,
        /// Words that are whole tokens skip merging (llama3-style vocabularies).
        ignore_merges: bool,
    },
    /// "llama": SentencePiece-style merging by score, spaces as U+2581, byte fallback `<0xXX>`.
    Spm,
}

/// The vocabulary and the tokenizer settings read with it.
#[derive(Debug)]
pub struct Vocab {
    pub(crate) tokens: Vec<TokenData>,
    pub(crate) ids: HashMap<String, TokenId>,
    pub(crate) kind: VocabKind,
    pub bos: Option<TokenId>,
    pub eos: Option<TokenId>,
    pub eot: Option<TokenId>,
    pub eom: Option<TokenId>,
    pub unk: Option<TokenId>,
    pub pad: Option<TokenId>,
    pub add_bos: bool,
    pub add_eos: bool,
    pub(crate) add_space_prefix: bool,
    pub(crate) clean_spaces: bool,
    /// Tokens matched in raw text before tokenising (control, user-defined, unknown), longest first.
    pub(crate) special_cache: Vec<TokenId>,
    /// Finds which of `special_cache` occur in a text (pattern i is `special_cache[i]`).
    pub(crate) special_matcher: Option<aho_corasick::AhoCorasick>,
    /// Tokens that end generation.
    pub eog: BTreeSet<TokenId>,
}

/// The defaults of a tokenizer model type, as llama.cpp sets them before reading the GGUF's
/// keys; for byte-level BPE, with its pre-tokenizer and merge ranks.
fn model_defaults(m: &Metadata, model: &str) -> Result<Defaults, TokenizerError> {
    Ok(match model {
        "gpt2" => {
            let merges = match m.array("tokenizer.ggml.merges")? {
                Array::String(lines) => lines,
                other => {
                    return Err(TokenizerError::Invalid(format!(
                        "tokenizer.ggml.merges holds {} values, not strings",
                        other.element_type()
                    )))
                }
            };
            let pre_name = match m.opt_str("tokenizer.ggml.pre")? {
                Some(name) => name,
                None => {
                    tracing::warn!("the GGUF names no pre-tokenizer; using llama.cpp's default");
                    "default"
                }
            };
            let pre = PreTokenizer::by_name(pre_name)?;
            let mut ranks = HashMap::with_capacity(merges.len());
            for (rank, line) in merges.iter().enumerate() {
                // llama.cpp splits a merge at its first space after the first byte; with no
                // such space the pair is ("", ""), which never matches.
                if line.as_bytes().iter().skip(1).any(|&b| b == b' ') {
                    ranks.entry(line.clone()).or_insert(rank as u32);
                }
            }
            Defaults {
                bos: Some(11),
                eos: Some(11),
                unk: None,
                add_bos: pre.add_bos,
                add_space_prefix: false,
                clean_spaces: pre.clean_spaces,
                kind: VocabKind::Bpe {
                    ignore_merges: pre.ignore_merges,
                    pre,
                    ranks,
                },
            }
        }
        "llama" => Defaults {
            bos: Some(1),
            eos: Some(2),
            unk: Some(0),
            add_bos: true,
            add_space_prefix: true,
            clean_spaces: false,
            kind: VocabKind::Spm,
        },
        other => return Err(TokenizerError::UnsupportedModel(other.to_string())),
    })
}

/// Every token's text, score and attributes, and the ids by text. An empty text becomes
/// `[EMPTY_i]`, as llama.cpp names it; a text twice is an error.
fn token_table(
    m: &Metadata,
    texts: &[String],
) -> Result<(Vec<TokenData>, HashMap<String, TokenId>), TokenizerError> {
    let n = texts.len();
    let scores: Option<Vec<f32>> = match m.opt_array("tokenizer.ggml.scores")? {
        None => None,
        Some(Array::F32(s)) => Some(s.clone()),
        Some(Array::I32(s)) => Some(s.iter().map(|&v| v as f32).collect()),
        Some(other) => {
            return Err(TokenizerError::Invalid(format!(
                "tokenizer.ggml.scores holds {} values",
                other.element_type()
            )))
        }
    };
    let types: Option<&Vec<i32>> = match m.opt_array("tokenizer.ggml.token_type")? {
        None => None,
        Some(Array::I32(t)) => Some(t),
        Some(other) => {
            return Err(TokenizerError::Invalid(format!(
                "tokenizer.ggml.token_type holds {} values, not i32",
                other.element_type()
            )))
        }
    };
    for (key, len) in [
        ("tokenizer.ggml.scores", scores.as_ref().map(Vec::len)),
        ("tokenizer.ggml.token_type", types.map(Vec::len)),
    ] {
        if let Some(len) = len.filter(|&l| l < n) {
            return Err(TokenizerError::Invalid(format!(
                "{key} has {len} entries for {n} tokens"
            )));
        }
    }
    let mut tokens = Vec::with_capacity(n);
    let mut ids = HashMap::with_capacity(n);
    for (i, text) in texts.iter().enumerate() {
        let text = if text.is_empty() {
            format!("[EMPTY_{i}]")
        } else {
            text.clone()
        };
        if ids.insert(text.clone(), i as TokenId).is_some() {
            return Err(TokenizerError::Invalid(format!(
                "token {text:?} appears twice in the vocabulary"
            )));
        }
        tokens.push(TokenData {
            text,
            score: scores.as_ref().map_or(0.0, |s| s[i]),
            attr: types.map_or(TokenAttr::NORMAL, |t| TokenAttr::from_token_type(t[i])),
        });
    }
    Ok((tokens, ids))
}

/// The special tokens' ids: the model type's defaults, then what the GGUF names, each kept only
/// within the vocabulary's `n` tokens.
struct Specials {
    bos: Option<TokenId>,
    eos: Option<TokenId>,
    eot: Option<TokenId>,
    eom: Option<TokenId>,
    unk: Option<TokenId>,
    pad: Option<TokenId>,
}

impl Specials {
    fn read(
        m: &Metadata,
        n: usize,
        bos: Option<TokenId>,
        eos: Option<TokenId>,
        unk: Option<TokenId>,
    ) -> Result<Self, TokenizerError> {
        let in_range = |id: Option<TokenId>| id.filter(|&i| (i as usize) < n);
        let read_id =
            |key: &str, current: Option<TokenId>| -> Result<Option<TokenId>, TokenizerError> {
                Ok(match m.opt_u32(key)? {
                    Some(id) if (id as usize) < n => Some(id),
                    Some(id) => {
                        tracing::warn!(
                            key,
                            id,
                            "special token id is outside the vocabulary; ignoring it"
                        );
                        current
                    }
                    None => current,
                })
            };
        Ok(Self {
            bos: read_id("tokenizer.ggml.bos_token_id", in_range(bos))?,
            eos: read_id("tokenizer.ggml.eos_token_id", in_range(eos))?,
            eot: read_id("tokenizer.ggml.eot_token_id", None)?,
            eom: read_id("tokenizer.ggml.eom_token_id", None)?,
            unk: read_id("tokenizer.ggml.unknown_token_id", in_range(unk))?,
            pad: read_id("tokenizer.ggml.padding_token_id", None)?,
        })
    }
}

/// The per-model-type defaults llama.cpp starts from.
struct Defaults {
    bos: Option<TokenId>,
    eos: Option<TokenId>,
    unk: Option<TokenId>,
    add_bos: bool,
    add_space_prefix: bool,
    clean_spaces: bool,
    kind: VocabKind,
}

const EOT_TEXTS: &[&str] = &[
    "<|eot_id|>",
    "<|im_end|>",
    "<|end|>",
    "<end_of_turn>",
    "<|endoftext|>",
    "<|end_of_text|>",
    "<EOT>",
    "_<EOT>",
    "[EOT]",
    "<｜end▁of▁sentence｜>",
    "<end_of_utterance>",
];
const EOM_TEXTS: &[&str] = &["<|eom_id|>"];
const FIM_PRE_TEXTS: &[&str] = &[
    "<|fim_prefix|>",
    "<fim-prefix>",
    "<fim_prefix>",
    "<｜fim▁begin｜>",
    "<PRE>",
    "▁<PRE>",
    "<|code_prefix|>",
    "<|prefix|>",
];
const FIM_SUF_TEXTS: &[&str] = &[
    "<|fim_suffix|>",
    "<fim-suffix>",
    "<fim_suffix>",
    "<｜fim▁hole｜>",
    "<SUF>",
    "▁<SUF>",
    "<|code_suffix|>",
    "<|suffix|>",
];
const FIM_MID_TEXTS: &[&str] = &[
    "<|fim_middle|>",
    "<fim-middle>",
    "<fim_middle>",
    "<｜fim▁end｜>",
    "<MID>",
    "▁<MID>",
    "<|code_middle|>",
    "<|middle|>",
];
const FIM_PAD_TEXTS: &[&str] = &["<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"];
const FIM_REP_TEXTS: &[&str] = &[
    "<|fim_repo|>",
    "<|repo_name|>",
    "<fim-repo>",
    "<REPO>",
    "<reponame>",
];
const FIM_SEP_TEXTS: &[&str] = &["<|file_sep|>"];
/// Texts llama.cpp treats as end-of-generation whatever their id.
const EOG_TEXTS: &[&str] = &[
    "<|eot_id|>",
    "<|im_end|>",
    "<|end|>",
    "<|return|>",
    "<|call|>",
    "<|flush|>",
    "<|calls|>",
    "<end_of_turn>",
    "<|endoftext|>",
    "</s>",
    "<|eom_id|>",
    "<EOT>",
    "_<EOT>",
    "[EOT]",
    "<end_of_utterance>",
];
/// gpt-oss's structural tokens, which llama.cpp always renders (user-defined).
const ALWAYS_RENDERED: &[&str] = &["<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"];

impl Vocab {
    pub fn from_metadata(m: &Metadata) -> Result<Self, TokenizerError> {
        let model = m.str("tokenizer.ggml.model")?;
        let texts = match m.array("tokenizer.ggml.tokens")? {
            Array::String(t) => t,
            other => {
                return Err(TokenizerError::Invalid(format!(
                    "tokenizer.ggml.tokens holds {} values, not strings",
                    other.element_type()
                )))
            }
        };
        let Defaults {
            bos,
            eos,
            unk,
            mut add_bos,
            mut add_space_prefix,
            clean_spaces,
            kind,
        } = model_defaults(m, model)?;
        if let Some(v) = m.opt_bool("tokenizer.ggml.add_space_prefix")? {
            add_space_prefix = v;
        }
        let (tokens, ids) = token_table(m, texts)?;
        let special = Specials::read(m, texts.len(), bos, eos, unk)?;
        if let Some(v) = m.opt_bool("tokenizer.ggml.add_bos_token")? {
            add_bos = v;
        }
        let add_eos = m.opt_bool("tokenizer.ggml.add_eos_token")?.unwrap_or(false);

        let mut vocab = Vocab {
            tokens,
            ids,
            kind,
            bos: special.bos,
            eos: special.eos,
            eot: special.eot,
            eom: special.eom,
            unk: special.unk,
            pad: special.pad,
            add_bos,
            add_eos,
            add_space_prefix,
            clean_spaces,
            special_cache: Vec::new(),
            special_matcher: None,
            eog: BTreeSet::new(),
        };
        vocab.apply_text_fixups();
        vocab.build_special_cache()?;
        Ok(vocab)
    }

    /// llama.cpp recognises some special tokens by their text and makes sure they are control
    /// tokens; it also collects the end-of-generation set. Where several texts could match,
    /// llama.cpp takes whichever its hash map yields first; we take the first in list order.
    fn apply_text_fixups(&mut self) {
        let find_first =
            |v: &Self, texts: &[&str]| texts.iter().find_map(|t| v.ids.get(*t).copied());
        let mut force_control = Vec::new();
        if self.eot.is_none() {
            self.eot = find_first(self, EOT_TEXTS);
            force_control.extend(self.eot);
        }
        if self.eom.is_none() {
            self.eom = find_first(self, EOM_TEXTS);
            force_control.extend(self.eom);
        }
        let mut fim_eog = Vec::new();
        for (i, texts) in [
            FIM_PRE_TEXTS,
            FIM_SUF_TEXTS,
            FIM_MID_TEXTS,
            FIM_PAD_TEXTS,
            FIM_REP_TEXTS,
            FIM_SEP_TEXTS,
        ]
        .into_iter()
        .enumerate()
        {
            if let Some(id) = find_first(self, texts) {
                force_control.push(id);
                // pad, repo and file-separator tokens end generation
                if i >= 3 {
                    fim_eog.push(id);
                }
            }
        }
        for text in EOG_TEXTS {
            if let Some(&id) = self.ids.get(*text) {
                self.eog.insert(id);
                force_control.push(id);
            }
        }
        for id in force_control {
            let attr = &mut self.tokens[id as usize].attr;
            if !attr.intersects(TokenAttr::CONTROL) {
                tracing::debug!(
                    id,
                    "control-looking token was not marked control; treating it as control"
                );
                attr.insert(TokenAttr::CONTROL);
            }
        }
        // Control tokens named "unused…" are unused (Gemma has thousands).
        for t in &mut self.tokens {
            if t.attr.intersects(TokenAttr::CONTROL) && t.text.contains("unused") {
                t.attr.insert(TokenAttr::UNUSED);
            }
        }
        for text in ALWAYS_RENDERED {
            if let Some(&id) = self.ids.get(*text) {
                self.tokens[id as usize].attr = TokenAttr::USER_DEFINED;
            }
        }
        self.eog.extend(fim_eog);
        self.eog.extend(self.eos);
        self.eog.extend(self.eot);
        self.eog.extend(self.eom);
    }

    fn build_special_cache(&mut self) -> Result<(), TokenizerError> {
        let special = TokenAttr::CONTROL | TokenAttr::USER_DEFINED | TokenAttr::UNKNOWN;
        let mut cache: Vec<TokenId> = (0..self.tokens.len() as TokenId)
            .filter(|&id| self.tokens[id as usize].attr.intersects(special))
            .collect();
        // Longest first, so "<|im_start|>" is matched before any shorter token inside it.
        cache.sort_by_key(|&id| std::cmp::Reverse(self.tokens[id as usize].text.len()));
        let texts = cache
            .iter()
            .map(|&id| self.tokens[id as usize].text.as_str());
        let matcher = aho_corasick::AhoCorasick::new(texts)
            .map_err(|e| TokenizerError::Invalid(format!("special tokens: {e}")))?;
        self.special_matcher = Some(matcher);
        self.special_cache = cache;
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    pub fn token(&self, id: TokenId) -> Option<&TokenData> {
        self.tokens.get(id as usize)
    }

    pub fn id(&self, text: &str) -> Option<TokenId> {
        self.ids.get(text).copied()
    }

    pub fn is_eog(&self, id: TokenId) -> bool {
        self.eog.contains(&id)
    }

    /// The token for one raw byte: `<0xXX>` (SentencePiece), else the byte as text; for
    /// byte-level BPE, the byte's printable stand-in.
    pub(crate) fn byte_token(&self, byte: u8) -> Option<TokenId> {
        match self.kind {
            VocabKind::Spm => self
                .id(&format!("<0x{byte:02X}>"))
                .or_else(|| std::str::from_utf8(&[byte]).ok().and_then(|s| self.id(s))),
            VocabKind::Bpe { .. } => {
                self.id(super::byte_level::byte_to_char(byte).encode_utf8(&mut [0; 4]))
            }
        }
    }
}
