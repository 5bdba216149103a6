//! `linear` (shaders/linear.wgsl): `out = x·W + b`, tiled. CPU twin: `cpu::linear` (and `cpu::matmul_into` for the lm head).
//! Dispatch grid: (N/16, rows/16, 1).

/// The WGSL's `@workgroup_size`: the engine's grids divide by it (checked by tests/shaders.rs).
pub const WG: [u32; 3] = [16, 16, 1];

pub const NAME: &str = "linear";

/// The storage bindings after the uniform params, in order; `true` = written.
pub const WRITES: &[bool] = &[false, false, false, true];

crate::params! {
    /// Mirrors the WGSL `Params` struct (a multiple of 16 bytes).
    pub struct Params {
        pub row0: u32,
        pub row1: u32,
        pub k: u32,
        pub n: u32,
        pub w_transposed: u32,
        pub has_bias: u32,
        pub _pad0: u32,
        pub _pad1: u32,
    }
}
