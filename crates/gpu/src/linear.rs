//! `linear` (shaders/linear.wgsl): `out = act(x·W + b)`, tiled. CPU twin: `cpu::linear` (and
//! `cpu::matmul_into` for the lm head), then `cpu::gelu` where `act` asks for it.
//! Dispatch grid: (N/16, rows/16, 1).

/// The WGSL's `@workgroup_size`: the engine's grids divide by it (checked by tests/shaders.rs).
pub const WG: [u32; 3] = [16, 16, 1];

pub const NAME: &str = "linear";

/// The storage bindings after the uniform params, in order; `true` = written.
pub const WRITES: &[bool] = &[false, false, false, true];

crate::params! {
    /// Mirrors the WGSL `Params` struct (a multiple of 16 bytes). `act`: the activation
    /// applied to the result, [`ACT_NONE`] or [`act`] of the model's.
    pub struct Params {
        pub row0: u32,
        pub row1: u32,
        pub k: u32,
        pub n: u32,
        pub w_transposed: u32,
        pub has_bias: u32,
        pub act: u32,
        pub _pad: u32,
    }
}

/// `act` for no activation.
pub const ACT_NONE: u32 = 0;

/// `act` for the FFN's activation (activation.wgsl's modes).
pub fn act(a: attnlab_model::Activation) -> u32 {
    match a {
        attnlab_model::Activation::GeluTanh => 1,
        attnlab_model::Activation::GeluErf => 2,
    }
}
