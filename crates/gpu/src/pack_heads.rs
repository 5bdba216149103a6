//! `pack_heads` (shaders/pack_heads.wgsl): Compacts strided per-head matrices for the readback.
//! Dispatch grid: (T·cols/64, H, 1).

/// The WGSL's `@workgroup_size`: the engine's grids divide by it (checked by tests/shaders.rs).
pub const WG: [u32; 3] = [64, 1, 1];

pub const NAME: &str = "pack_heads";

/// The storage bindings after the uniform params, in order; `true` = written.
pub const WRITES: &[bool] = &[false, true];

crate::params! {
    /// Mirrors the WGSL `Params` struct (a multiple of 16 bytes).
    pub struct Params {
        pub t: u32,
        pub cols: u32,
        pub row_stride: u32,
        pub head_stride: u32,
        pub dst_offset: u32,
        pub _pad0: u32,
        pub _pad1: u32,
        pub _pad2: u32,
    }
}
