//! The CPU reference forward equals the same model written independently with candle ops.

use attnlab_model::testing::random_model;
use attnlab_model::{forward, Activation, AttentionOptions, Config, LnPlacement, Model};
use candle_core::{DType, Device, Tensor, D};

fn t(v: &[f32], shape: &[usize]) -> Tensor {
    Tensor::from_slice(v, shape, &Device::Cpu).unwrap()
}

/// The forward pass in candle: returns (per-layer attention weights (H, T, T), logits (T, V)).
fn candle_forward(m: &Model, ids: &[u32], o: &AttentionOptions) -> (Vec<Vec<f32>>, Vec<f32>) {
    let c = &m.config;
    let (tt, d, h) = (ids.len(), c.n_embd, c.n_head);
    let dk = d / h;
    let w = &m.weights;
    let ln = |x: &Tensor, g: &[f32], b: &[f32]| {
        candle_nn::ops::layer_norm(x, &t(g, &[d]), &t(b, &[d]), c.layer_norm_epsilon).unwrap()
    };
    let lin = |x: &Tensor, wt: &[f32], b: &[f32], i: usize, out: usize| {
        x.matmul(&t(wt, &[i, out]))
            .unwrap()
            .broadcast_add(&t(b, &[out]))
            .unwrap()
    };
    let wte = t(&w.wte, &[c.vocab_size, d]);
    let idx = Tensor::new(ids, &Device::Cpu).unwrap();
    let pos = t(&w.wpe[..tt * d], &[tt, d]);
    let tok = wte.index_select(&idx, 0).unwrap();
    let tok = if c.scale_embedding {
        (tok * (c.n_embd as f64).sqrt()).unwrap()
    } else {
        tok
    };
    let mut x = tok.add(&pos).unwrap();
    let mut mask = vec![0f32; tt * tt];
    for i in 0..tt {
        for j in i + 1..tt {
            if o.causal_mask {
                mask[i * tt + j] = f32::NEG_INFINITY;
            }
        }
    }
    let mask = t(&mask, &[1, tt, tt]);
    let mut all_weights = vec![];
    for (li, l) in w.layers.iter().enumerate() {
        let pre = c.ln_placement == LnPlacement::Pre;
        let a = if pre {
            ln(&x, &l.ln_1_g, &l.ln_1_b)
        } else {
            x.clone()
        };
        let qkv = lin(&a, &l.c_attn_w, &l.c_attn_b, d, 3 * d);
        let heads = |k: usize| {
            qkv.narrow(1, k * d, d)
                .unwrap()
                .reshape((tt, h, dk))
                .unwrap()
                .transpose(0, 1)
                .unwrap()
                .contiguous()
                .unwrap()
        };
        let (q, k, v) = (heads(0), heads(1), heads(2));
        let scale = if o.scale {
            1.0 / (dk as f64).sqrt()
        } else {
            1.0
        };
        let att = q
            .matmul(&k.t().unwrap())
            .unwrap()
            .affine(scale, 0.0)
            .unwrap();
        let att = att
            .broadcast_add(&mask)
            .unwrap()
            .affine(1.0 / o.temperature as f64, 0.0)
            .unwrap();
        let att = candle_nn::ops::softmax_last_dim(&att).unwrap();
        all_weights.push(att.flatten_all().unwrap().to_vec1::<f32>().unwrap());
        let keep: Vec<f32> = (0..h)
            .map(|hh| {
                if o.ablate.contains(&(li, hh)) {
                    0.0
                } else {
                    1.0
                }
            })
            .collect();
        let y = att
            .matmul(&v)
            .unwrap()
            .broadcast_mul(&t(&keep, &[h, 1, 1]))
            .unwrap();
        let y = y
            .transpose(0, 1)
            .unwrap()
            .contiguous()
            .unwrap()
            .reshape((tt, d))
            .unwrap();
        let r1 = x.add(&lin(&y, &l.c_proj_w, &l.c_proj_b, d, d)).unwrap();
        let s1 = if pre {
            r1.clone()
        } else {
            ln(&r1, &l.ln_1_g, &l.ln_1_b)
        };
        let f_in = if pre {
            ln(&r1, &l.ln_2_g, &l.ln_2_b)
        } else {
            s1.clone()
        };
        let hid = lin(&f_in, &l.fc_w, &l.fc_b, d, c.d_ff());
        let hid = match c.activation_function {
            Activation::GeluTanh => hid.gelu().unwrap(),
            Activation::GeluErf => hid.gelu_erf().unwrap(),
        };
        let r2 = s1
            .add(&lin(&hid, &l.fc_proj_w, &l.fc_proj_b, c.d_ff(), d))
            .unwrap();
        x = if pre {
            r2
        } else {
            ln(&r2, &l.ln_2_g, &l.ln_2_b)
        };
    }
    if let Some((g, b)) = &w.ln_f {
        x = ln(&x, g, b);
    }
    let logits = x.matmul(&wte.t().unwrap()).unwrap();
    assert_eq!(logits.dtype(), DType::F32);
    let _ = D::Minus1;
    (
        all_weights,
        logits.flatten_all().unwrap().to_vec1::<f32>().unwrap(),
    )
}

fn config(ln: LnPlacement, act: Activation, scale_embedding: bool) -> Config {
    Config {
        n_embd: 48, // d_k = 12, not a power of two
        n_head: 4,
        n_layer: 3,
        n_positions: 40,
        vocab_size: 97,
        layer_norm_epsilon: 1e-5,
        n_inner: Some(80),
        activation_function: act,
        ln_placement: ln,
        scale_embedding,
    }
}

fn options() -> Vec<AttentionOptions> {
    let base = AttentionOptions::default();
    vec![
        base.clone(),
        AttentionOptions {
            scale: false,
            ..base.clone()
        },
        AttentionOptions {
            temperature: 0.3,
            ..base.clone()
        },
        AttentionOptions {
            temperature: 5.0,
            ..base.clone()
        },
        AttentionOptions {
            causal_mask: false,
            ..base.clone()
        },
        AttentionOptions {
            ablate: [(0, 1), (2, 3)].into(),
            ..base
        },
    ]
}

#[test]
fn forward_matches_candle_for_pre_and_post_ln_and_every_option() {
    for (seed, ln, act, scaled) in [
        (1, LnPlacement::Pre, Activation::GeluTanh, false),
        (2, LnPlacement::Post, Activation::GeluTanh, false),
        (3, LnPlacement::Post, Activation::GeluErf, false),
        // the bundled model's forward: post-LN, token embedding × √d_model (√48, not exact)
        (4, LnPlacement::Post, Activation::GeluTanh, true),
    ] {
        let m = random_model(&config(ln, act, scaled), seed, 1.0);
        let ids: Vec<u32> = (0..23).map(|i| (i * 37 + seed as u32) % 97).collect();
        for o in options() {
            let tr = forward(&m, &ids, &o).unwrap();
            let (weights, logits) = candle_forward(&m, &ids, &o);
            for (i, (a, b)) in tr.logits.iter().zip(&logits).enumerate() {
                assert!(
                    (a - b).abs() <= 1e-4,
                    "{ln:?} {o:?}: logit {i}: ours {a}, candle {b}"
                );
            }
            for (l, w) in weights.iter().enumerate() {
                for (i, (a, b)) in tr.layers[l].weights.iter().zip(w).enumerate() {
                    assert!(
                        (a - b).abs() <= 1e-5,
                        "{ln:?} {o:?}: layer {l} weight {i}: ours {a}, candle {b}"
                    );
                }
            }
        }
    }
}
