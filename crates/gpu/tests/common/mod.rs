//! Shared by the GPU tests: the device, with a loud failure when none is required but none
//! is found, and the tolerance check.

#![allow(dead_code)]

use attnlab_model::{Config, LnPlacement, Trace};

/// Whole-forward tolerance: |gpu − cpu| ≤ ATOL + RTOL·|cpu|.
pub const ATOL: f32 = 1e-4;
pub const RTOL: f32 = 1e-3;

/// A GPU, or `None` (with a message) on a developer machine without one. When
/// `ATTNLAB_REQUIRE_GPU` or `CI` is set — the README's test command sets it — a missing
/// adapter fails the test.
#[cfg(not(target_arch = "wasm32"))]
pub fn gpu() -> Option<attnlab_gpu::Gpu> {
    match pollster::block_on(attnlab_gpu::Gpu::new(attnlab_gpu::kernels::ALL)) {
        Ok(g) => Some(g),
        Err(e)
            if std::env::var_os("ATTNLAB_REQUIRE_GPU").is_some()
                || std::env::var_os("CI").is_some() =>
        {
            panic!("a GPU adapter is required (install mesa-vulkan-drivers for lavapipe): {e}")
        }
        Err(e) => {
            eprintln!("SKIPPED: no GPU adapter on this machine ({e}); set ATTNLAB_REQUIRE_GPU=1 to make this a failure");
            None
        }
    }
}

/// |gpu − cpu| ≤ atol + rtol·|cpu| everywhere; names the first bad index with both values.
#[track_caller]
pub fn assert_close(what: &str, gpu: &[f32], cpu: &[f32], atol: f32, rtol: f32) {
    assert_eq!(gpu.len(), cpu.len(), "{what}: length");
    for (i, (g, c)) in gpu.iter().zip(cpu).enumerate() {
        let ok = (g - c).abs() <= atol + rtol * c.abs() || (g == c);
        assert!(ok, "{what}: first mismatch at index {i}: gpu {g}, cpu {c}");
    }
}

/// Every field of two traces within the whole-forward tolerance.
#[track_caller]
pub fn assert_trace_close(what: &str, g: &Trace, c: &Trace) {
    assert_eq!(
        (g.dims, &g.tokens, g.dropped),
        (c.dims, &c.tokens, c.dropped),
        "{what}"
    );
    assert_eq!(g.ln_f.is_some(), c.ln_f.is_some(), "{what}: ln_f");
    for ((name, x), (_, y)) in g.fields().into_iter().zip(c.fields()) {
        assert_close(&format!("{what} {name}"), x, y, ATOL, RTOL);
    }
}

/// The small model the GPU tests run: d_model 48, 4 heads (d_k = 12, not a power of two),
/// 2 layers, context 40, vocabulary 97, FFN 100.
pub fn small_config(ln: LnPlacement) -> Config {
    Config {
        n_embd: 48,
        n_head: 4,
        n_layer: 2,
        n_positions: 40,
        vocab_size: 97,
        layer_norm_epsilon: 1e-5,
        n_inner: Some(100),
        activation_function: Default::default(),
        ln_placement: ln,
        scale_embedding: false,
    }
}

/// Runs `runs` (ids and options, in order) through `e` as a long text's page does — a slim
/// forward asking for `heads` and the rows its `Pooled` lacks (`Pooled::plan`), the maps
/// computed from the heads' vectors (`Trace::slim_from`), the pooled rows brought in
/// (`Pooled::update_pooled`) — and checks each against `cpu`'s whole trace of the same run:
/// the prediction, every asked head's four maps and vectors, and the heads grid's thumbnails
/// and text roles (as `Trace::thumbnails` pools the CPU's maps); after a run that reused the
/// engine's cached rows, the maps grown from the last result (`slim_from` given it) equal
/// those computed whole. Returns whether each run reused the engine's cached rows.
#[cfg(not(target_arch = "wasm32"))]
pub fn check_slim(
    e: &mut attnlab_gpu::AnyEngine,
    cpu: impl Fn(&[u32], &attnlab_model::AttentionOptions) -> Trace,
    runs: &[(Vec<u32>, attnlab_model::AttentionOptions)],
    heads: &[(usize, usize)],
    side: usize,
) -> Vec<bool> {
    use attnlab_gpu::attn_pool::Pooling;
    use attnlab_gpu::engine::SlimAsk;
    let mut pooled = attnlab_model::Pooled::new(side);
    let mut incremental = Vec::new();
    let mut prev: Option<Trace> = None;
    for (n, (ids, opts)) in runs.iter().enumerate() {
        let want = cpu(ids, opts);
        let d = want.dims;
        let what = format!("run {n} ({} tokens, {opts:?})", ids.len());
        let shape = (d.n_layer, d.n_head);
        let (rows, span) = pooled.plan(ids, opts, shape).unwrap();
        let ask = SlimAsk {
            heads: heads.to_vec(),
            pool: Some((rows, Pooling { span, side })),
        };
        let read = pollster::block_on(e.forward_slim(ids, opts, &ask)).unwrap();
        incremental.push(e.last_was_incremental());
        let v = d.vocab;
        let last = |x: &[f32]| x[x.len() - v..].to_vec();
        assert_close(
            &format!("{what} logits"),
            &read.logits,
            &last(&want.logits),
            ATOL,
            RTOL,
        );
        assert_close(
            &format!("{what} probs"),
            &read.probs,
            &last(&want.probs),
            ATOL,
            RTOL,
        );
        pooled
            .update_pooled(ids, opts, shape, &read.pooled)
            .unwrap();
        let got = pooled.thumbnails();
        let thumbs = want.thumbnails(side).unwrap();
        assert_eq!((got.span, got.cells), (thumbs.span, thumbs.cells), "{what}");
        assert_close(
            &format!("{what} thumbnails"),
            &got.weights,
            &thumbs.weights,
            1e-5,
            1e-4,
        );
        let roles = |t: &attnlab_model::Thumbnails| -> Vec<f32> {
            t.roles.iter().map(|r| r.unwrap_or(f32::NAN)).collect()
        };
        assert_close(
            &format!("{what} roles"),
            &roles(&got),
            &roles(&thumbs),
            1e-4,
            1e-3,
        );
        let meta = (&ids[..], 0, opts);
        let preds = (read.logits, read.probs);
        let vectors = read.heads.clone();
        let slim = Trace::slim_from(d, meta, preds.clone(), read.heads, None).unwrap();
        // the page keeps the last slim result's shared rows when the forward went on from
        // that run: the engine's reused rows read back as they were, the maps the same
        if let Some(earlier) = prev.as_ref().filter(|_| e.last_was_incremental()) {
            let grown = Trace::slim_from(d, meta, preds, vectors, Some(earlier)).unwrap();
            assert!(
                grown == slim,
                "{what}: grown from the last result ≠ computed whole"
            );
        }
        prev = Some(slim.clone());
        for &(l, h) in heads {
            let (g, c) = (slim.head(l, h), want.head(l, h));
            let named = [
                ("q", g.q, c.q),
                ("k", g.k, c.k),
                ("v", g.v, c.v),
                ("head_out", g.head_out, c.head_out),
                ("scores", g.scores, c.scores),
                ("scaled", g.scaled, c.scaled),
                ("weights", g.weights, c.weights),
            ];
            for (name, x, y) in named {
                assert_close(&format!("{what} {l}.{h} {name}"), x, y, ATOL, RTOL);
            }
        }
    }
    incremental
}
