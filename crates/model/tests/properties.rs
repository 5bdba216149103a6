//! Property tests of the softmax and of whole forward passes.

use attnlab_model::cpu::{causal_mask, entropy, softmax_rows, MASKED};
use attnlab_model::testing::random_model;
use attnlab_model::{forward, AttentionOptions, Config, LnPlacement};
use proptest::prelude::*;

fn softmax(x: &[f32], tau: f32) -> Vec<f32> {
    let mut w = vec![0.0; x.len()];
    softmax_rows(x, x.len(), tau, &mut w);
    w
}

proptest! {
    #[test]
    fn rows_sum_to_one_and_masked_entries_are_zero(
        scores in prop::collection::vec(-1e30f32..1e30, 1..40),
        tau in 0.01f32..100.0,
    ) {
        let t = (scores.len() as f32).sqrt() as usize;
        prop_assume!(t >= 1);
        let mut s = scores[..t * t].to_vec();
        causal_mask(&mut s, t, 0);
        let mut w = vec![0.0; t * t];
        softmax_rows(&s, t, tau, &mut w);
        for i in 0..t {
            let row = &w[i * t..(i + 1) * t];
            let sum: f64 = row.iter().map(|&v| v as f64).sum();
            prop_assert!((sum - 1.0).abs() <= 1e-6, "row {} sums to {}", i, sum);
            prop_assert!(row.iter().all(|v| v.is_finite()));
            for j in i + 1..t {
                prop_assert_eq!(row[j], 0.0);
                prop_assert_eq!(s[i * t + j], MASKED);
            }
        }
    }

    #[test]
    fn permuting_keys_permutes_weights(
        scores in prop::collection::vec(-50f32..50.0, 2..12),
        tau in 0.05f32..20.0,
        rot in 0usize..12,
    ) {
        let n = scores.len();
        let perm: Vec<usize> = (0..n).map(|i| (i * 7 + rot) % n).collect();
        prop_assume!({ let mut p = perm.clone(); p.sort(); p.dedup(); p.len() == n });
        let permuted: Vec<f32> = perm.iter().map(|&p| scores[p]).collect();
        let (w, wp) = (softmax(&scores, tau), softmax(&permuted, tau));
        for (k, &p) in perm.iter().enumerate() {
            prop_assert!((wp[k] - w[p]).abs() <= 1e-6, "{} vs {}", wp[k], w[p]);
        }
    }

    #[test]
    fn higher_temperature_never_lowers_entropy(
        scores in prop::collection::vec(-20f32..20.0, 2..16),
        t1 in 0.01f32..50.0,
        factor in 1.0f32..10.0,
    ) {
        let (h1, h2) = (entropy(&softmax(&scores, t1)), entropy(&softmax(&scores, t1 * factor)));
        prop_assert!(h2 >= h1 - 1e-5, "τ {} → H {}, τ {} → H {}", t1, h1, t1 * factor, h2);
        prop_assert!(h2 <= (scores.len() as f32).ln() + 1e-5);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn every_trace_row_is_a_distribution(
        seed in 0u64..1000,
        ids in prop::collection::vec(0u32..50, 1..20),
        tau in 0.01f32..100.0,
        scale in any::<bool>(),
        mask in any::<bool>(),
        post in any::<bool>(),
    ) {
        let c = Config {
            n_embd: 24, n_head: 3, n_layer: 2, n_positions: 16, vocab_size: 50,
            layer_norm_epsilon: 1e-5, n_inner: None, activation_function: Default::default(),
            ln_placement: if post { LnPlacement::Post } else { LnPlacement::Pre },
            scale_embedding: false,
        };
        let m = random_model(&c, seed, 3.0);
        let o = AttentionOptions { temperature: tau, scale, causal_mask: mask, ..Default::default() };
        let tr = forward(&m, &ids, &o).unwrap();
        let t = tr.dims.t;
        prop_assert_eq!(t, ids.len().min(16));
        for l in &tr.layers {
            for (r, row) in l.weights.chunks_exact(t).enumerate() {
                let sum: f64 = row.iter().map(|&v| v as f64).sum();
                prop_assert!((sum - 1.0).abs() <= 1e-6);
                if mask {
                    prop_assert!(row[r % t + 1..].iter().all(|&v| v == 0.0));
                }
            }
        }
        prop_assert!(tr.probs.iter().all(|v| v.is_finite()));
    }
}
