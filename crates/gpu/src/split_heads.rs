//! `split_heads` (shaders/split_heads.wgsl): Fused QKV projection → per-head Q, K, V. CPU twin: the head split in `forward`.
//! Dispatch grid: (rows·D/64, 1, 1).

/// The WGSL's `@workgroup_size`: the engine's grids divide by it (checked by tests/shaders.rs).
pub const WG: [u32; 3] = [64, 1, 1];

pub const NAME: &str = "split_heads";

/// The storage bindings after the uniform params, in order; `true` = written.
pub const WRITES: &[bool] = &[false, true, true, true];

crate::params! {
    /// Mirrors the WGSL `Params` struct (a multiple of 16 bytes).
    pub struct Params {
        pub row0: u32,
        pub row1: u32,
        pub d: u32,
        pub dk: u32,
        pub positions: u32,
        pub _pad0: u32,
        pub _pad1: u32,
        pub _pad2: u32,
    }
}
