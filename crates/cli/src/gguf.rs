//! A GGUF model (`--model FILE.gguf`, a llama-architecture file such as SmolLM2): so far
//! `predict` and `heads` read it, through `attnlab_model::llama` and the tokenizer built from
//! the file's metadata; the other commands say that they do not yet.

use std::io::Write;
use std::path::Path;

use attnlab_model::llama::LlamaBundle;
use attnlab_model::AttentionOptions;
use serde_json::json;

/// Whether `path` names a GGUF file (by its extension).
pub fn is_gguf(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gguf"))
}

/// Reads a GGUF model and its tokenizer.
pub fn load(path: &Path) -> Result<LlamaBundle, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    LlamaBundle::from_gguf_bytes(&bytes).map_err(|e| format!("{}: {e}", path.display()))
}

/// `predict` on a GGUF model: the `top` likeliest next tokens after `text`.
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
    let last = &logits[(ids.len() - 1) * v..];
    let max = last.iter().fold(f32::NEG_INFINITY, |m, &x| m.max(x));
    let z: f64 = last.iter().map(|&x| ((x - max) as f64).exp()).sum();
    let mut order: Vec<usize> = (0..v).collect();
    order.sort_by(|&a, &b| last[b].total_cmp(&last[a]).then(a.cmp(&b)));
    let next: Vec<(u32, f64)> = order[..top.min(v)]
        .iter()
        .map(|&id| (id as u32, ((last[id] - max) as f64).exp() / z))
        .collect();
    let write = |out: &mut dyn Write| -> std::io::Result<()> {
        if json {
            let doc = json!({
                "tokens": tokens.iter().map(|t| json!({"id": t.id, "text": t.display})).collect::<Vec<_>>(),
                "next": next.iter().map(|&(id, p)| json!({"id": id, "text": tokenizer.display_id(id), "prob": p})).collect::<Vec<_>>(),
            });
            serde_json::to_writer_pretty(&mut *out, &doc)?;
            return writeln!(out);
        }
        for (rank, &(id, p)) in next.iter().enumerate() {
            writeln!(
                out,
                "{:>3}. {:>7.3}%  {:<16} id {id}",
                rank + 1,
                p * 100.0,
                tokenizer.display_id(id)
            )?;
        }
        Ok(())
    };
    match write(out) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => r.map_err(|e| e.to_string()),
    }
}
