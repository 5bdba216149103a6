//! The CPU forward pass on arbitrary small configs, weights, tokens and options: a Trace
//! (never a panic), all of it finite, every weight row and probability row a distribution,
//! and the incremental forward over a prefix equal to the full one.
#![no_main]

use attnlab_model::testing::random_model;
use attnlab_model::{forward, forward_incremental, AttentionOptions, Config, LnPlacement};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 8 {
        return;
    }
    let b = |i: usize| data[i] as usize;
    let n_head = 1 + b(0) % 4;
    let d_k = 1 + b(1) % 6;
    let config = Config {
        n_embd: n_head * d_k,
        n_head,
        n_layer: 1 + b(2) % 3,
        n_positions: 1 + b(3) % 12,
        vocab_size: 2 + b(4) % 40,
        ln_placement: if b(5) % 2 == 0 { LnPlacement::Post } else { LnPlacement::Pre },
        scale_embedding: false,
        ..Config::bundled(2)
    };
    let scale = [0.01f32, 1.0, 30.0, 1e4][b(6) % 4];
    let model = random_model(&config, data[7] as u64, scale);
    let taus = [1.0f32, 0.01, 100.0, 0.3, 7.0];
    let flags = data.get(8).copied().unwrap_or(0);
    let opts = AttentionOptions {
        scale: flags & 1 == 0,
        temperature: taus[(flags as usize >> 1) % taus.len()],
        causal_mask: flags & 0x80 == 0,
        ablate: data
            .get(9..11)
            .unwrap_or(&[])
            .iter()
            .map(|&x| (x as usize % config.n_layer, (x as usize >> 4) % config.n_head))
            .collect(),
    };
    let tokens: Vec<u32> = data[8..]
        .iter()
        .map(|&x| x as u32 % config.vocab_size as u32)
        .collect();
    if tokens.is_empty() {
        return;
    }
    let full = forward(&model, &tokens, &opts).expect("valid tokens and options run");
    let (t, v) = (full.dims.t, full.dims.vocab);
    for (name, xs) in full.fields() {
        assert!(xs.iter().all(|x| x.is_finite()), "{name} not finite");
    }
    for l in &full.layers {
        for row in l.weights.chunks(t) {
            let s: f64 = row.iter().map(|&x| x as f64).sum();
            assert!((s - 1.0).abs() <= 1e-5, "weights row sums to {s}");
        }
    }
    for row in full.probs.chunks(v) {
        let s: f64 = row.iter().map(|&x| x as f64).sum();
        assert!((s - 1.0).abs() <= 1e-4, "probs row sums to {s}");
    }
    // the incremental path over a prefix gives the same trace (where f32 rounding is not
    // amplified past any tolerance: moderate weights and τ)
    if scale > 1.0 || opts.temperature < 0.3 {
        return;
    }
    let cut = 1 + b(1) % tokens.len();
    let prev = forward(&model, &tokens[..cut], &opts).unwrap();
    let (inc, _) = forward_incremental(&model, Some(&prev), &tokens, &opts).unwrap();
    for ((name, a), (_, c)) in inc.fields().into_iter().zip(full.fields()) {
        for (x, y) in a.iter().zip(c) {
            assert!((x - y).abs() <= 1e-3 + 1e-3 * y.abs(), "{name}: {x} vs {y}");
        }
    }
});
