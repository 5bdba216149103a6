//! The whole GPU forward equals the CPU reference, field by field.

mod common;

use attnlab_gpu::{GpuEngine, GpuError};
use attnlab_model::testing::random_model;
use attnlab_model::{forward, AttentionOptions, Config, LnPlacement, Model};
use common::{assert_trace_close, gpu, small_config};

use common::{ATOL, RTOL};

fn engine(model: &Model) -> Option<GpuEngine> {
    let g = gpu()?;
    Some(pollster::block_on(GpuEngine::with_gpu(g, model)).unwrap())
}

fn ids(n: usize) -> Vec<u32> {
    (0..n as u32).map(|i| (i * 31 + 5) % 97).collect()
}

/// Weights at half the unit-variance scale keep the whole forward well conditioned at τ = 0.01,
/// where score differences are multiplied by 100 inside the exponent (f32 rounding in one
/// layer's output would otherwise be amplified past any fixed tolerance by the next). The
/// kernels themselves are checked at τ = 0.01 with scores ≈ 1e4 on identical inputs in
/// tests/kernels.rs.
#[test]
fn gpu_forward_matches_cpu_for_every_option_combination() {
    for (seed, ln, scaled) in [
        (1, LnPlacement::Pre, false),
        (2, LnPlacement::Post, false),
        (7, LnPlacement::Post, true), // the bundled model's shape: wte × √d_model
    ] {
        let config = Config {
            scale_embedding: scaled,
            ..small_config(ln)
        };
        let m = random_model(&config, seed, 0.5);
        let Some(mut e) = engine(&m) else { return };
        let x = ids(21); // not a multiple of the 16-wide tiles or of 8-row groups
        for scale in [true, false] {
            for tau in [1.0, 0.01, 100.0] {
                for causal_mask in [true, false] {
                    for ablate in [vec![], vec![(1, 2)]] {
                        let o = AttentionOptions {
                            scale,
                            temperature: tau,
                            causal_mask,
                            ablate: ablate.into_iter().collect(),
                        };
                        let g = pollster::block_on(e.forward_full(&x, &o)).unwrap();
                        let c = forward(&m, &x, &o).unwrap();
                        assert_trace_close(&format!("{ln:?} scaled {scaled} {o:?}"), &g, &c);
                    }
                }
            }
        }
    }
}

#[test]
fn gpu_forward_matches_cpu_at_t1_full_context_overflow_and_huge_scores() {
    let m = random_model(&small_config(LnPlacement::Post), 3, 1.0);
    let Some(mut e) = engine(&m) else { return };
    let o = AttentionOptions::default();
    for n in [1, 16, 40, 55] {
        let x = ids(n);
        let g = pollster::block_on(e.forward_full(&x, &o)).unwrap();
        assert_trace_close(&format!("T = {n}"), &g, &forward(&m, &x, &o).unwrap());
    }
    // scores ≈ 1e4 in layer 0: its W_Q and W_K scaled up 30×, so QKᵀ grows 900× (the rest of
    // the model at its normal scale, so that later layers are not chaotic)
    let mut big = random_model(&small_config(LnPlacement::Pre), 4, 1.0);
    let d = big.config.n_embd;
    for (i, w) in big.weights.layers[0].c_attn_w.iter_mut().enumerate() {
        if i % (3 * d) < 2 * d {
            *w *= 30.0;
        }
    }
    let Some(mut e) = engine(&big) else { return };
    let x = ids(24);
    let g = pollster::block_on(e.forward_full(&x, &o)).unwrap();
    let c = forward(&big, &x, &o).unwrap();
    let max = c.layers[0].scores.iter().fold(0f32, |a, b| a.max(b.abs()));
    assert!(max > 5e3, "the case wants scores ≈ 1e4, got {max}");
    // A score that cancels to near 0 out of terms of size 1e4 carries f32 rounding of the
    // terms, not of the result: bound each score by the size of its terms, Σ_d |q_d·k_d|.
    let (t, dk, h) = (c.dims.t, c.dims.d_k, c.dims.n_head);
    let (q, k) = (&c.layers[0].q, &c.layers[0].k);
    for (name, gs, cs, scale) in [
        ("scores", &g.layers[0].scores, &c.layers[0].scores, 1.0),
        (
            "scaled",
            &g.layers[0].scaled,
            &c.layers[0].scaled,
            o.scale_factor(dk),
        ),
    ] {
        for e in 0..h * t * t {
            let (hh, i, j) = (e / (t * t), e / t % t, e % t);
            let terms: f32 = (0..dk)
                .map(|x| (q[(hh * t + i) * dk + x] * k[(hh * t + j) * dk + x]).abs())
                .sum();
            let bound = ATOL + RTOL * terms * scale;
            assert!(
                (gs[e] - cs[e]).abs() <= bound,
                "{name}[{e}]: gpu {}, cpu {}, bound {bound}",
                gs[e],
                cs[e]
            );
        }
    }
    let mut g2 = g.clone();
    g2.layers[0].scores = c.layers[0].scores.clone();
    g2.layers[0].scaled = c.layers[0].scaled.clone();
    for (m, cm) in g2.layers[0].masked.iter_mut().zip(&c.layers[0].masked) {
        if *cm == attnlab_model::cpu::MASKED {
            assert_eq!(*m, *cm, "masked entries are MASKED on both");
        }
        *m = *cm;
    }
    assert_trace_close("scores ≈ 1e4", &g2, &c);
}

/// The tiled matrix kernel (a GPU's choice for many rows) and the row kernel (an adapter
/// that runs on the CPU: lavapipe here, so this test forces the tiled one) give the CPU's
/// forward, full and incremental, around the sizes where they switch.
#[test]
fn both_matrix_kernels_give_the_cpu_forward() {
    let m = random_model(&small_config(LnPlacement::Post), 3, 0.5);
    let Some(mut e) = engine(&m) else { return };
    assert!(
        !e.tiled_linear(),
        "lavapipe runs on the CPU: rows by default"
    );
    let o = AttentionOptions::default();
    for tiled in [true, false] {
        e.set_tiled_linear(tiled);
        for t in [8usize, 9, 21] {
            let x = ids(t);
            let g = pollster::block_on(e.forward_full(&x, &o)).unwrap();
            let c = forward(&m, &x, &o).unwrap();
            assert_trace_close(&format!("tiled {tiled}, T {t}"), &g, &c);
        }
        let x = ids(30);
        pollster::block_on(e.forward(&x[..20], &o)).unwrap();
        let g = pollster::block_on(e.forward(&x, &o)).unwrap();
        assert!(e.last_was_incremental());
        let c = forward(&m, &x, &o).unwrap();
        assert_trace_close(&format!("tiled {tiled}, 20 + 10 tokens"), &g, &c);
    }
}

/// The profiler runs the same forward (same Trace, incremental where `forward` would be) and
/// accounts for every dispatch.
#[test]
fn a_profiled_forward_is_the_same_forward_with_every_dispatch_timed() {
    let m = random_model(&small_config(LnPlacement::Post), 4, 0.5);
    let Some(mut e) = engine(&m) else { return };
    let (o, x) = (AttentionOptions::default(), ids(12));
    let start = std::time::Instant::now();
    let now = move || start.elapsed().as_secs_f64() * 1e3;
    let (g, p) = pollster::block_on(e.profile(&x, &o, &now)).unwrap();
    assert!(!p.incremental);
    assert_trace_close("profiled full", &g, &forward(&m, &x, &o).unwrap());
    let counted: usize = p.kernels.iter().map(|k| k.1).sum();
    assert_eq!(counted, e.last_dispatches());
    assert!(p.kernels.iter().all(|k| k.2 >= 0.0) && p.readback_ms >= 0.0);
    assert!(p.floats > 0 && p.total_ms() >= p.readback_ms);
    let y = ids(13);
    let (g, p) = pollster::block_on(e.profile(&y, &o, &now)).unwrap();
    assert!(p.incremental && e.last_was_incremental());
    assert_trace_close("profiled incremental", &g, &forward(&m, &y, &o).unwrap());
}

#[test]
fn a_block_is_at_most_twelve_dispatches_full_or_incremental() {
    for ln in [LnPlacement::Post, LnPlacement::Pre] {
        let m = random_model(&small_config(ln), 8, 1.0);
        let Some(mut e) = engine(&m) else { return };
        let (layers, x) = (m.config.n_layer, ids(30));
        let o = AttentionOptions {
            ablate: [(0, 1), (1, 2)].into(), // switching heads off costs no dispatch
            ..Default::default()
        };
        pollster::block_on(e.forward(&x[..29], &o)).unwrap();
        let full = e.last_dispatches();
        pollster::block_on(e.forward(&x, &o)).unwrap();
        assert!(e.last_was_incremental());
        let inc = e.last_dispatches();
        // per block: full 11 (one score region), incremental 12 (two); around the blocks:
        // embed, lm head, probabilities (+ pre-LN's first LayerNorm)
        let outside = 3 + (ln == LnPlacement::Pre) as usize;
        assert_eq!(full, 11 * layers + outside, "{ln:?} full");
        assert_eq!(inc, 12 * layers + outside, "{ln:?} incremental");
    }
}

#[test]
fn incremental_gpu_forward_equals_full() {
    // with the scaled embedding: the new rows' embed starts at row0 > 0
    let config = Config {
        scale_embedding: true,
        ..small_config(LnPlacement::Post)
    };
    let m = random_model(&config, 5, 1.0);
    let Some(mut e) = engine(&m) else { return };
    let o = AttentionOptions {
        temperature: 0.7,
        ablate: [(0, 1)].into(),
        ..Default::default()
    };
    let x = ids(40);
    pollster::block_on(e.forward(&x[..3], &o)).unwrap();
    for n in [4, 5, 17, 33, 40] {
        let inc = pollster::block_on(e.forward(&x[..n], &o)).unwrap();
        assert!(
            e.last_was_incremental(),
            "T = {n} extends the previous tokens"
        );
        assert_trace_close(
            &format!("incremental T = {n} vs CPU"),
            &inc,
            &forward(&m, &x[..n], &o).unwrap(),
        );
    }
    // the last token replaced, a deletion, an edit in the middle: the shared start is reused
    let mut middle = x[..30].to_vec();
    middle[12] = 2;
    let mut last = x[..31].to_vec();
    last[30] = 3;
    for tokens in [middle, x[..28].to_vec(), last] {
        let g = pollster::block_on(e.forward(&tokens, &o)).unwrap();
        assert!(e.last_was_incremental(), "{tokens:?}");
        assert_trace_close("shared start", &g, &forward(&m, &tokens, &o).unwrap());
    }
    // an edit of the first token, other options, or the mask off: a full forward
    let mut edited = x[..20].to_vec();
    edited[0] = 1;
    for (tokens, opts) in [
        (edited.clone(), o.clone()),
        (x[..30].to_vec(), AttentionOptions::default()),
        (
            x[..35].to_vec(),
            AttentionOptions {
                causal_mask: false,
                ..o.clone()
            },
        ),
    ] {
        let g = pollster::block_on(e.forward(&tokens, &opts)).unwrap();
        assert!(!e.last_was_incremental());
        assert_trace_close(
            "fallback to full",
            &g,
            &forward(&m, &tokens, &opts).unwrap(),
        );
    }
}

#[test]
fn a_lost_device_is_an_error_value_not_a_panic() {
    let m = random_model(&small_config(LnPlacement::Pre), 6, 1.0);
    let Some(mut e) = engine(&m) else { return };
    let x = ids(8);
    pollster::block_on(e.forward(&x, &AttentionOptions::default())).unwrap();
    e.destroy_device();
    let r = pollster::block_on(e.forward(&ids(9), &AttentionOptions::default()));
    assert!(
        matches!(r, Err(GpuError::DeviceLost(_)) | Err(GpuError::Wgpu(_))),
        "{r:?}"
    );
    // and bad input is reported before the GPU is touched
    let bad = pollster::block_on(e.forward(&[500], &AttentionOptions::default()));
    assert!(matches!(bad, Err(GpuError::Model(_))), "{bad:?}");
}

/// A model whose full context would not fit the activation budget gets a smaller one: texts
/// up to that length run and equal the CPU, longer ones are a `TooLong` error (the app runs
/// those on the CPU), never a panic or a wrong trace.
#[test]
fn a_model_too_big_for_the_budget_runs_within_a_smaller_capacity() {
    let config = small_config(LnPlacement::Pre);
    let m = random_model(&config, 9, 0.5);
    let Some(g) = gpu() else { return };
    // a budget for about 20 positions of this model
    let budget = 4
        * 20
        * (config.n_layer * (13 * config.n_embd + config.d_ff()) + 2 * config.vocab_size) as u64
        * 3;
    let cap = attnlab_gpu::engine::capacity(&config, u64::MAX, budget, attnlab_model::Keep::All);
    assert!(cap < config.n_positions && cap >= 16, "capacity {cap}");
    let mut e = pollster::block_on(GpuEngine::with_budget(g, &m, budget)).unwrap();
    assert_eq!(e.capacity(), cap);
    let o = AttentionOptions::default();
    let x = ids(cap);
    let got = pollster::block_on(e.forward(&x, &o)).unwrap();
    assert_trace_close("capacity", &got, &forward(&m, &x, &o).unwrap());
    match pollster::block_on(e.forward(&ids(cap + 1), &o)) {
        Err(GpuError::TooLong { tokens, capacity }) => {
            assert_eq!((tokens, capacity), (cap + 1, cap))
        }
        other => panic!("expected TooLong, got {:?}", other.map(|t| t.dims.t)),
    }
    // and the engine still works afterwards
    let again = pollster::block_on(e.forward(&x[..5], &o)).unwrap();
    assert_trace_close("after TooLong", &again, &forward(&m, &x[..5], &o).unwrap());
}

/// Without the maps (`Keep::Streams`): no (H, P, P) buffer and the attention fused. Every
/// field the trace keeps equals the CPU's trace kept the same way, under every option, at
/// T = 1 and at the whole context, fresh and incremental; a head's maps computed from the
/// GPU's q and k equal the CPU's whole trace's.
#[test]
fn without_the_maps_the_gpu_forward_matches_the_cpu() {
    use attnlab_model::{forward_kept, Keep};
    for (seed, ln) in [(1, LnPlacement::Pre), (2, LnPlacement::Post)] {
        let m = random_model(&small_config(ln), seed, 0.5);
        let Some(g) = gpu() else { return };
        let budget = attnlab_gpu::engine::ACTIVATION_BUDGET;
        let mut e = pollster::block_on(GpuEngine::with_keep(g, &m, budget, Keep::Streams)).unwrap();
        let x = ids(21);
        for tau in [1.0, 0.01] {
            for causal_mask in [true, false] {
                for ablate in [vec![], vec![(1, 2)]] {
                    let o = AttentionOptions {
                        scale: tau == 1.0,
                        temperature: tau,
                        causal_mask,
                        ablate: ablate.into_iter().collect(),
                    };
                    let what = format!("{ln:?} {o:?}");
                    let g = pollster::block_on(e.forward_full(&x, &o)).unwrap();
                    assert_eq!(g.kept(), Keep::Streams, "{what}");
                    let c = forward_kept(&m, None, &x, &o, Keep::Streams).unwrap().0;
                    assert_trace_close(&what, &g, &c);
                    let whole = forward(&m, &x, &o).unwrap();
                    for (l, h) in [(0, 0), (1, 3)] {
                        let (got, want) = (g.head_weights(l, h), whole.head(l, h).weights);
                        common::assert_close(&what, &got, want, ATOL, RTOL);
                    }
                }
            }
        }
        let o = AttentionOptions::default();
        for n in [1, 40] {
            let g = pollster::block_on(e.forward_full(&ids(n), &o)).unwrap();
            let c = forward_kept(&m, None, &ids(n), &o, Keep::Streams)
                .unwrap()
                .0;
            assert_trace_close(&format!("{ln:?} T = {n}"), &g, &c);
        }
        pollster::block_on(e.forward(&x[..9], &o)).unwrap();
        let grown = pollster::block_on(e.forward(&x, &o)).unwrap();
        assert!(e.last_was_incremental());
        let c = forward_kept(&m, None, &x, &o, Keep::Streams).unwrap().0;
        assert_trace_close(&format!("{ln:?} incremental"), &grown, &c);
    }
}

/// A long text's page on the GPU: the engine made again without the maps
/// (`with_new_keep`), then slim forwards — typed at the end (incremental), across a doubling
/// of the thumbnails' span, edited in the middle, τ changed, the mask off, heads switched off
/// — each equal to the CPU's whole trace in its prediction, its asked heads' maps and its
/// pooled thumbnails and roles (`common::check_slim`); then back to the maps, and bad asks
/// refused.
#[test]
fn a_slim_forward_gives_the_cpus_heads_and_thumbnails() {
    use attnlab_gpu::engine::{SlimAsk, ACTIVATION_BUDGET};
    use attnlab_gpu::AnyEngine;
    use attnlab_model::Keep;
    let m = random_model(&small_config(LnPlacement::Pre), 5, 0.5);
    let Some(e) = engine(&m) else { return };
    let mut e = AnyEngine::Gpt2(Box::new(e));
    let whole = AttentionOptions::default();
    // an engine that keeps the maps pools none
    let ask = SlimAsk {
        heads: vec![(0, 0)],
        pool: None,
    };
    let refused = pollster::block_on(e.forward_slim(&ids(5), &whole, &ask));
    assert!(matches!(refused, Err(GpuError::Shape(_))), "{refused:?}");
    e = pollster::block_on(e.with_new_keep(ACTIVATION_BUDGET, Keep::Streams)).unwrap();
    assert_eq!(e.keep(), Keep::Streams);
    let mut edited = ids(33);
    edited[10] = (edited[10] + 1) % 97;
    let tau = AttentionOptions {
        temperature: 0.5,
        ..Default::default()
    };
    let open = AttentionOptions {
        causal_mask: false,
        ..Default::default()
    };
    let off = AttentionOptions {
        ablate: [(0, 1), (1, 3)].into(),
        ..Default::default()
    };
    let runs = [
        (ids(21), whole.clone()),
        (ids(24), whole.clone()),
        (ids(33), whole.clone()),
        (edited.clone(), whole.clone()),
        (edited.clone(), tau),
        (ids(30), open.clone()),
        (ids(31), open),
        (ids(31), off),
    ];
    let cpu = |x: &[u32], o: &AttentionOptions| forward(&m, x, o).unwrap();
    let reused = common::check_slim(&mut e, cpu, &runs, &[(1, 3), (0, 0)], 8);
    assert_eq!(
        reused,
        [false, true, true, true, false, false, false, false]
    );
    // a head the model lacks
    let ask = SlimAsk {
        heads: vec![(2, 0)],
        pool: None,
    };
    let refused = pollster::block_on(e.forward_slim(&ids(5), &whole, &ask));
    assert!(matches!(refused, Err(GpuError::Model(_))), "{refused:?}");
    // and back to an engine with the maps
    e = pollster::block_on(e.with_new_keep(ACTIVATION_BUDGET, Keep::All)).unwrap();
    let g = pollster::block_on(e.forward(&ids(12), &whole)).unwrap();
    assert_trace_close("maps again", &g, &forward(&m, &ids(12), &whole).unwrap());
}
