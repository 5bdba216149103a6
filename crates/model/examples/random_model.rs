//! Writes a model folder (config.json, model.safetensors, tokenizer.json) with seeded random
//! weights of any size, for load benchmarks of the app's "load your own model":
//! `cargo run --release -p attnlab-model --example random_model -- DIR [N_EMBD N_LAYER VOCAB N_POSITIONS]`
//! (defaults: GPT-2 small's 768, 12, 50257, 1024, pre-LN; float32).

use std::path::PathBuf;

use attnlab_model::testing::{lesson_tokenizer_json, random_model};
use attnlab_model::{Config, LnPlacement};

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(
        args.next()
            .ok_or("usage: random_model DIR [N_EMBD N_LAYER VOCAB N_POSITIONS]")?,
    );
    let mut num = |default: usize| -> Result<usize, String> {
        args.next()
            .map_or(Ok(default), |a| a.parse().map_err(|e| format!("{a}: {e}")))
    };
    let (n_embd, n_layer, vocab_size, n_positions) = (num(768)?, num(12)?, num(50257)?, num(1024)?);
    let config = Config {
        n_embd,
        n_head: (n_embd / 64).max(1),
        n_layer,
        n_positions,
        vocab_size,
        layer_norm_epsilon: 1e-5,
        n_inner: None,
        activation_function: Default::default(),
        ln_placement: LnPlacement::Pre,
        scale_embedding: false,
    };
    let model = random_model(&config, 1, 1.0);
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let st = model.to_safetensors(false);
    std::fs::write(dir.join("config.json"), config.to_json()).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("model.safetensors"), &st).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("tokenizer.json"), lesson_tokenizer_json())
        .map_err(|e| e.to_string())?;
    eprintln!(
        "{}: {} parameters, {:.1} MB",
        dir.display(),
        config.n_params(true),
        st.len() as f64 / 1e6
    );
    Ok(())
}
