//! A trace that keeps no maps (`Keep::Streams`) and the maps computed on demand from it
//! (`Trace::head_rows`): what it keeps equals the whole trace's fields, and every head's
//! four maps, for any range of query rows, equal the whole trace's bit for bit — on the GPT-2
//! forward (pre- and post-LN) and the Llama one (GQA, both RoPE pair layouts), under every
//! attention option, fresh and incremental.

use attnlab_model::cpu::MASKED;
use attnlab_model::llama::{LlamaBundle, LlamaModel};
use attnlab_model::roles;
use attnlab_model::testing::{random_model, tiny_config};
use attnlab_model::{forward_kept, AttentionOptions, Dims, Error, Field, Keep, LnPlacement, Trace};

fn llama_models() -> Vec<LlamaModel> {
    let dir = env!("CARGO_MANIFEST_DIR");
    let gguf = std::fs::read(format!("{dir}/tests/data/malformed-gguf/valid.gguf")).unwrap();
    let hf = format!("{dir}/tests/data/hf/llama3-untied-bias");
    vec![
        LlamaBundle::from_gguf_bytes(&gguf).unwrap().model,
        LlamaModel::load_hf_dir(std::path::Path::new(&hf)).unwrap(),
    ]
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
            temperature: 0.37,
            ablate: [(0, 1)].into(),
            ..base.clone()
        },
        AttentionOptions {
            causal_mask: false,
            ..base
        },
    ]
}

/// `lean` kept exactly what `Keep::Streams` keeps, each equal to `full`'s, and its maps on
/// demand equal `fresh`'s (a whole trace run from scratch) over several row ranges. (An
/// incremental whole trace scores its old queries against the new keys in a product of its
/// own, which can differ in the last bit above the diagonal.)
fn check(full: &Trace, lean: &Trace, fresh: &Trace, what: &str) {
    assert_eq!(full.kept(), Keep::All, "{what}");
    assert_eq!(lean.kept(), Keep::Streams, "{what}");
    assert_eq!(
        (&lean.embedding, &lean.ln_f),
        (&full.embedding, &full.ln_f),
        "{what}"
    );
    // the prediction after the last position only (through the head for one row: the
    // quantized head's direct product rounds apart from the tiles by an ulp or so)
    let t = full.dims.t;
    let v = full.dims.vocab;
    assert_eq!((lean.logits.len(), lean.probs.len()), (v, v), "{what}");
    for (a, b) in [
        (&lean.logits[..], full.last_logits()),
        (lean.probs_at(t - 1), full.probs_at(t - 1)),
    ] {
        for (x, y) in a.iter().zip(b) {
            assert!((x - y).abs() <= 1e-5 + 1e-5 * y.abs(), "{what}: {x} vs {y}");
        }
    }
    assert!(t == 1 || lean.probs_row(t - 2).is_none(), "{what}");
    assert!(lean.probs_row(t).is_none() && full.probs_row(t).is_none());
    for (l, (a, b)) in lean.layers.iter().zip(&full.layers).enumerate() {
        for f in Field::ALL {
            if Keep::Streams.keeps(f) {
                assert_eq!(f.of(a), f.of(b), "{what}: layer {l} {}", f.name());
            } else {
                assert!(f.of(a).is_empty(), "{what}: layer {l} {} kept", f.name());
            }
        }
    }
    for l in 0..full.dims.n_layer {
        for h in 0..full.dims.n_head {
            let hv = fresh.head(l, h);
            for rows in [0..t, 0..1, t / 2..t, t - 1..t, 2..2] {
                let want = fresh.head_rows(l, h, rows.clone()).unwrap();
                let cells = rows.start * t..rows.end * t;
                assert_eq!(want.weights, hv.weights[cells.clone()], "{what}");
                assert_eq!(want.masked, hv.masked[cells], "{what}");
                let got = lean.head_rows(l, h, rows.clone()).unwrap();
                assert_eq!(got, want, "{what}: head {l}.{h}, rows {rows:?}");
            }
        }
    }
}

#[test]
fn the_maps_on_demand_equal_the_whole_traces_on_the_gpt2_forward() {
    for ln in [LnPlacement::Pre, LnPlacement::Post] {
        let config = attnlab_model::Config {
            n_positions: 16,
            ..tiny_config(ln)
        };
        let model = random_model(&config, 11, 0.8);
        let ids: Vec<u32> = (0..13).map(|i| (i * 7 + 3) % 20).collect();
        for o in options() {
            let what = format!("{ln:?} {o:?}");
            let full = forward_kept(&model, None, &ids, &o, Keep::All).unwrap().0;
            let lean = forward_kept(&model, None, &ids, &o, Keep::Streams)
                .unwrap()
                .0;
            check(&full, &lean, &full, &what);
            // typing at the end: the lean trace reuses a lean one's rows (its keys and
            // values), and equals the whole incremental trace on what it keeps
            if o.causal_mask {
                let before = &ids[..8];
                let prev_full = forward_kept(&model, None, before, &o, Keep::All).unwrap().0;
                let prev_lean = forward_kept(&model, None, before, &o, Keep::Streams)
                    .unwrap()
                    .0;
                let (inc_full, a) =
                    forward_kept(&model, Some(&prev_full), &ids, &o, Keep::All).unwrap();
                let (inc_lean, b) =
                    forward_kept(&model, Some(&prev_lean), &ids, &o, Keep::Streams).unwrap();
                assert!(a, "{what}: the whole trace was not grown");
                assert!(b, "{what}: the lean trace was not grown");
                check(&inc_full, &inc_lean, &full, &format!("{what}, incremental"));
                // a whole trace is not grown from a lean one (it has no maps to reuse); a
                // lean one is, from a whole one (a text growing past what the page holds)
                let (_, reused) =
                    forward_kept(&model, Some(&prev_lean), &ids, &o, Keep::All).unwrap();
                assert!(!reused);
                let (from_full, reused) =
                    forward_kept(&model, Some(&prev_full), &ids, &o, Keep::Streams).unwrap();
                assert!(reused, "{what}: a lean trace is grown from a whole one");
                check(
                    &inc_full,
                    &from_full,
                    &full,
                    &format!("{what}, lean from whole"),
                );
            }
        }
    }
}

#[test]
fn the_maps_on_demand_equal_the_whole_traces_on_the_llama_forward() {
    for (i, m) in llama_models().iter().enumerate() {
        let ids: Vec<u32> = (0..14).map(|i| (i * 37 + 5) % 90 + 1).collect();
        for o in options() {
            let what = format!("model {i} {o:?}");
            let full = m.trace_kept(None, &ids, &o, Keep::All).unwrap().0;
            let lean = m.trace_kept(None, &ids, &o, Keep::Streams).unwrap().0;
            check(&full, &lean, &full, &what);
            if o.causal_mask {
                let prev_full = m.trace_kept(None, &ids[..9], &o, Keep::All).unwrap().0;
                let prev_lean = m.trace_kept(None, &ids[..9], &o, Keep::Streams).unwrap().0;
                let (inc_full, a) = m.trace_kept(Some(&prev_full), &ids, &o, Keep::All).unwrap();
                let (inc_lean, b) = m
                    .trace_kept(Some(&prev_lean), &ids, &o, Keep::Streams)
                    .unwrap();
                assert!(a, "{what}: the whole trace was not grown");
                assert!(b, "{what}: the lean trace was not grown");
                check(&inc_full, &inc_lean, &full, &format!("{what}, incremental"));
                let (from_full, c) = m
                    .trace_kept(Some(&prev_full), &ids, &o, Keep::Streams)
                    .unwrap();
                assert!(c, "{what}: a lean trace is grown from a whole one");
                check(
                    &inc_full,
                    &from_full,
                    &full,
                    &format!("{what}, lean from whole"),
                );
                let (_, d) = m.trace_kept(Some(&prev_lean), &ids, &o, Keep::All).unwrap();
                assert!(!d, "{what}: a whole trace is not grown from a lean one");
            }
        }
    }
}

/// A slim trace (`Trace::slim`) of a few heads shows those heads exactly as the whole trace
/// does — vectors, the four maps, rows of them, the weights — the prediction after the last
/// position, and no other head; it survives JSON as the export writes it.
#[test]
fn a_slim_trace_holds_its_heads_exactly_and_nothing_else() {
    let gpt2 = random_model(&tiny_config(LnPlacement::Pre), 2, 0.5);
    let llama = &llama_models()[0];
    let ids: Vec<u32> = (0..11).map(|i| (i * 7 + 3) % 19 + 1).collect();
    let long: Vec<u32> = (0..11).map(|i| (i * 29 + 3) % 60 + 1).collect();
    for o in options() {
        let traces = [
            (
                forward_kept(&gpt2, None, &ids, &o, Keep::All).unwrap().0,
                forward_kept(&gpt2, None, &ids, &o, Keep::Streams)
                    .unwrap()
                    .0,
            ),
            (
                llama.trace_kept(None, &long, &o, Keep::All).unwrap().0,
                llama.trace_kept(None, &long, &o, Keep::Streams).unwrap().0,
            ),
        ];
        for (i, (full, lean)) in traces.iter().enumerate() {
            let what = format!("model {i} {o:?}");
            let d = full.dims;
            let asked = [(d.n_layer - 1, 1), (0, 0), (0, 0)];
            for source in [full, lean] {
                let slim = source.slim(&asked).unwrap();
                assert_eq!(
                    slim.heads.len(),
                    2,
                    "{what}: a head asked twice is kept once"
                );
                assert_eq!(slim.kept(), Keep::Streams, "{what}");
                assert!(slim.embedding.is_empty() && slim.layers.iter().all(|l| l.q.is_empty()));
                // (a lean trace's one-row head rounds apart from the whole one's tiles)
                assert_eq!(slim.last_logits(), source.last_logits(), "{what}");
                assert_eq!(slim.probs_row(d.t - 1), source.probs_row(d.t - 1), "{what}");
                assert_eq!(slim.probs_row(0), None, "{what}");
                for l in 0..d.n_layer {
                    for h in 0..d.n_head {
                        let held = asked.contains(&(l, h));
                        assert_eq!(slim.has_head(l, h), held, "{what}: {l}.{h}");
                        if !held {
                            assert!(slim.head_rows(l, h, 0..1).is_err(), "{what}: {l}.{h}");
                            continue;
                        }
                        let (a, b) = (slim.head(l, h), full.head(l, h));
                        for (x, y) in [
                            (a.q, b.q),
                            (a.k, b.k),
                            (a.v, b.v),
                            (a.head_out, b.head_out),
                            (a.scores, b.scores),
                            (a.scaled, b.scaled),
                            (a.masked, b.masked),
                            (a.weights, b.weights),
                        ] {
                            assert_eq!(x, y, "{what}: head {l}.{h}");
                        }
                        assert_eq!(
                            slim.head_rows(l, h, 3..7).unwrap(),
                            full.head_rows(l, h, 3..7).unwrap(),
                            "{what}: {l}.{h} rows"
                        );
                        assert_eq!(slim.head_weights(l, h), full.head_weights(l, h));
                        assert_eq!(
                            attnlab_model::flow::value_weighted(&slim, l, h),
                            attnlab_model::flow::value_weighted(full, l, h),
                            "{what}: {l}.{h} value-weighted"
                        );
                    }
                }
                assert!(
                    attnlab_model::lens::stage_rows(&slim, d.t - 1).is_err(),
                    "{what}: a slim trace keeps no residual rows for the lens"
                );
                let json = serde_json::to_string(&slim).unwrap();
                let back: Trace = serde_json::from_str(&json).unwrap();
                assert_eq!(back, slim, "{what}");
            }
        }
    }
    // a whole trace's JSON is as it was: no `heads` key
    let full = forward_kept(&gpt2, None, &ids, &AttentionOptions::default(), Keep::All)
        .unwrap()
        .0;
    assert!(!serde_json::to_string(&full).unwrap().contains("\"heads\""));
    let asked_outside = full.slim(&[(9, 0)]);
    assert!(
        asked_outside.is_err(),
        "a head outside the model is an error"
    );
}

/// A slim trace grown from the previous one (`slim_after`: the shared rows moved, only the
/// rest computed) equals one computed whole, after a token typed at the end, a few pasted,
/// an edit in the middle, tokens deleted (12 → 11 → 10: rows kept at a shorter length), another
/// head asked, other options and the mask off
/// (nothing shared: all computed) — on both forwards. Whether the rows were taken from the
/// earlier trace is seen through a mark put in its first row. The same for a slim trace made
/// from the heads' vectors (`slim_from`, the GPU engine's path) given the earlier one.
#[test]
fn a_slim_trace_grown_from_the_previous_one_equals_one_computed_whole() {
    const MARK: f32 = 42.0;
    let config = attnlab_model::Config {
        n_positions: 32,
        ..tiny_config(LnPlacement::Pre)
    };
    let gpt2 = random_model(&config, 4, 0.5);
    let llama = &llama_models()[0];
    let base: Vec<u32> = (0..9).map(|i| (i * 7 + 3) % 19 + 1).collect();
    let typed = |extra: &[u32]| [&base[..], extra].concat();
    let o = AttentionOptions::default();
    let hot = AttentionOptions {
        temperature: 0.5,
        ..o.clone()
    };
    let no_mask = AttentionOptions {
        causal_mask: false,
        ..o.clone()
    };
    // (text, options, whether head 0.0 is asked too, whether the first row is shared)
    let steps: Vec<(Vec<u32>, &AttentionOptions, bool, bool)> = vec![
        (typed(&[5]), &o, false, true),
        (typed(&[5, 8, 2, 9]), &o, true, true),
        (
            [&[1, 1][..], &typed(&[5, 8, 2, 9])[2..]].concat(),
            &o,
            false,
            false,
        ),
        (typed(&[5, 8, 2, 9]), &o, false, false),
        (
            [&base[..3], &[17][..], &typed(&[5, 8])[4..]].concat(),
            &o,
            false,
            true,
        ),
        (typed(&[5, 8]), &o, false, true),
        (typed(&[5, 8, 2]), &o, false, true),
        (typed(&[5, 8]), &o, false, true),
        (typed(&[5]), &o, false, true),
        (typed(&[5, 3]), &hot, false, false),
        (typed(&[5, 3, 1]), &hot, false, true),
        (typed(&[5, 3, 1, 6]), &no_mask, false, false),
    ];
    type Run<'a> = Box<dyn Fn(Option<&Trace>, &[u32], &AttentionOptions) -> Trace + 'a>;
    let runs: [(&str, Run); 2] = [
        (
            "gpt2",
            Box::new(|p, ids, o| forward_kept(&gpt2, p, ids, o, Keep::Streams).unwrap().0),
        ),
        (
            "llama",
            Box::new(|p, ids, o| llama.trace_kept(p, ids, o, Keep::Streams).unwrap().0),
        ),
    ];
    for (name, run) in runs {
        let mut lean = run(None, &base, &o);
        // the last block's head 1, and head 0.0 when a step asks for it too
        let main = (lean.dims.n_layer - 1, 1);
        let mut slim = lean.slim(&[main]).unwrap();
        for (n, (ids, opts, second, shared)) in steps.iter().enumerate() {
            let what = format!("{name}, step {n}");
            let asked = &if *second {
                vec![main, (0, 0)]
            } else {
                vec![main]
            }[..];
            let next = run(Some(&lean), ids, opts);
            let want = next.slim(asked).unwrap();
            let got = next.slim_after(asked, slim.clone()).unwrap();
            assert_eq!(got, want, "{what}: grown = computed whole");
            // the same again from an earlier trace whose first row is marked
            let mut marked = slim.clone();
            for m in &mut marked.heads {
                m.weights[0] = MARK;
            }
            let got = next.slim_after(asked, marked).unwrap();
            let first = got.head(main.0, main.1).weights[0];
            assert_eq!(
                first == MARK,
                *shared,
                "{what}: the first row taken from the earlier trace"
            );
            if let Some(m) = got.heads.iter().find(|m| (m.layer, m.head) == (0, 0)) {
                assert_ne!(
                    m.weights[0], MARK,
                    "{what}: a head the earlier trace lacks is computed"
                );
            }
            // from the heads' vectors, as the page makes the GPU engine's result
            let from_vectors = |earlier: Option<&Trace>| {
                let vectors = asked
                    .iter()
                    .map(|&(l, h)| next.head_vectors(l, h).unwrap())
                    .collect();
                let meta = (&next.tokens[..], next.dropped, &next.options);
                let preds = (want.logits.clone(), want.probs.clone());
                Trace::slim_from(next.dims, meta, preds, vectors, earlier).unwrap()
            };
            assert_eq!(from_vectors(None), want, "{what}: from the vectors, whole");
            assert_eq!(
                from_vectors(Some(&slim)),
                want,
                "{what}: from the vectors, grown"
            );
            let mut marked = slim.clone();
            for m in &mut marked.heads {
                m.weights[0] = MARK;
            }
            let got = from_vectors(Some(&marked));
            assert_eq!(
                got.head(main.0, main.1).weights[0] == MARK,
                *shared,
                "{what}: from the vectors, the first row taken from the earlier trace"
            );
            (lean, slim) = (next, want);
        }
    }
}

/// What is read from the maps — the heads' roles, the probe's induction scores, attention
/// flow — is the same from a trace without them.
#[test]
fn roles_and_flow_read_a_trace_without_maps_as_a_whole_one() {
    use attnlab_model::flow::{self, Method};
    use attnlab_model::roles::{text_scores, Probe};
    let model = random_model(&tiny_config(LnPlacement::Pre), 5, 1.0);
    let probe = Probe::from_candidates(&(0..20).collect::<Vec<u32>>(), 4, 7, 8);
    let o = AttentionOptions::default();
    let full = forward_kept(&model, None, &probe.ids, &o, Keep::All)
        .unwrap()
        .0;
    let lean = forward_kept(&model, None, &probe.ids, &o, Keep::Streams)
        .unwrap()
        .0;
    assert_eq!(text_scores(&lean), text_scores(&full));
    // the lens at any position: the same stages, the same final prediction
    for pos in [0, 3, probe.ids.len() - 1] {
        let rows = |tr| attnlab_model::lens::stage_rows(tr, pos).unwrap();
        assert_eq!(rows(&lean), rows(&full));
        let a = attnlab_model::lens::logit_lens(&model, &lean, pos, 3).unwrap();
        let b = attnlab_model::lens::logit_lens(&model, &full, pos, 3).unwrap();
        assert_eq!(a, b, "position {pos}");
    }
    assert_eq!(probe.scores(&lean), probe.scores(&full));
    assert_eq!(flow::rollout(&lean), flow::rollout(&full));
    for m in [Method::Raw, Method::Value, Method::Rollout] {
        assert_eq!(
            flow::strip(&lean, 5, m).unwrap(),
            flow::strip(&full, 5, m).unwrap(),
            "{m:?}"
        );
    }
}

/// The heads grid's thumbnails: each head's weights themselves when the text fits, else
/// each cell the mean over its rows of the weight they give its columns; a row of cells sums
/// to 1; the same from a trace with or without maps.
/// 13 tokens through a small post-LN model (16 positions), keeping what `keep` keeps.
fn thirteen_tokens(keep: Keep) -> Trace {
    let config = attnlab_model::Config {
        n_positions: 16,
        ..tiny_config(LnPlacement::Post)
    };
    let model = random_model(&config, 9, 1.0);
    let ids: Vec<u32> = (0..13).map(|i| (i * 5 + 1) % 20).collect();
    let o = AttentionOptions::default();
    forward_kept(&model, None, &ids, &o, keep).unwrap().0
}

#[test]
fn thumbnails_pool_each_head_and_are_exact_when_the_text_fits() {
    let (full, lean) = (thirteen_tokens(Keep::All), thirteen_tokens(Keep::Streams));
    let t = full.dims.t;
    let exact = lean.thumbnails(64).unwrap();
    assert_eq!((exact.span, exact.cells), (1, t));
    for l in 0..full.dims.n_layer {
        for h in 0..full.dims.n_head {
            assert_eq!(exact.head(l, h), full.head(l, h).weights);
        }
    }
    // 13 positions in cells of 4: rows 0–3, 4–7, 8–11 and 12 alone
    let pooled = lean.thumbnails(4).unwrap();
    assert_eq!(pooled, full.thumbnails(4).unwrap());
    assert_eq!((pooled.span, pooled.cells), (4, 4));
    let w = full.head(1, 0).weights;
    let cell = |r: usize, c: usize| {
        let rows: Vec<usize> = (r * 4..(r * 4 + 4).min(t)).collect();
        let sum: f64 = rows
            .iter()
            .flat_map(|&i| (c * 4..(c * 4 + 4).min(t)).map(move |j| w[i * t + j] as f64))
            .sum();
        (sum / rows.len() as f64) as f32
    };
    let thumb = pooled.head(1, 0);
    for r in 0..4 {
        for c in 0..4 {
            assert!((thumb[r * 4 + c] - cell(r, c)).abs() < 1e-6, "cell {r},{c}");
        }
        let sum: f32 = thumb[r * 4..r * 4 + 4].iter().sum();
        assert!((sum - 1.0).abs() < 1e-5, "row {r} sums to {sum}");
        // the causal mask: cells wholly after a row's last query hold nothing
        assert!(thumb[r * 4 + r + 1..r * 4 + 4].iter().all(|&x| x == 0.0));
    }
    assert!(lean.thumbnails(0).is_err());
}

/// A forward kept as `Keep::Streams`, growing `prev` when it can.
type Run<'a> = dyn Fn(Option<&Trace>, &[u32], &AttentionOptions) -> Trace + 'a;

/// Thumbnails kept up to date as a text is typed, deleted and edited (`Pooled`) equal, bit for
/// bit, those pooled afresh from the same trace at the same span: across the span doubling
/// as the text grows, for the rows an edit kept, and after a change of options.
#[test]
fn pooled_rows_follow_an_edited_text_and_equal_fresh_thumbnails() {
    let config = attnlab_model::Config {
        n_positions: 16,
        ..tiny_config(LnPlacement::Pre)
    };
    let model = random_model(&config, 5, 0.9);
    let llama = &llama_models()[0];
    let o = AttentionOptions::default();
    let gpt2 = |prev: Option<&Trace>, ids: &[u32], o: &AttentionOptions| {
        forward_kept(&model, prev, ids, o, Keep::Streams).unwrap().0
    };
    let ll = |prev: Option<&Trace>, ids: &[u32], o: &AttentionOptions| {
        llama.trace_kept(prev, ids, o, Keep::Streams).unwrap().0
    };
    let runs: [(&Run, u32); 2] = [(&gpt2, 19), (&ll, 90)];
    for (i, (run, vocab)) in runs.into_iter().enumerate() {
        let ids: Vec<u32> = (0..16).map(|k| (k * 7 + 3) % vocab + 1).collect();
        let mut pooled = attnlab_model::Pooled::new(2);
        let mut prev: Option<Trace> = None;
        // typing: 1, 3, 5, 9, 12, 16 tokens (span 1 → 2 → 4 → 8 → 8 → 8)
        for t in [1, 3, 5, 9, 12, 16] {
            let tr = run(prev.as_ref(), &ids[..t], &o);
            pooled.update(&tr).unwrap();
            let fresh = tr.thumbnails(2).unwrap();
            assert_eq!(pooled.thumbnails(), fresh, "model {i}, {t} tokens typed");
            // the text roles read from the pooled rows are those of the whole maps
            assert_eq!(
                roles::pooled_scores(&pooled.thumbnails()),
                roles::text_scores(&tr),
                "model {i}, {t} tokens typed"
            );
            let want =
                [1, 2, 4, 8, 8, 8][[1, 3, 5, 9, 12, 16].iter().position(|&x| x == t).unwrap()];
            assert_eq!(fresh.span, want, "model {i}, {t} tokens");
            assert!(fresh.cells <= 2);
            prev = Some(tr);
        }
        // deleting back to 4 tokens: the span stays 8 (one cell, every row's weight in it)
        let tr = run(prev.as_ref(), &ids[..4], &o);
        pooled.update(&tr).unwrap();
        let kept = pooled.thumbnails();
        assert_eq!((kept.span, kept.cells), (8, 1), "model {i}");
        assert!(
            kept.weights.iter().all(|&x| (x - 1.0).abs() < 1e-6),
            "model {i}"
        );
        // an edit at position 2 of 12 tokens: rows 2.. pooled again, equal to a fresh pooling
        let mut edited = ids[..12].to_vec();
        edited[2] = edited[2] % vocab + 1;
        let tr = run(Some(&tr), &edited, &o);
        pooled.update(&tr).unwrap();
        assert_eq!(
            pooled.thumbnails(),
            tr.thumbnails(2).unwrap(),
            "model {i}, edited"
        );
        assert_eq!(
            roles::pooled_scores(&pooled.thumbnails()),
            roles::text_scores(&tr),
            "model {i}, edited"
        );
        // other options: everything pooled again
        let hot = AttentionOptions {
            temperature: 3.0,
            ..o.clone()
        };
        let tr = run(None, &edited, &hot);
        pooled.update(&tr).unwrap();
        assert_eq!(
            pooled.thumbnails(),
            tr.thumbnails(2).unwrap(),
            "model {i}, τ 3"
        );
        let scores = roles::pooled_scores(&pooled.thumbnails());
        assert_eq!(scores, roles::text_scores(&tr), "model {i}, τ 3");
        assert!(scores.iter().all(|s| s.get(roles::Role::Local).is_some()));
    }
}

#[test]
fn a_map_on_demand_is_a_softmax_of_its_scaled_and_masked_scores() {
    // not only equal to the whole trace: the stages relate as the lesson says
    let model = random_model(&tiny_config(LnPlacement::Pre), 3, 1.0);
    let ids: Vec<u32> = (0..9).collect();
    let o = AttentionOptions::default();
    let lean = forward_kept(&model, None, &ids, &o, Keep::Streams)
        .unwrap()
        .0;
    let (t, dk) = (lean.dims.t, lean.dims.d_k);
    let hr = lean.head_rows(1, 1, 3..7).unwrap();
    let (q, k) = (&lean.layers[1].q[t * dk..], &lean.layers[1].k[t * dk..]);
    for i in 3..7 {
        let w = hr.row(&hr.weights, i);
        let sum: f64 = w.iter().map(|&x| x as f64).sum();
        assert!((sum - 1.0).abs() < 1e-6);
        for j in 0..t {
            let dot: f32 = (0..dk).map(|c| q[i * dk + c] * k[j * dk + c]).sum();
            let raw = hr.row(&hr.scores, i)[j];
            assert!(
                (raw - dot).abs() <= 1e-5 * dot.abs().max(1.0),
                "{raw} vs {dot}"
            );
            assert_eq!(hr.row(&hr.scaled, i)[j], raw * o.scale_factor(dk));
            let masked = hr.row(&hr.masked, i)[j];
            assert_eq!(masked == MASKED, j > i);
            assert_eq!(w[j] == 0.0, j > i);
        }
    }
}

#[test]
fn rows_or_heads_outside_the_trace_are_errors() {
    let model = random_model(&tiny_config(LnPlacement::Pre), 3, 1.0);
    let lean = forward_kept(&model, None, &[1, 2, 3], &Default::default(), Keep::Streams)
        .unwrap()
        .0;
    let (l, h) = (lean.dims.n_layer, lean.dims.n_head);
    for (layer, head, rows) in [(l, 0, 0..1), (0, h, 0..1), (0, 0, 2..4), (0, 0, 0..9)] {
        let err = lean.head_rows(layer, head, rows.clone()).unwrap_err();
        assert!(matches!(err, Error::Options(_)), "{layer}.{head} {rows:?}");
    }
    #[allow(clippy::reversed_empty_ranges)]
    let backwards = 2..1;
    assert!(lean.head_rows(0, 0, backwards).is_err());
}

/// The budget counts what is kept: at a length where every head's maps are far over it, a
/// trace without them fits; the refusal says how much the whole trace would take.
#[test]
fn the_budget_counts_what_a_trace_keeps() {
    // SmolLM2-135M's sizes at 2,048 tokens
    let dims = Dims {
        t: 2048,
        d_model: 576,
        n_head: 9,
        d_k: 64,
        d_ff: 1536,
        n_layer: 30,
        vocab: 49152,
        ln_placement: LnPlacement::Pre,
    };
    let all = Keep::All.bytes(&dims);
    let lean = Keep::Streams.bytes(&dims);
    // the maps: 30 · 9 · 2048² · 4 stages · 4 bytes
    assert!(all > 30 * 9 * 2048 * 2048 * 16, "{all}");
    assert!(lean < all / 10, "{lean} of {all}");
    let Err(Error::TooLarge(why)) = Keep::All.within_budget(&dims) else {
        panic!("a whole trace of 2,048 tokens was let through");
    };
    assert!(
        why.contains(&format!("{:.1} GB", all as f64 / 1e9)),
        "{why}"
    );
    assert!(why.contains("2048 tokens"), "{why}");
    Keep::Streams.within_budget(&dims).unwrap();
}

#[test]
fn a_watched_run_names_each_block_as_it_ends_and_an_owned_cache_grows_into_the_same_trace() {
    use attnlab_model::inspect::Traced;
    use attnlab_model::Earlier;
    let config = attnlab_model::Config {
        n_positions: 16,
        ..tiny_config(LnPlacement::Pre)
    };
    let gpt2 = random_model(&config, 5, 0.8);
    let mut models: Vec<Box<dyn Traced>> = vec![Box::new(gpt2)];
    models.extend(
        llama_models()
            .into_iter()
            .map(|m| Box::new(m) as Box<dyn Traced>),
    );
    let ids: Vec<u32> = (0..9).map(|i| (i * 5 + 1) % 20).collect();
    let o = AttentionOptions::default();
    let hot = AttentionOptions {
        temperature: 1.7,
        ..AttentionOptions::default()
    };
    // typed at the end (twice), deleted, edited in the middle, new options, the same again
    let edits: Vec<(Vec<u32>, &AttentionOptions)> = vec![
        ([&ids[..], &[3]].concat(), &o),
        ([&ids[..], &[3, 7, 2, 9]].concat(), &o),
        (ids[..6].to_vec(), &o),
        ([&ids[..3], &[11], &ids[4..]].concat(), &o),
        (ids.clone(), &hot),
        (ids.clone(), &hot),
    ];
    let mut deepest = 0;
    for (n, m) in models.iter().enumerate() {
        for keep in [Keep::All, Keep::Streams] {
            let mut seen = Vec::new();
            let (first, _) = m
                .trace_watched(None, &ids, &o, keep, &mut |l| seen.push(l))
                .unwrap();
            let layers = first.dims.n_layer;
            deepest = deepest.max(layers);
            assert_eq!(seen, (0..layers).collect::<Vec<_>>(), "model {n} {keep:?}");
            assert_eq!(first, m.trace_kept(None, &ids, &o, keep).unwrap().0);
            // the same edits from a borrowed cache (copied) and an owned one (grown in place):
            // the same traces, bit for bit, and the same rows reused
            let (mut borrowed, mut owned) = (first.clone(), first);
            for (k, (next, opts)) in edits.iter().enumerate() {
                let what = format!("model {n} {keep:?} edit {k}");
                let (b, b_inc) = m.trace_kept(Some(&borrowed), next, opts, keep).unwrap();
                let mut again = 0;
                let (g, g_inc) = m
                    .trace_watched(
                        Some(Earlier::Owned(Box::new(owned))),
                        next,
                        opts,
                        keep,
                        &mut |_| again += 1,
                    )
                    .unwrap();
                assert_eq!(again, layers, "{what}");
                assert_eq!(g_inc, b_inc, "{what}");
                assert!(
                    g == b,
                    "{what}: the grown trace differs from the copied one"
                );
                if k < 2 {
                    assert!(b_inc, "{what}: typing at the end reuses rows");
                }
                (borrowed, owned) = (b, g);
            }
        }
    }
    assert!(
        deepest >= 2,
        "the order is seen on a model of several blocks"
    );
}

/// `maps::pool_map` on one head's map gives that head's thumbnail, bit for bit, at every side
/// (the Python package pools attention computed elsewhere with it).
#[test]
fn a_map_pooled_alone_is_its_heads_thumbnail() {
    let full = thirteen_tokens(Keep::All);
    let t = full.dims.t;
    for side in [1, 2, 3, 4, 5, 13, 64] {
        let th = full.thumbnails(side).unwrap();
        for l in 0..full.dims.n_layer {
            for h in 0..full.dims.n_head {
                let (span, cells, got) =
                    attnlab_model::maps::pool_map(full.head(l, h).weights, t, side);
                assert_eq!((span, cells), (th.span, th.cells), "side {side}");
                assert_eq!(got, th.head(l, h), "side {side}, head {l}.{h}");
            }
        }
    }
}

/// The head-role probe's maps without a trace (`Traced::maps`: the Llama forward's visitor,
/// and for GPT-2 a run without maps) are the whole trace's weights, with any options, and
/// its scores are the same.
#[test]
fn a_models_maps_alone_are_its_whole_traces_weights() {
    use attnlab_model::inspect::Traced;
    use attnlab_model::roles::{probe_scores, AttentionMaps};
    let mut models: Vec<Box<dyn Traced>> = vec![
        Box::new(random_model(&tiny_config(LnPlacement::Pre), 5, 1.0)),
        Box::new(random_model(&tiny_config(LnPlacement::Post), 6, 1.0)),
    ];
    models.extend(
        llama_models()
            .into_iter()
            .map(|m| Box::new(m) as Box<dyn Traced>),
    );
    let ids: Vec<u32> = vec![3, 1, 4, 1, 5, 9, 2, 6];
    for (k, model) in models.iter().enumerate() {
        for o in options() {
            let maps = model.maps(&ids, &o).unwrap();
            let (whole, _) = model.trace_kept(None, &ids, &o, Keep::All).unwrap();
            assert_eq!(maps.size(), whole.size(), "model {k}");
            assert_eq!(maps.causal, o.causal_mask);
            let (n_layer, n_head, _) = whole.size();
            for l in 0..n_layer {
                for h in 0..n_head {
                    assert_eq!(
                        maps.weights(l, h),
                        whole.weights(l, h),
                        "model {k}, head {l}.{h}, {o:?}"
                    );
                }
            }
            assert_eq!(probe_scores(&maps, 4), probe_scores(&whole, 4));
        }
    }
}
