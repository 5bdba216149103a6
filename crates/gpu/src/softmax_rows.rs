//! `softmax_rows` (shaders/softmax_rows.wgsl): Numerically stable softmax with temperature, one workgroup per row. CPU twin: `cpu::softmax_rows`.
//! Dispatch grid: (rows, H, 1).

/// The WGSL's `@workgroup_size`: the engine's grids divide by it (checked by tests/shaders.rs).
pub const WG: [u32; 3] = [256, 1, 1];

pub const NAME: &str = "softmax_rows";

/// The storage bindings after the uniform params, in order; `true` = written.
pub const WRITES: &[bool] = &[false, true];

crate::params! {
    /// Mirrors the WGSL `Params` struct (a multiple of 16 bytes).
    pub struct Params {
        pub row_base: u32,
        pub row0: u32,
        pub cols: u32,
        pub row_stride: u32,
        pub head_stride: u32,
        pub tau: f32,
        pub _pad0: u32,
        pub _pad1: u32,
    }
}
