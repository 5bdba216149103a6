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
