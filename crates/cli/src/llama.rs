//! A Llama-family model (`--model FILE.gguf`, e.g. SmolLM2, or a Hugging Face folder whose
//! config.json names llama, mistral or qwen2; `attnlab_model::open` reads it): every command
//! reads it; `predict` runs the lean forward, which keeps no trace.

use std::io::Write;

use attnlab_model::cpu;
use attnlab_model::export::{next_json, tokens_json};
use attnlab_model::llama::LlamaBundle;
use attnlab_model::trace::top_k_of;
use attnlab_model::AttentionOptions;
use serde_json::json;

use crate::output;

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
