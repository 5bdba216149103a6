//! `qk_scores` (shaders/qk_scores.wgsl): Raw scores QKᵀ per head. CPU twin: `cpu::qk_scores`.
//! Dispatch grid: (cols/16, rows/16, H).

/// The WGSL's `@workgroup_size`: the engine's grids divide by it (checked by tests/shaders.rs).
pub const WG: [u32; 3] = [16, 16, 1];

pub const NAME: &str = "qk_scores";

/// The storage bindings after the uniform params, in order; `true` = written.
pub const WRITES: &[bool] = &[false, false, true];

crate::params! {
    /// Mirrors the WGSL `Params` struct (a multiple of 16 bytes).
    pub struct Params {
        pub row0: u32,
        pub row1: u32,
        pub col0: u32,
        pub col1: u32,
        pub dk: u32,
        pub positions: u32,
        pub _pad0: u32,
        pub _pad1: u32,
    }
}
