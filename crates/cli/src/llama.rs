//! A Llama-family model (`--model FILE.gguf`, e.g. SmolLM2, or a Hugging Face folder whose
//! config.json names llama, mistral or qwen2), read through `attnlab_model::llama`: every
//! command reads it; `predict` runs the lean forward, which keeps no trace.

use std::io::Write;
use std::path::Path;

use attnlab_model::cpu;
use attnlab_model::export::{next_json, tokens_json};
use attnlab_model::llama::LlamaBundle;
use attnlab_model::trace::top_k_of;
use attnlab_model::AttentionOptions;
use serde_json::json;

use crate::output;

/// The model types a Hugging Face folder may name to be read here.
const HF_TYPES: &[&str] = &["llama", "mistral", "qwen2"];

/// The Llama-family model at `path` (a .gguf file, or a folder whose config.json names a
/// Llama-family type); `None` for anything else (a GPT-2-layout folder).
pub fn load(path: &Path) -> Result<Option<LlamaBundle>, String> {
    let at = |e: attnlab_model::Error| format!("{}: {e}", path.display());
    if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gguf"))
    {
        let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        return LlamaBundle::from_gguf_bytes(&bytes).map(Some).map_err(at);
    }
    let Ok(config) = std::fs::read(path.join("config.json")) else {
        return Ok(None);
    };
    let ty = serde_json::from_slice::<serde_json::Value>(&config)
        .ok()
        .and_then(|j| j["model_type"].as_str().map(String::from));
    match ty {
        Some(t) if HF_TYPES.contains(&t.as_str()) => {
            LlamaBundle::load_hf_dir(path).map(Some).map_err(at)
        }
        _ => Ok(None),
    }
}

/// `predict` on a Llama-family model: the `top` likeliest next tokens after `text`.
pub fn predict(
    out: &mut impl Write,
    bundle: &LlamaBundle,
    text: &str,
    top: usize,
    opts: &AttentionOptions,
    json: bool,
) -> Result<(), String> {
    let LlamaBundle { model, tokenizer } = bundle;
    let tokens = tokenizer.encode(text).map_err(|e| e.to_string())?;
    let ids: Vec<u32> = tokens.iter().map(|t| t.id).collect();
    let context = model.config.context;
    if ids.len() > context {
        return Err(format!(
            "{} tokens; the model's context is {context}",
            ids.len()
        ));
    }
    let logits = model
        .logits_with(&ids, opts, |_, _, _| {})
        .map_err(|e| e.to_string())?;
    let v = model.config.vocab_size;
    let mut probs = vec![0f32; v];
    cpu::softmax_rows(&logits[(ids.len() - 1) * v..], v, 1.0, &mut probs);
    let next = top_k_of(&probs, top);
    let display = |id: u32| tokenizer.display_id(id);
    let write = |out: &mut dyn Write| -> std::io::Result<()> {
        if json {
            // the same document as the traced models' predict
            let doc = json!({
                "tokens": tokens_json(&tokens),
                "dropped": 0,
                "next": next_json(&display, &next),
            });
            serde_json::to_writer_pretty(&mut *out, &doc)?;
            return writeln!(out);
        }
        output::write_top(&mut *out, &display, &next)
    };
    match write(out) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => r.map_err(|e| e.to_string()),
    }
}
