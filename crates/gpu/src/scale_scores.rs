//! `scale_scores` (shaders/scale_scores.wgsl): Scaling by 1/√d_k (or 1). CPU twin: `cpu::scale_scores`.
//! Dispatch grid: (cols/16, rows/16, H).

/// The WGSL's `@workgroup_size`: the engine's grids divide by it (checked by tests/shaders.rs).
pub const WG: [u32; 3] = [16, 16, 1];

pub const NAME: &str = "scale_scores";

/// The storage bindings after the uniform params, in order; `true` = written.
pub const WRITES: &[bool] = &[false, true];

crate::params! {
    /// Mirrors the WGSL `Params` struct (a multiple of 16 bytes).
    pub struct Params {
        pub row0: u32,
        pub row1: u32,
        pub col0: u32,
        pub col1: u32,
        pub positions: u32,
        pub scale: f32,
        pub _pad0: u32,
        pub _pad1: u32,
    }
}
