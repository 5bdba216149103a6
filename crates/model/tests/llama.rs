//! The Llama forward on the malformed-GGUF corpus's valid file (a tiny model written with
//! gguf-py: 1 block, width 32, 4 query heads on 2 key/value heads, FFN 64): the attention
//! options act as in the GPT-2 forward, and the traced forward records the pass that gives the
//! logits (SmolLM2's logits are checked against llama.cpp in tests/smollm2.rs).

use attnlab_model::inspect::Inspect;
use attnlab_model::llama::{LlamaBundle, LlamaModel};
use attnlab_model::{AttentionOptions, LnPlacement};

fn tiny() -> LlamaBundle {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/malformed-gguf/valid.gguf"
    );
    LlamaBundle::from_gguf_bytes(&std::fs::read(path).unwrap()).unwrap()
}

/// The attention options act inside the Llama forward as they do in the GPT-2 one.
#[test]
fn the_attention_options_act_inside_the_llama_forward() {
    let m: LlamaModel = tiny().model;
    let ids = [3u32, 70, 259, 12, 258, 100];
    let t = ids.len();
    let maps = |opts: &AttentionOptions| m.maps(&ids, opts).unwrap().weights;
    let plain = maps(&AttentionOptions::default());
    for (r, row) in plain.chunks(t).enumerate() {
        let i = r % t;
        assert!(row[i + 1..].iter().all(|&w| w == 0.0), "row {i} sees ahead");
        assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-5);
    }
    let unmasked = maps(&AttentionOptions {
        causal_mask: false,
        ..Default::default()
    });
    assert!(unmasked.chunks(t).all(|row| row[t - 1] > 0.0));
    // no scaling with τ = √d_k is the scaled softmax
    let same = maps(&AttentionOptions {
        scale: false,
        temperature: (m.config.head_dim as f32).sqrt(),
        ..Default::default()
    });
    assert!(same.iter().zip(&plain).all(|(a, b)| (a - b).abs() < 1e-5));
    // a very hot softmax spreads every row evenly over the keys it sees
    let hot = maps(&AttentionOptions {
        temperature: 1e6,
        ..Default::default()
    });
    for (r, row) in hot.chunks(t).enumerate() {
        let i = r % t;
        assert!(row[..=i]
            .iter()
            .all(|&w| (w - 1.0 / (i + 1) as f32).abs() < 1e-4));
    }
    // with every head off, a position's logits depend on its own token only
    let off = AttentionOptions {
        ablate: (0..m.config.n_head).map(|h| (0, h)).collect(),
        ..Default::default()
    };
    let last = |ids: &[u32]| {
        let v = m.config.vocab_size;
        let l = m.logits_with(ids, &off, |_, _, _| {}).unwrap();
        l[(ids.len() - 1) * v..].to_vec()
    };
    assert_eq!(last(&[5, 9, 100]), last(&[200, 100]));
    let on = m.logits(&[5, 9, 100]).unwrap();
    assert_ne!(on[2 * m.config.vocab_size..], last(&[200, 100])[..]);
    let too_many = AttentionOptions {
        ablate: [(1, 0)].into(),
        ..Default::default()
    };
    assert!(m
        .logits_with(&ids, &too_many, |_, _, _| {})
        .unwrap_err()
        .to_string()
        .contains("cannot ablate head 1.0"));
}

/// The trace records the very pass that gives the logits, laid out as a pre-norm block.
#[test]
fn the_trace_records_the_pass_that_gives_the_logits() {
    let b = tiny();
    let m = &b.model;
    let ids = [3u32, 70, 259, 12, 258, 100, 7];
    let opts = AttentionOptions::default();
    let tr = m.trace(&ids, &opts).unwrap();
    let (t, v) = (ids.len(), m.config.vocab_size);
    assert_eq!(tr.dims, m.dims(t));
    assert_eq!(tr.dims.ln_placement, LnPlacement::Pre);
    assert_eq!(tr.logits, m.logits(&ids).unwrap());
    let maps = m.maps(&ids, &opts).unwrap();
    let l = &tr.layers[0];
    assert_eq!(l.weights, maps.weights);
    for row in tr.probs.chunks(v) {
        assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-5);
    }
    // pre-norm: ln_1 is what attention reads, ln_2 what the FFN reads, the output the stream
    assert_eq!(l.input, tr.embedding);
    assert_eq!(l.ln_1, l.attn_in);
    assert_eq!(l.ln_2, l.ffn_in);
    assert_eq!(l.output, l.resid_ffn);
    for i in 0..t * 32 {
        assert_eq!(l.resid_attn[i], l.input[i] + l.attn_out[i]);
        assert_eq!(l.resid_ffn[i], l.resid_attn[i] + l.ffn_out[i]);
    }
    // grouped-query attention: heads 0 and 1 read key/value head 0, heads 2 and 3 head 1
    let (dk, width) = (m.config.head_dim, t * m.config.head_dim);
    let head = |x: &[f32], h: usize| x[h * width..(h + 1) * width].to_vec();
    assert_eq!(dk, 8);
    assert_eq!(head(&l.k, 0), head(&l.k, 1));
    assert_eq!(head(&l.v, 2), head(&l.v, 3));
    assert_ne!(head(&l.k, 1), head(&l.k, 2));
    assert_ne!(head(&l.q, 0), head(&l.q, 1));
    // the masked scores hide the future with the CPU engine's fill
    assert_eq!(l.masked[1], f32::MIN);
    // the lens's last stage is the model's own prediction
    let lens = b.lens(&tr, t - 1, 3).unwrap();
    let last = lens.stages.last().unwrap();
    assert_eq!(last.target_rank, 0);
    assert!((last.target_prob - tr.top_k(t - 1, 1)[0].1).abs() < 1e-6);
    // a text longer than the context keeps its last tokens
    let long: Vec<u32> = (0..20).collect();
    let tr = m.trace(&long, &opts).unwrap();
    assert_eq!((tr.dropped, tr.dims.t), (4, 16));
    assert_eq!(tr.tokens, &long[4..]);
}

fn close(a: &[f32], b: &[f32], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: length");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        let ok = x == y || (x - y).abs() <= 1e-5 + 1e-5 * y.abs();
        assert!(ok, "{what}: index {i}: incremental {x}, full {y}");
    }
}

/// Typing at the end, replacing the last token, deleting, an edit in the middle: the
/// incremental trace (the earlier trace's keys and values as the cache) equals the full one,
/// every field; on Hugging Face's pair layout and GQA too.
#[test]
fn the_incremental_trace_equals_the_full_one_after_any_edit() {
    let hf = LlamaModel::load_hf_dir(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/hf/llama3-untied-bias"
    )))
    .unwrap();
    for m in [&tiny().model, &hf] {
        let x: Vec<u32> = (0..16).map(|i| (i * 37 + 5) % 90 + 1).collect();
        let o = AttentionOptions {
            temperature: 0.8,
            ablate: [(0, 1)].into(),
            ..Default::default()
        };
        let replaced_last: Vec<u32> = [&x[..9], &[3, 1][..]].concat();
        let middle: Vec<u32> = [&x[..4], &[7][..], &x[5..12]].concat();
        let cases: [(&[u32], &[u32]); 5] = [
            (&x[..5], &x[..6]),         // one more token
            (&x[..10], &replaced_last), // the last token changed, one more came
            (&x[..10], &x[..7]),        // deleted at the end
            (&x[..12], &middle),        // an edit at position 4
            (&x[..3], &x[..16]),        // a long append
        ];
        for (before, after) in cases {
            let prev = m.trace(before, &o).unwrap();
            let (inc, reused) = m.trace_incremental(Some(&prev), after, &o).unwrap();
            assert!(reused, "{before:?} → {after:?}");
            let full = m.trace(after, &o).unwrap();
            assert_eq!(inc.dims, full.dims);
            for ((name, a), (_, b)) in inc.fields().into_iter().zip(full.fields()) {
                close(a, b, &format!("{before:?} → {after:?} {name}"));
            }
        }
        // what cannot be reused is not: another option, the mask off, a changed first token
        let prev = m.trace(&x[..6], &o).unwrap();
        for (tokens, opts) in [
            (&x[..8], AttentionOptions::default()),
            (
                &x[..8],
                AttentionOptions {
                    causal_mask: false,
                    ..o.clone()
                },
            ),
            (&[60u32, 2, 3][..], o.clone()),
        ] {
            let (tr, reused) = m.trace_incremental(Some(&prev), tokens, &opts).unwrap();
            assert!(!reused);
            assert_eq!(tr, m.trace(tokens, &opts).unwrap());
        }
    }
}

/// Greedy generation through `Inspect` (each step's trace reusing the last one's rows) picks,
/// at every step, the argmax of a full trace of the text so far; it stops at the context.
#[test]
fn greedy_generation_follows_the_full_traces_argmax() {
    use attnlab_model::sample::Sampling;
    let b = tiny();
    let greedy = Sampling {
        greedy: true,
        ..Default::default()
    };
    let start = [3u32, 70, 259];
    let mut seen = Vec::new();
    let g = b.generate(&start, 5, &greedy, |id| seen.push(id)).unwrap();
    assert_eq!(g.ids, seen);
    assert!(!g.hit_context);
    let mut all = start.to_vec();
    for &id in &g.ids {
        let tr = b.model.trace(&all, &AttentionOptions::default()).unwrap();
        assert_eq!(id, tr.top_k(all.len() - 1, 1)[0].0);
        all.push(id);
    }
    // the tiny model's context is 16 tokens
    let g = b.generate(&start, 20, &greedy, |_| {}).unwrap();
    assert!(g.hit_context);
    assert_eq!(g.ids.len(), 16 - start.len());
}

/// The rotated-pair view turns q back to what the q projection gave before RoPE, at every
/// position, and keeps each pair's length.
#[test]
fn rotated_pairs_recover_q_before_rope() {
    let b = tiny();
    let m = &b.model;
    let c = &m.config;
    let ids = [3u32, 70, 259, 12, 258, 100, 7];
    let t = ids.len();
    let tr = m.trace(&ids, &AttentionOptions::default()).unwrap();
    let l = &tr.layers[0];
    let (hd, qw) = (c.head_dim, c.n_head * c.head_dim);
    let mut projected = vec![0f32; t * qw];
    m.layers[0].q.matmul_t(&l.attn_in, t, &mut projected);
    let inv_freq = c.inv_freq();
    let mut turned = 0;
    for h in 0..c.n_head {
        for p in 0..t {
            let q = &l.q[(h * t + p) * hd..(h * t + p + 1) * hd];
            let want = &projected[p * qw + h * hd..p * qw + (h + 1) * hd];
            for pair in attnlab_model::llama::rotated_pairs(q, p, &inv_freq, c.rope_pairs) {
                let (a, bb) = pair.dims;
                assert!(
                    (pair.before.0 - want[a]).abs() < 1e-5,
                    "L0H{h} pos {p} d{a}"
                );
                assert!(
                    (pair.before.1 - want[bb]).abs() < 1e-5,
                    "L0H{h} pos {p} d{bb}"
                );
                let len = |(x, y): (f32, f32)| (x * x + y * y).sqrt();
                assert!((len(pair.before) - len(pair.after)).abs() < 1e-5);
                assert_eq!(pair.angle, p as f32 * pair.freq);
                turned += usize::from(pair.before != pair.after);
            }
        }
    }
    assert!(turned > 0, "RoPE turned some pair");
}
