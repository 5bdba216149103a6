//! `residual_add` (shaders/residual_add.wgsl): Residual connection. CPU twin: `cpu::residual_add`.
//! Dispatch grid: (n/64, 1, 1).

/// The WGSL's `@workgroup_size`: the engine's grids divide by it (checked by tests/shaders.rs).
pub const WG: [u32; 3] = [64, 1, 1];

pub const NAME: &str = "residual_add";

/// The storage bindings after the uniform params, in order; `true` = written.
pub const WRITES: &[bool] = &[false, false, true];

crate::params! {
    /// Mirrors the WGSL `Params` struct (a multiple of 16 bytes).
    pub struct Params {
        pub start: u32,
        pub end: u32,
        pub _pad0: u32,
        pub _pad1: u32,
    }
}
