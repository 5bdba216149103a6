//! Shared by the GPU tests: the device, with a loud failure when none is required but none
//! is found, and the tolerance check.

#![allow(dead_code)]

use attnlab_model::Trace;

/// Whole-forward tolerance: |gpu − cpu| ≤ ATOL + RTOL·|cpu|.
pub const ATOL: f32 = 1e-4;
pub const RTOL: f32 = 1e-3;

/// A GPU, or `None` (with a message) on a developer machine without one. When
/// `ATTNLAB_REQUIRE_GPU` or `CI` is set — the README's test command sets it — a missing
/// adapter fails the test.
#[cfg(not(target_arch = "wasm32"))]
pub fn gpu() -> Option<attnlab_gpu::Gpu> {
    match pollster::block_on(attnlab_gpu::Gpu::new()) {
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
    assert_close(
        &format!("{what} embedding"),
        &g.embedding,
        &c.embedding,
        ATOL,
        RTOL,
    );
    for (l, (a, b)) in g.layers.iter().zip(&c.layers).enumerate() {
        for (name, x, y) in [
            ("input", &a.input, &b.input),
            ("attn_in", &a.attn_in, &b.attn_in),
            ("q", &a.q, &b.q),
            ("k", &a.k, &b.k),
            ("v", &a.v, &b.v),
            ("scores", &a.scores, &b.scores),
            ("scaled", &a.scaled, &b.scaled),
            ("masked", &a.masked, &b.masked),
            ("weights", &a.weights, &b.weights),
            ("head_out", &a.head_out, &b.head_out),
            ("concat", &a.concat, &b.concat),
            ("attn_out", &a.attn_out, &b.attn_out),
            ("resid_attn", &a.resid_attn, &b.resid_attn),
            ("ln_1", &a.ln_1, &b.ln_1),
            ("ffn_in", &a.ffn_in, &b.ffn_in),
            ("ffn_hidden", &a.ffn_hidden, &b.ffn_hidden),
            ("ffn_out", &a.ffn_out, &b.ffn_out),
            ("resid_ffn", &a.resid_ffn, &b.resid_ffn),
            ("ln_2", &a.ln_2, &b.ln_2),
            ("output", &a.output, &b.output),
        ] {
            assert_close(&format!("{what} layer {l} {name}"), x, y, ATOL, RTOL);
        }
    }
    assert_eq!(g.ln_f.is_some(), c.ln_f.is_some());
    if let (Some(x), Some(y)) = (&g.ln_f, &c.ln_f) {
        assert_close(&format!("{what} ln_f"), x, y, ATOL, RTOL);
    }
    assert_close(&format!("{what} logits"), &g.logits, &c.logits, ATOL, RTOL);
    assert_close(&format!("{what} probs"), &g.probs, &c.probs, ATOL, RTOL);
}
