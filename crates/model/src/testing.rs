//! Seeded fixtures shared by the tests of every crate: random models in GPT-2 layout and
//! small tokenizer.json files, written the way real ones are.

use std::path::Path;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Map, Value};

use crate::config::{Config, LnPlacement};
use crate::weights::{tensor_specs, Model};

/// A block's trace fields by name, in forward order, written here by hand (not from the
/// `layer_fields!` table): the contract the CLI's `--full` JSON, the exports, the wire and the
/// e2e tests rely on, for tests to check the table and what follows it against.
pub const LAYER_FIELD_NAMES: [&str; 20] = [
    "input",
    "attn_in",
    "q",
    "k",
    "v",
    "scores",
    "scaled",
    "masked",
    "weights",
    "head_out",
    "concat",
    "attn_out",
    "resid_attn",
    "ln_1",
    "ffn_in",
    "ffn_hidden",
    "ffn_out",
    "resid_ffn",
    "ln_2",
    "output",
];

/// A tiny model's shape (d_model 16, 2 heads, 2 layers, context 8, vocabulary 20) for tests
/// that need any model at all.
pub fn tiny_config(ln_placement: LnPlacement) -> Config {
    Config {
        n_embd: 16,
        n_head: 2,
        n_layer: 2,
        n_positions: 8,
        vocab_size: 20,
        ln_placement,
        scale_embedding: false,
        ..Config::bundled(20)
    }
}

/// A model with seeded random weights: matrices uniform in ±`scale`·√(3/fan_in)
/// (unit-variance outputs for `scale` = 1), LayerNorm gains near 1, small biases.
/// Pre-LN models get `ln_f`; post-LN models none.
pub fn random_model(config: &Config, seed: u64, scale: f32) -> Model {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let with_ln_f = config.ln_placement == LnPlacement::Pre;
    let mut values = Vec::new();
    for (name, shape) in tensor_specs(config, with_ln_f) {
        let n: usize = shape.iter().product();
        let v: Vec<f32> = if name.contains("ln_") && name.ends_with("weight") {
            (0..n).map(|_| rng.random_range(0.8..1.2)).collect()
        } else if name.ends_with("bias") {
            (0..n).map(|_| rng.random_range(-0.1..0.1)).collect()
        } else {
            let fan_in = if name.starts_with("w") { 1 } else { shape[0] };
            let a = scale * (3.0 / fan_in as f32).sqrt();
            (0..n).map(|_| rng.random_range(-a..a)).collect()
        };
        values.push(v);
    }
    Model::from_values(config.clone(), values, with_ln_f)
}

/// GPT-2's `bytes_to_unicode` character for a byte.
pub fn byte_level_char(b: u8) -> char {
    let printable = |b: u32| {
        (0x21..=0x7E).contains(&b) || (0xA1..=0xAC).contains(&b) || (0xAE..=0xFF).contains(&b)
    };
    if printable(b as u32) {
        return b as char;
    }
    let n = (0u32..b as u32).filter(|&x| !printable(x)).count() as u32;
    char::from_u32(0x100 + n).expect("in range")
}

fn byte_level_str(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| byte_level_char(b)).collect()
}

/// A GPT-2 style byte-level BPE tokenizer.json: the 256 byte tokens, then merges that make
/// whole tokens of `whole` (each string merged left to right) and join only the first two
/// bytes of each character in `split_two` (so those characters take two tokens).
pub fn byte_level_tokenizer_json(whole: &[&str], split_two: &[&str]) -> String {
    let mut vocab = Map::new();
    for b in 0..=255u8 {
        vocab.insert(byte_level_str(&[b]), json!(b as u32));
    }
    let mut merges: Vec<Value> = Vec::new();
    let mut add = |left: String, right: String, vocab: &mut Map<String, Value>| {
        let joined = format!("{left}{right}");
        if !vocab.contains_key(&joined) {
            let id = vocab.len();
            vocab.insert(joined, json!(id));
            merges.push(json!([left, right]));
        }
    };
    for w in whole {
        let chars: Vec<String> = w.as_bytes().iter().map(|&b| byte_level_str(&[b])).collect();
        let mut acc = chars[0].clone();
        for c in &chars[1..] {
            add(acc.clone(), c.clone(), &mut vocab);
            acc.push_str(c);
        }
    }
    for s in split_two {
        for ch in s.chars() {
            let mut buf = [0u8; 4];
            let b = ch.encode_utf8(&mut buf).as_bytes();
            if b.len() >= 2 {
                add(
                    byte_level_str(&b[..1]),
                    byte_level_str(&b[1..2]),
                    &mut vocab,
                );
            }
        }
    }
    let byte_level = json!({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true});
    json!({
        "version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
        "normalizer": null, "pre_tokenizer": byte_level, "post_processor": null, "decoder": byte_level,
        "model": {"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null,
                  "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": false,
                  "ignore_merges": false, "vocab": vocab, "merges": merges}
    })
    .to_string()
}

/// A character-level BPE with byte fallback (the bundled model's kind): `chars` are the
/// single-character tokens after the 256 `<0xNN>` byte tokens; no merges.
pub fn char_bpe_tokenizer_json(chars: &str) -> String {
    let mut vocab = Map::new();
    for b in 0..=255u32 {
        vocab.insert(format!("<0x{b:02X}>"), json!(b));
    }
    for c in chars.chars() {
        let id = vocab.len();
        vocab.entry(c.to_string()).or_insert(json!(id));
    }
    json!({
        "version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
        "normalizer": null, "pre_tokenizer": null, "post_processor": null,
        "decoder": {"type": "ByteFallback"},
        "model": {"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null,
                  "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": true,
                  "ignore_merges": false, "vocab": vocab, "merges": []}
    })
    .to_string()
}

/// The byte-level tokenizer the test model directories use: whole tokens for most of the
/// lesson sentence, and 산, 늘 and 셨 split in two as GPT-2's tokenizer splits them.
pub fn lesson_tokenizer_json() -> String {
    byte_level_tokenizer_json(
        &[
            "나", "는", "어", "제", "커", "피", "를", "오", "마", "다", " coffee", " tea",
        ],
        &["산늘셨"],
    )
}

/// Writes config.json, model.safetensors and tokenizer.json of a small random model
/// (vocabulary sized to the lesson tokenizer) into `dir`.
pub fn write_model_dir(dir: &Path, ln: LnPlacement, seed: u64) -> std::io::Result<Model> {
    let tok = lesson_tokenizer_json();
    let n_vocab = crate::Tokenizer::from_bytes(tok.as_bytes())
        .expect("fixture tokenizer parses")
        .vocab_size();
    let config = Config {
        n_embd: 32,
        n_head: 4,
        n_layer: 2,
        n_positions: 64,
        vocab_size: n_vocab,
        layer_norm_epsilon: 1e-5,
        n_inner: None,
        activation_function: Default::default(),
        ln_placement: ln,
        scale_embedding: false,
    };
    let model = random_model(&config, seed, 1.0);
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("config.json"), config.to_json())?;
    std::fs::write(dir.join("model.safetensors"), model.to_safetensors(false))?;
    std::fs::write(dir.join("tokenizer.json"), tok)?;
    Ok(model)
}

/// One head's output through the three steps the views show — scores (`cpu::attn_scores`),
/// `cpu::softmax_rows`, `cpu::attn_v` — for the fused attention (`cpu::attn_fused`, the
/// `attn_fused` kernel) to be checked against. q (T_q, Dk), k and v (T_k, Dk) → (T_q, Dk).
pub fn attention_in_steps(
    q: &[f32],
    k: &[f32],
    v: &[f32],
    (t_q, t_k, dk): (usize, usize, usize),
    scale: f32,
    tau: f32,
    mask_from: Option<usize>,
) -> Vec<f32> {
    use crate::cpu;
    let n = t_q * t_k;
    let (mut raw, mut scaled, mut masked, mut w) =
        (vec![0.0; n], vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    let dims = (t_q, t_k, dk);
    cpu::attn_scores(
        q,
        k,
        dims,
        scale,
        mask_from,
        &mut raw,
        &mut scaled,
        &mut masked,
    );
    cpu::softmax_rows(&masked, t_k, tau, &mut w);
    let mut out = vec![0.0; t_q * dk];
    cpu::attn_v(&w, v, t_q, t_k, dk, &mut out);
    out
}

/// `n` seeded pseudo-random values, uniform in ±`scale` (xorshift64 from `seed`): the kernel
/// tests' inputs, the same on every machine.
pub fn rand_vec(n: usize, seed: u64, scale: f32) -> Vec<f32> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * scale
        })
        .collect()
}
