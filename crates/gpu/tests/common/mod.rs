//! Shared by the GPU tests: the device, with a loud failure when none is required but none
//! is found, and the tolerance check.

use attnlab_gpu::Gpu;

/// A GPU, or `None` (with a message) on a developer machine without one. When
/// `ATTNLAB_REQUIRE_GPU` or `CI` is set — the README's test command sets it — a missing
/// adapter fails the test.
pub fn gpu() -> Option<Gpu> {
    match pollster::block_on(Gpu::new()) {
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
