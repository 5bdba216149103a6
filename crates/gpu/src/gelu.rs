//! `gelu` (shaders/gelu.wgsl): GELU in place. CPU twin: `cpu::gelu`.
//! Dispatch grid: (n/64, 1, 1).

/// The WGSL's `@workgroup_size`: the engine's grids divide by it (checked by tests/shaders.rs).
pub const WG: [u32; 3] = [64, 1, 1];

pub const NAME: &str = "gelu";

/// The storage bindings after the uniform params, in order; `true` = written.
pub const WRITES: &[bool] = &[true];

crate::params! {
    /// Mirrors the WGSL `Params` struct (a multiple of 16 bytes).
    pub struct Params {
        pub start: u32,
        pub end: u32,
        pub mode: u32,
        pub _pad: u32,
    }
}
