//! Behaviour of the forward pass and its Trace.

use attnlab_model::cpu::{self, MASKED};
use attnlab_model::testing::{random_model, write_model_dir};
use attnlab_model::{
    forward, forward_incremental, AttentionOptions, Bundle, Config, Error, LnPlacement,
};

fn config(ln: LnPlacement) -> Config {
    Config {
        n_embd: 40,
        n_head: 4,
        n_layer: 3,
        n_positions: 24,
        vocab_size: 61,
        layer_norm_epsilon: 1e-5,
        n_inner: None,
        activation_function: Default::default(),
        ln_placement: ln,
        scale_embedding: false,
    }
}

fn ids(n: usize, salt: u32) -> Vec<u32> {
    (0..n as u32)
        .map(|i| (i * 29 + salt * 7 + 3) % 61)
        .collect()
}

fn assert_rows_are_distributions(w: &[f32], t: usize, causal: bool) {
    for (r, row) in w.chunks_exact(t).enumerate() {
        let i = r % t;
        let sum: f64 = row.iter().map(|&v| v as f64).sum();
        assert!((sum - 1.0).abs() <= 1e-6, "row {r} sums to {sum}");
        assert!(row.iter().all(|v| v.is_finite() && *v >= 0.0));
        if causal {
            assert!(
                row[i + 1..].iter().all(|&v| v == 0.0),
                "row {r} attends to the future"
            );
        }
    }
}

#[test]
fn trace_has_documented_shapes_and_distributions() {
    for ln in [LnPlacement::Pre, LnPlacement::Post] {
        let c = config(ln);
        let m = random_model(&c, 5, 1.0);
        let tr = forward(&m, &ids(9, 1), &AttentionOptions::default()).unwrap();
        let (t, d, h, dk, f, v) = (9, 40, 4, 10, 160, 61);
        assert_eq!(tr.embedding.len(), t * d);
        assert_eq!(tr.layers.len(), 3);
        for l in &tr.layers {
            for x in [
                &l.input,
                &l.attn_in,
                &l.concat,
                &l.attn_out,
                &l.resid_attn,
                &l.ln_1,
                &l.ffn_in,
                &l.ffn_out,
                &l.resid_ffn,
                &l.ln_2,
                &l.output,
            ] {
                assert_eq!(x.len(), t * d);
            }
            for x in [&l.q, &l.k, &l.v, &l.head_out] {
                assert_eq!(x.len(), h * t * dk);
            }
            for x in [&l.scores, &l.scaled, &l.masked, &l.weights] {
                assert_eq!(x.len(), h * t * t);
            }
            assert_eq!(l.ffn_hidden.len(), t * f);
            assert_rows_are_distributions(&l.weights, t, true);
            // scaled = raw / √d_k; masked keeps the past and hides the future
            for (e, (&raw, &sc)) in l.scores.iter().zip(&l.scaled).enumerate() {
                assert!((sc - raw / (dk as f32).sqrt()).abs() <= 1e-6 * raw.abs().max(1.0));
                let (i, j) = ((e / t) % t, e % t);
                assert_eq!(l.masked[e], if j > i { MASKED } else { sc });
            }
        }
        assert_eq!(tr.ln_f.is_some(), ln == LnPlacement::Pre);
        assert_eq!(tr.logits.len(), t * v);
        assert_rows_are_distributions(&tr.probs, v, false);
        // the block output feeds the next block
        assert_eq!(tr.layers[0].output, tr.layers[1].input);
        // the head view slices the right head
        let hv = tr.head(2, 3);
        assert_eq!(hv.weights, &tr.layers[2].weights[3 * t * t..4 * t * t]);
    }
}

#[test]
fn ablation_zeroes_the_head_and_changes_only_later_layers_and_logits() {
    let m = random_model(&config(LnPlacement::Post), 6, 1.0);
    let x = ids(10, 2);
    let base = forward(&m, &x, &AttentionOptions::default()).unwrap();
    let o = AttentionOptions {
        ablate: [(1, 2)].into(),
        ..Default::default()
    };
    let abl = forward(&m, &x, &o).unwrap();
    let hv = abl.head(1, 2);
    assert!(hv.head_out.iter().all(|&v| v == 0.0));
    assert_eq!(
        hv.weights,
        base.head(1, 2).weights,
        "weights are still shown"
    );
    assert_eq!(
        abl.layers[0], base.layers[0],
        "layer 0 does not see layer 1's ablation"
    );
    assert_ne!(
        abl.layers[2].weights, base.layers[2].weights,
        "the effect reaches layer 2"
    );
    assert_ne!(abl.logits, base.logits);
}

#[test]
fn options_act_inside_the_forward_pass() {
    let m = random_model(&config(LnPlacement::Pre), 7, 1.0);
    let x = ids(8, 3);
    let base = forward(&m, &x, &AttentionOptions::default()).unwrap();
    for o in [
        AttentionOptions {
            scale: false,
            ..Default::default()
        },
        AttentionOptions {
            temperature: 0.2,
            ..Default::default()
        },
        AttentionOptions {
            causal_mask: false,
            ..Default::default()
        },
    ] {
        let tr = forward(&m, &x, &o).unwrap();
        assert_ne!(tr.logits, base.logits, "{o:?}");
        assert_eq!(
            tr.layers[0].scores, base.layers[0].scores,
            "raw scores of layer 0 do not depend on options"
        );
    }
    let no_mask = forward(
        &m,
        &x,
        &AttentionOptions {
            causal_mask: false,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(
        no_mask.layers[0].weights[1] > 0.0,
        "without the mask the first token sees the second"
    );
    assert_rows_are_distributions(&no_mask.layers[1].weights, 8, false);
    let unscaled = forward(
        &m,
        &x,
        &AttentionOptions {
            scale: false,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(unscaled.layers[0].scaled, unscaled.layers[0].scores);
}

#[test]
fn bad_options_and_tokens_are_errors() {
    let m = random_model(&config(LnPlacement::Pre), 8, 1.0);
    for tau in [0.0, -1.0, f32::NAN, f32::INFINITY] {
        let o = AttentionOptions {
            temperature: tau,
            ..Default::default()
        };
        assert!(
            matches!(forward(&m, &[1, 2], &o), Err(Error::Options(_))),
            "τ = {tau}"
        );
    }
    let o = AttentionOptions {
        ablate: [(3, 0)].into(),
        ..Default::default()
    };
    assert!(matches!(forward(&m, &[1], &o), Err(Error::Options(_))));
    assert_eq!(
        forward(&m, &[], &Default::default()).unwrap_err(),
        Error::EmptyInput
    );
    assert_eq!(
        forward(&m, &[1, 61], &Default::default()).unwrap_err(),
        Error::TokenOutOfRange {
            id: 61,
            position: 1,
            vocab: 61
        }
    );
}

#[test]
fn long_input_keeps_the_last_n_positions_tokens() {
    let m = random_model(&config(LnPlacement::Pre), 9, 1.0);
    let x = ids(30, 4);
    let tr = forward(&m, &x, &Default::default()).unwrap();
    assert_eq!((tr.dims.t, tr.dropped), (24, 6));
    assert_eq!(tr.tokens, x[6..]);
    assert_eq!(
        tr,
        forward(&m, &x[6..], &Default::default())
            .map(|mut t| {
                t.dropped = 6;
                t
            })
            .unwrap()
    );
}

#[test]
fn extreme_scores_and_temperatures_stay_finite() {
    // huge weights make scores of order 1e4 and beyond
    let m = random_model(&config(LnPlacement::Post), 10, 60.0);
    let x = ids(24, 5);
    for tau in [0.01, 1.0, 100.0] {
        for scale in [true, false] {
            let o = AttentionOptions {
                temperature: tau,
                scale,
                ablate: [(0, 0), (1, 1)].into(),
                ..Default::default()
            };
            let tr = forward(&m, &x, &o).unwrap();
            let max_score = tr.layers[0]
                .scores
                .iter()
                .fold(0.0f32, |a, b| a.max(b.abs()));
            assert!(
                max_score > 1e3,
                "the test wants large scores, got {max_score}"
            );
            for l in &tr.layers {
                assert_rows_are_distributions(&l.weights, 24, true);
                assert!(l.output.iter().all(|v| v.is_finite()));
            }
            assert!(tr.logits.iter().all(|v| v.is_finite()));
            assert_rows_are_distributions(&tr.probs, 61, false);
        }
    }
    // every head ablated still gives a finite trace
    let all: std::collections::BTreeSet<_> =
        (0..3).flat_map(|l| (0..4).map(move |h| (l, h))).collect();
    let tr = forward(
        &m,
        &x,
        &AttentionOptions {
            ablate: all,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(tr.logits.iter().all(|v| v.is_finite()));
}

#[test]
fn softmax_rows_with_scores_up_to_1e30() {
    let row = [1e30f32, -1e30, 3.0, 1e29, -5e29, 0.0];
    for tau in [0.01f32, 1.0, 100.0] {
        let mut w = [0.0; 6];
        cpu::softmax_rows(&row, 6, tau, &mut w);
        assert_eq!(w[0], 1.0, "τ = {tau}: {w:?}");
        assert!(w[1..].iter().all(|&v| v == 0.0));
    }
}

fn assert_close(a: &[f32], b: &[f32], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: lengths");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            (x - y).abs() <= 1e-6 + 1e-6 * y.abs(),
            "{what}[{i}]: incremental {x}, full {y}"
        );
    }
}

#[test]
fn scale_embedding_multiplies_the_token_row_not_the_position_row() {
    let plain = random_model(&config(LnPlacement::Post), 12, 1.0);
    let mut scaled = plain.clone();
    scaled.config.scale_embedding = true;
    let x = ids(6, 1);
    let (a, b) = (
        forward(&plain, &x, &AttentionOptions::default()).unwrap(),
        forward(&scaled, &x, &AttentionOptions::default()).unwrap(),
    );
    let (d, s) = (40, 40f32.sqrt());
    let w = &plain.weights;
    for (t, &id) in x.iter().enumerate() {
        for c in 0..d {
            let (tok, pos) = (w.wte[id as usize * d + c], w.wpe[t * d + c]);
            assert_eq!(a.embedding[t * d + c], tok + pos);
            assert_eq!(b.embedding[t * d + c], tok * s + pos);
        }
    }
    assert_ne!(a.logits, b.logits);
}

#[test]
fn incremental_forward_equals_full_forward() {
    for (ln, scaled) in [
        (LnPlacement::Pre, false),
        (LnPlacement::Post, false),
        (LnPlacement::Post, true),
    ] {
        let m = random_model(
            &Config {
                scale_embedding: scaled,
                ..config(ln)
            },
            11,
            1.0,
        );
        let x = ids(20, 6);
        let o = AttentionOptions {
            temperature: 0.7,
            ablate: [(1, 0)].into(),
            ..Default::default()
        };
        let mut prev = forward(&m, &x[..5], &o).unwrap();
        for n in [6, 7, 11, 20] {
            let (inc, reused) = forward_incremental(&m, Some(&prev), &x[..n], &o).unwrap();
            assert!(reused, "typing at the end reuses the cache");
            let full = forward(&m, &x[..n], &o).unwrap();
            assert_eq!(inc.tokens, full.tokens);
            for ((name, a), (_, b)) in inc.fields().into_iter().zip(full.fields()) {
                assert_close(a, b, &format!("{ln:?} scaled {scaled} T={n} {name}"));
            }
            prev = inc;
        }
    }
}

#[test]
fn incremental_forward_reuses_the_shared_start_after_any_edit() {
    // BPE often replaces the last token as the user types; deleting shortens the input; an
    // edit in the middle keeps the rows before it. Each must equal the full forward.
    for ln in [LnPlacement::Pre, LnPlacement::Post] {
        let m = random_model(&config(ln), 13, 1.0);
        let x = ids(24, 8);
        let o = AttentionOptions::default();
        let replaced_last: Vec<u32> = [&x[..9], &[3, 1][..]].concat();
        let middle: Vec<u32> = [&x[..4], &[7][..], &x[5..12]].concat();
        let cases: [(&[u32], &[u32], usize); 5] = [
            (&x[..10], &replaced_last, 9), // the last token changed, one more came
            (&x[..10], &x[..7], 6),        // deleted at the end: rows up to the new last kept
            (&x[..12], &middle, 4),        // an edit at position 4
            (&x[..10], &x[..10], 9),       // the same input: only the last row is recomputed
            (&x[..3], &x[..24], 3),        // a long append
        ];
        for (before, after, shared) in cases {
            let prev = forward(&m, before, &o).unwrap();
            let (inc, reused) = forward_incremental(&m, Some(&prev), after, &o).unwrap();
            assert!(reused, "{before:?} → {after:?} shares {shared} rows");
            let full = forward(&m, after, &o).unwrap();
            for ((name, a), (_, b)) in inc.fields().into_iter().zip(full.fields()) {
                assert_close(a, b, &format!("{ln:?} {before:?} → {after:?} {name}"));
            }
        }
    }
}

#[test]
fn incremental_falls_back_when_it_must() {
    let m = random_model(&config(LnPlacement::Pre), 12, 1.0);
    let x = ids(26, 7);
    let d = AttentionOptions::default();
    let prev = forward(&m, &x[..5], &d).unwrap();
    let no_mask = AttentionOptions {
        causal_mask: false,
        ..Default::default()
    };
    let edited: Vec<u32> = [&[9][..], &x[1..8]].concat();
    let cases: [(&[u32], &AttentionOptions); 4] = [
        (&x[..8], &no_mask), // mask off: every row changes
        (&edited, &d),       // the first token changed: nothing is shared
        (&x[..26], &d),      // context overflow shifts positions
        (
            &x[..8],
            &AttentionOptions {
                temperature: 2.0,
                ..Default::default()
            },
        ), // other options
    ];
    for (tokens, o) in cases {
        let (tr, reused) = forward_incremental(&m, Some(&prev), tokens, o).unwrap();
        assert!(!reused);
        assert_eq!(tr, forward(&m, tokens, o).unwrap());
    }
}

#[test]
fn lesson_sentence_tokenizes_readably_with_spans() {
    let dir = std::env::temp_dir().join(format!("attnlab-model-test-{}", std::process::id()));
    write_model_dir(&dir, LnPlacement::Post, 3).unwrap();
    let b = Bundle::load_dir(&dir).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    let text = "나는 어제 산 커피를 오늘 마셨다";
    let toks = b.tokenizer.encode(text).unwrap();
    let chars: Vec<char> = text.chars().collect();
    for t in &toks {
        assert!(!t.display.contains('\u{FFFD}'), "{t:?}");
        assert!(t.span.0 < t.span.1 && t.span.1 <= chars.len());
    }
    // 산 is split in two byte-level tokens: both show the syllable and map to its span
    let san: Vec<_> = toks
        .iter()
        .filter(|t| t.display.starts_with("산"))
        .collect();
    assert_eq!(san.len(), 2);
    assert_eq!(san[0].display, "산‹1-2/3›");
    assert_eq!(san[1].display, "산‹3/3›");
    assert!(san.iter().all(|t| t.partial && t.span == (6, 7)));
    let whole: Vec<_> = toks
        .iter()
        .filter(|t| !t.partial)
        .map(|t| t.display.as_str())
        .collect();
    assert!(
        whole.contains(&"나") && whole.contains(&"커") && whole.contains(&"␣"),
        "{whole:?}"
    );
    // and the model runs on it
    let (_, tr) = b.trace(text, &Default::default()).unwrap();
    assert_eq!(tr.dims.t, toks.len());
}

#[test]
fn byte_fallback_tokens_display_the_character() {
    let tok = attnlab_model::Tokenizer::from_bytes(
        attnlab_model::testing::char_bpe_tokenizer_json("나는 커피").as_bytes(),
    )
    .unwrap();
    assert!(!tok.is_byte_level());
    let toks = tok.encode("나는 🙂 커피\u{0}").unwrap();
    let shown: Vec<&str> = toks.iter().map(|t| t.display.as_str()).collect();
    assert_eq!(&shown[..3], ["나", "는", "␣"]);
    // the emoji is not in the vocabulary: four byte tokens, each naming the emoji
    assert_eq!(&shown[3..7], ["🙂‹1/4›", "🙂‹2/4›", "🙂‹3/4›", "🙂‹4/4›"]);
    assert!(toks[3..7].iter().all(|t| t.span == (3, 4)));
    assert_eq!(shown.last(), Some(&"␀"));
}

/// Numerics stress: weights so large that raw scores reach ~1e30, τ at both ends, the whole
/// context, every head ablated — nothing in the Trace is NaN or infinite and every row of
/// weights and probabilities is a distribution.
#[test]
fn huge_scores_extreme_temperatures_full_context_and_all_heads_ablated_stay_finite() {
    let c = config(LnPlacement::Post);
    let all: std::collections::BTreeSet<(usize, usize)> = (0..c.n_layer)
        .flat_map(|l| (0..c.n_head).map(move |h| (l, h)))
        .collect();
    // post-LN feeds the raw embedding to layer 0 (scores grow as scale⁴), pre-LN a
    // normalised one (scale²): both scales reach scores of ≈ 1e20…1e30
    for (scale, ln) in [
        (1.0, LnPlacement::Post),
        (6e6, LnPlacement::Post),
        (8e13, LnPlacement::Pre),
    ] {
        let m = random_model(&config(ln), 21, scale);
        let x = ids(c.n_positions, 9);
        for tau in [0.01, 100.0] {
            for ablate in [Default::default(), all.clone()] {
                let o = AttentionOptions {
                    temperature: tau,
                    ablate,
                    ..Default::default()
                };
                let tr = forward(&m, &x, &o).unwrap();
                let what = format!("scale {scale} {ln:?} τ {tau} ablated {}", o.ablate.len());
                for (field, xs) in tr.fields() {
                    if let Some(i) = xs.iter().position(|v| !v.is_finite()) {
                        panic!("{what}: {field}[{i}] = {}", xs[i]);
                    }
                }
                let peak = tr
                    .layers
                    .iter()
                    .flat_map(|l| &l.scores)
                    .fold(0.0f32, |a, &b| a.max(b.abs()));
                if scale > 1.0 {
                    assert!(peak > 1e28, "{what}: scores only reach {peak}");
                }
                for l in &tr.layers {
                    assert_rows_are_distributions(&l.weights, c.n_positions, true);
                }
                for row in tr.probs.chunks(c.vocab_size) {
                    let s: f64 = row.iter().map(|&v| v as f64).sum();
                    assert!((s - 1.0).abs() <= 1e-5, "{what}: probs sum {s}");
                }
            }
        }
    }
}

#[test]
fn the_fields_the_trace_layout_calls_shared_repeat_their_source_exactly_and_no_others_do() {
    use attnlab_model::{Field, TraceLayout};
    for ln in [LnPlacement::Pre, LnPlacement::Post] {
        let c = config(ln);
        let m = random_model(&c, 9, 1.0);
        let opts = AttentionOptions::default();
        let full = forward(&m, &ids(11, 2), &opts).unwrap();
        let prefix = forward(&m, &ids(11, 2)[..7], &opts).unwrap();
        let (grown, reused) = forward_incremental(&m, Some(&prefix), &ids(11, 2), &opts).unwrap();
        assert!(reused);
        let layout = TraceLayout::new(&c);
        for tr in [&full, &grown] {
            for (li, l) in tr.layers.iter().enumerate() {
                // a block reads the stream the previous block left
                let before = if li == 0 {
                    &tr.embedding
                } else {
                    &tr.layers[li - 1].output
                };
                assert_eq!(&l.input, before, "{ln:?} layer {li}");
                for f in Field::ALL {
                    match layout.same_as(f) {
                        Some(src) => assert_eq!(f.of(l), src.of(l), "{ln:?} {}", f.name()),
                        // a field computed on its own differs from every other one
                        None => {
                            for g in Field::ALL {
                                if g != f && layout.stored(g) != f {
                                    assert_ne!(
                                        f.of(l),
                                        g.of(l),
                                        "{ln:?} {} = {}",
                                        f.name(),
                                        g.name()
                                    );
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
