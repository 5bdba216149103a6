//! A Hugging Face `tokenizer.json` built from a GGUF file's tokenizer metadata, so that a
//! GGUF model is tokenized by the same `tokenizers` crate as every other model.
//!
//! GGUF stores a byte-level BPE tokenizer (`tokenizer.ggml.model` = "gpt2") as its tokens (in
//! the byte-level alphabet, "Ġ" for a space), their types and its merges in rank order; how a
//! text is split before BPE is named by `tokenizer.ggml.pre`, whose meaning is llama.cpp's
//! (src/llama-vocab.cpp). Read here: "gpt2"/"default" (GPT-2's split), the StarCoder
//! family, SmolLM's among them ("smollm": every digit alone, then GPT-2's split), and the
//! regular-expression splits of Llama 3 ("llama-bpe": numbers in runs of up to three digits)
//! and Qwen2 ("qwen2": every digit alone), each followed by the byte-level mapping without
//! GPT-2's own split. Any other is refused by name rather than tokenized differently from
//! llama.cpp.
//!
//! A SentencePiece vocabulary ("llama": Llama 2, Mistral 7B, TinyLlama) is its tokens ("▁" for
//! a space, `<0xAB>` for each byte), their scores and types, and no merges: they are
//! recovered from the scores as transformers recovers them, and the text is read as its
//! `LlamaTokenizer` reads it ("▁" before the text, unknown characters as their bytes).
//!
//! A file that says `tokenizer.ggml.add_bos_token` (or a SentencePiece one that does not say
//! otherwise) begins every text with its BOS token (a template of the post-processor).

use std::collections::HashMap;

use serde_json::{json, Value as Json};

use super::{Gguf, Value};
use crate::error::{Error, Result};

/// `tokenizer.ggml.token_type` of a control token (`<|im_start|>`): a special added token.
const CONTROL: i64 = 3;
/// … of a user-defined token: an added token, not special.
const USER_DEFINED: i64 = 4;

/// The pre-tokenizers that split like GPT-2 after putting every digit alone.
const DIGITS_THEN_GPT2: &[&str] = &[
    "smollm",
    "starcoder",
    "refact",
    "codeshell",
    "command-r",
    "exaone",
];

/// Llama 3's split: English contractions in any case, a letter run with at most one other
/// character before it, numbers of one to three digits, punctuation runs with the line breaks
/// after them, line breaks, and spaces (all but the last before a word).
const LLAMA3_SPLIT: &str = concat!(
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}",
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
);

/// Qwen2's split: Llama 3's with every digit alone.
const QWEN2_SPLIT: &str = concat!(
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}",
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
);

/// The pre-tokenizers that are one regular-expression split (llama.cpp's names for them),
/// and whether llama.cpp keeps a piece that is a token whole, without its merges (Llama 3's,
/// as Meta's tokenizer.json says: "ignore_merges").
const SPLITS: &[(&str, &str, bool)] = &[
    ("llama3", LLAMA3_SPLIT, true),
    ("llama-v3", LLAMA3_SPLIT, true),
    ("llama-bpe", LLAMA3_SPLIT, true),
    ("qwen2", QWEN2_SPLIT, false),
    ("deepseek-r1-qwen", QWEN2_SPLIT, false),
];

fn bad(message: String) -> Error {
    Error::Gguf(format!("tokenizer: {message}"))
}

fn strings<'a>(g: &'a Gguf, key: &str) -> Result<Vec<&'a str>> {
    let list = g
        .get(key)
        .and_then(Value::as_array)
        .ok_or_else(|| bad(format!("`{key}` is missing or not a list")))?;
    list.iter()
        .map(|v| {
            v.as_str()
                .ok_or_else(|| bad(format!("`{key}` holds a non-string")))
        })
        .collect()
}

fn integer(v: &Value) -> Option<i64> {
    match *v {
        Value::I8(x) => Some(x.into()),
        Value::I16(x) => Some(x.into()),
        Value::I32(x) => Some(x.into()),
        Value::I64(x) => Some(x),
        _ => v.as_u64().and_then(|x| i64::try_from(x).ok()),
    }
}

/// The BOS token every text begins with, when the file says so (`tokenizer.ggml.add_bos_token`
/// true, as llama.cpp and transformers read it; a file that does not say adds one to a
/// SentencePiece vocabulary and none to a byte-level one, as transformers reads them), or why
/// it cannot be.
fn bos<'a>(g: &Gguf, tokens: &[&'a str], default: bool) -> Result<Option<(u64, &'a str)>> {
    let said = match g.get("tokenizer.ggml.add_bos_token") {
        None => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(_) => {
            return Err(bad(
                "tokenizer.ggml.add_bos_token is not true or false".into()
            ))
        }
    };
    let id = match (
        said.unwrap_or(default),
        g.get("tokenizer.ggml.bos_token_id"),
    ) {
        (false, _) => return Ok(None),
        // a default without a BOS token to add: none (transformers adds none then)
        (true, None) if said.is_none() => return Ok(None),
        (true, None) => {
            return Err(bad(
                "add_bos_token is true, but tokenizer.ggml.bos_token_id is missing".into(),
            ))
        }
        (true, Some(v)) => v
            .as_u64()
            .ok_or_else(|| bad("tokenizer.ggml.bos_token_id is not a token id".into()))?,
    };
    let token = usize::try_from(id)
        .ok()
        .and_then(|i| tokens.get(i))
        .ok_or_else(|| {
            bad(format!(
                "tokenizer.ggml.bos_token_id {id} is past the {} tokens",
                tokens.len()
            ))
        })?;
    Ok(Some((id, token)))
}

/// The `tokenizer.json` (as text) of the GGUF file's tokenizer: byte-level BPE
/// (`tokenizer.ggml.model` "gpt2") or SentencePiece's BPE ("llama": Llama 2, Mistral 7B,
/// TinyLlama).
pub fn tokenizer_json(g: &Gguf) -> Result<String> {
    let model = g.get("tokenizer.ggml.model").and_then(Value::as_str);
    let spm = match model {
        Some("gpt2") => false,
        Some("llama") => true,
        _ => {
            return Err(bad(format!(
                "tokenizer.ggml.model is {}; read: byte-level BPE (\"gpt2\") and SentencePiece (\"llama\")",
                model.map_or("missing".into(), |m| format!("\"{m}\""))
            )))
        }
    };
    let (pre_tokenizer, decoder, ignore_merges) = if spm {
        spm_parts()
    } else {
        byte_level_parts(g)?
    };
    let tokens = strings(g, "tokenizer.ggml.tokens")?;
    let types: Vec<i64> = match per_token(g, "tokenizer.ggml.token_type", tokens.len())? {
        Some(t) => t.iter().map(|v| integer(v).unwrap_or(1)).collect(),
        None => vec![1; tokens.len()],
    };
    let ids: HashMap<&str, usize> = tokens.iter().enumerate().map(|(id, t)| (*t, id)).collect();
    if ids.len() != tokens.len() {
        return Err(bad("a token is there twice".into()));
    }
    let merges: Vec<(&str, &str)> = match g.get("tokenizer.ggml.merges") {
        Some(_) => strings(g, "tokenizer.ggml.merges")?
            .into_iter()
            .map(|m| {
                let parts: Vec<&str> = m.split(' ').collect();
                match parts[..] {
                    [a, b] => Ok((a, b)),
                    _ => Err(bad(format!("the merge `{m}` is not two tokens"))),
                }
            })
            .collect::<Result<_>>()?,
        None if spm => merges_from_scores(&tokens, &scores(g, tokens.len())?, &ids),
        None => {
            return Err(bad(
                "`tokenizer.ggml.merges` is missing or not a list".into()
            ))
        }
    };
    for (a, b) in &merges {
        if let Some(p) = [a, b].into_iter().find(|p| !ids.contains_key(**p)) {
            return Err(bad(format!(
                "the merge `{a} {b}` joins `{p}`, which is not in tokenizer.ggml.tokens"
            )));
        }
    }
    let added: Vec<Json> = tokens
        .iter()
        .zip(&types)
        .enumerate()
        .filter(|(_, (_, &ty))| ty == CONTROL || ty == USER_DEFINED)
        .map(|(id, (t, &ty))| {
            json!({"id": id, "content": t, "single_word": false, "lstrip": false,
                   "rstrip": false, "normalized": false, "special": ty == CONTROL})
        })
        .collect();
    let vocab: serde_json::Map<String, Json> = tokens
        .iter()
        .enumerate()
        .map(|(id, t)| (t.to_string(), json!(id)))
        .collect();
    let byte_level_post = json!({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": true});
    let template = bos(g, &tokens, spm)?.map(|(id, bos)| {
        // every text begins with the BOS token (an encoding with special tokens)
        let special = |type_id: u32| json!({"SpecialToken": {"id": bos, "type_id": type_id}});
        let text = |id: &str, type_id: u32| json!({"Sequence": {"id": id, "type_id": type_id}});
        json!({
            "type": "TemplateProcessing",
            "single": [special(0), text("A", 0)],
            "pair": [special(0), text("A", 0), special(1), text("B", 1)],
            "special_tokens": {bos: {"id": bos, "ids": [id], "tokens": [bos]}}
        })
    });
    let post_processor = match (spm, template) {
        (true, t) => t.unwrap_or(Json::Null),
        (false, None) => byte_level_post,
        (false, Some(t)) => json!({"type": "Sequence", "processors": [byte_level_post, t]}),
    };
    let merges: Vec<Json> = merges.iter().map(|(a, b)| json!([a, b])).collect();
    let tokenizer = json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": added,
        "normalizer": null,
        "pre_tokenizer": pre_tokenizer,
        "post_processor": post_processor,
        "decoder": decoder,
        "model": {
            "type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null,
            "end_of_word_suffix": null, "fuse_unk": spm, "byte_fallback": spm,
            "ignore_merges": ignore_merges, "vocab": vocab, "merges": merges
        }
    });
    Ok(tokenizer.to_string())
}

/// A byte-level vocabulary's split (`tokenizer.ggml.pre`, llama.cpp's names), decoder, and
/// whether a piece that is a token is kept whole.
fn byte_level_parts(g: &Gguf) -> Result<(Json, Json, bool)> {
    let pre = g
        .get("tokenizer.ggml.pre")
        .and_then(Value::as_str)
        .unwrap_or("default");
    let byte_level = json!({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true});
    let split = SPLITS.iter().find(|(name, ..)| *name == pre);
    let ignore_merges = split.is_some_and(|&(.., ignore)| ignore);
    let pre_tokenizer = match pre {
        "default" | "gpt2" => byte_level.clone(),
        p if DIGITS_THEN_GPT2.contains(&p) => json!({
            "type": "Sequence",
            "pretokenizers": [{"type": "Digits", "individual_digits": true}, byte_level.clone()]
        }),
        p => match split {
            // the pieces the expression matches, each mapped to the byte-level alphabet
            Some((_, split, _)) => json!({
                "type": "Sequence",
                "pretokenizers": [
                    {"type": "Split", "pattern": {"Regex": split}, "behavior": "Isolated", "invert": false},
                    {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}
                ]
            }),
            None => {
                return Err(bad(format!(
                    "the pre-tokenizer `{p}` is not read yet (read: default, gpt2, {}, {})",
                    DIGITS_THEN_GPT2.join(", "),
                    SPLITS
                        .iter()
                        .map(|(n, ..)| *n)
                        .collect::<Vec<_>>()
                        .join(", ")
                )))
            }
        },
    };
    Ok((pre_tokenizer, byte_level, ignore_merges))
}

/// SentencePiece's text as transformers' `LlamaTokenizer` reads it: spaces as "▁" with one
/// before the text, no split; decoded back through the byte tokens (`<0xAB>`).
fn spm_parts() -> (Json, Json, bool) {
    let pre = json!({"type": "Metaspace", "replacement": "\u{2581}", "prepend_scheme": "first", "split": false});
    let decoder = json!({"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": "\u{2581}"}, "content": " "},
        {"type": "ByteFallback"},
        {"type": "Fuse"},
        {"type": "Strip", "content": " ", "start": 1, "stop": 0}
    ]});
    (pre, decoder, false)
}

/// The list `key` holds one value a token, if the file has it.
fn per_token<'a>(g: &'a Gguf, key: &str, n: usize) -> Result<Option<&'a [Value]>> {
    match g.get(key).and_then(Value::as_array) {
        Some(list) if list.len() != n => Err(bad(format!(
            "`{key}` has {} values for {n} tokens",
            list.len()
        ))),
        list => Ok(list),
    }
}

/// `tokenizer.ggml.scores`: one finite number a token.
fn scores(g: &Gguf, n: usize) -> Result<Vec<f32>> {
    let list = per_token(g, "tokenizer.ggml.scores", n)?.ok_or_else(|| {
        bad("a SentencePiece vocabulary without merges needs `tokenizer.ggml.scores`".into())
    })?;
    list.iter()
        .map(|v| match v.as_f64() {
            Some(x) if x.is_finite() => Ok(x as f32),
            _ => Err(bad("a token score is not a finite number".into())),
        })
        .collect()
}

/// The merges a SentencePiece vocabulary implies, as transformers recovers them
/// (`generate_merges`): every split of a token into two tokens, ranked by the whole token's
/// score, then the longer left part, then the longer right part (higher first); equal ones in
/// vocabulary order, each token's splits by their parts' ids.
fn merges_from_scores<'a>(
    tokens: &[&'a str],
    scores: &[f32],
    ids: &HashMap<&str, usize>,
) -> Vec<(&'a str, &'a str)> {
    let mut merges = Vec::new();
    // a token this long is no SentencePiece piece (theirs are a few characters); its splits,
    // quadratic in its length, are not tried (a hostile file would take minutes)
    const LONGEST: usize = 256;
    for (token, &score) in tokens.iter().zip(scores) {
        if token.len() > LONGEST {
            continue;
        }
        let mut local: Vec<(usize, usize, &str, &str)> = token
            .char_indices()
            .skip(1)
            .filter_map(|(at, _)| {
                let (l, r) = token.split_at(at);
                Some((*ids.get(l)?, *ids.get(r)?, l, r))
            })
            .collect();
        local.sort_by_key(|&(li, ri, ..)| (li, ri));
        merges.extend(local.into_iter().map(|(.., l, r)| (score, l, r)));
    }
    let chars = |s: &str| s.chars().count();
    // a stable sort, highest first
    merges.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then(chars(b.1).cmp(&chars(a.1)))
            .then(chars(b.2).cmp(&chars(a.2)))
    });
    merges.into_iter().map(|(_, l, r)| (l, r)).collect()
}
