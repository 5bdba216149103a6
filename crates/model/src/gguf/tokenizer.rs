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
//! llama.cpp. A file that says `tokenizer.ggml.add_bos_token` begins every text with its BOS
//! token (a template of the post-processor).

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
/// true, as llama.cpp and transformers read it; a file that does not say adds none, as
/// transformers reads a byte-level vocabulary), or why it cannot be.
fn bos<'a>(g: &Gguf, tokens: &[&'a str]) -> Result<Option<(u64, &'a str)>> {
    match g.get("tokenizer.ggml.add_bos_token") {
        None | Some(Value::Bool(false)) => return Ok(None),
        Some(Value::Bool(true)) => {}
        Some(_) => {
            return Err(bad(
                "tokenizer.ggml.add_bos_token is not true or false".into()
            ))
        }
    }
    let id = g
        .get("tokenizer.ggml.bos_token_id")
        .and_then(Value::as_u64)
        .ok_or_else(|| {
            bad("add_bos_token is true, but tokenizer.ggml.bos_token_id is missing".into())
        })?;
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

/// The `tokenizer.json` (as text) of the GGUF file's tokenizer.
pub fn tokenizer_json(g: &Gguf) -> Result<String> {
    let model = g.get("tokenizer.ggml.model").and_then(Value::as_str);
    if model != Some("gpt2") {
        return Err(bad(format!(
            "tokenizer.ggml.model is {}; only byte-level BPE (\"gpt2\") is read",
            model.map_or("missing".into(), |m| format!("\"{m}\""))
        )));
    }
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
    let tokens = strings(g, "tokenizer.ggml.tokens")?;
    let merges = strings(g, "tokenizer.ggml.merges")?;
    let types: Vec<i64> = match g.get("tokenizer.ggml.token_type").and_then(Value::as_array) {
        Some(t) if t.len() == tokens.len() => t.iter().map(|v| integer(v).unwrap_or(1)).collect(),
        Some(t) => {
            return Err(bad(format!(
                "{} token types for {} tokens",
                t.len(),
                tokens.len()
            )))
        }
        None => vec![1; tokens.len()],
    };
    let vocab: serde_json::Map<String, Json> = tokens
        .iter()
        .enumerate()
        .map(|(id, t)| (t.to_string(), json!(id)))
        .collect();
    if vocab.len() != tokens.len() {
        return Err(bad("a token is there twice".into()));
    }
    for m in &merges {
        let parts: Vec<&str> = m.split(' ').collect();
        if parts.len() != 2 {
            return Err(bad(format!("the merge `{m}` is not two tokens")));
        }
        if let Some(p) = parts.iter().find(|p| !vocab.contains_key(**p)) {
            return Err(bad(format!(
                "the merge `{m}` joins `{p}`, which is not in tokenizer.ggml.tokens"
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
    let byte_level_post = json!({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": true});
    let post_processor = match bos(g, &tokens)? {
        None => byte_level_post,
        // every text begins with the BOS token (an encoding with special tokens)
        Some((id, bos)) => {
            let special = |type_id: u32| json!({"SpecialToken": {"id": bos, "type_id": type_id}});
            let text = |id: &str, type_id: u32| json!({"Sequence": {"id": id, "type_id": type_id}});
            json!({"type": "Sequence", "processors": [byte_level_post, {
                "type": "TemplateProcessing",
                "single": [special(0), text("A", 0)],
                "pair": [special(0), text("A", 0), special(1), text("B", 1)],
                "special_tokens": {bos: {"id": bos, "ids": [id], "tokens": [bos]}}
            }]})
        }
    };
    let tokenizer = json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": added,
        "normalizer": null,
        "pre_tokenizer": pre_tokenizer,
        "post_processor": post_processor,
        "decoder": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
        "model": {
            "type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null,
            "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": false,
            "ignore_merges": ignore_merges, "vocab": vocab, "merges": merges
        }
    });
    Ok(tokenizer.to_string())
}
