//! `attn_scores` (shaders/attn_scores.wgsl): QKᵀ, ÷√d_k and the causal mask in one pass,
//! writing the raw, scaled and masked scores the views show. CPU twin: `cpu::attn_scores`.
//! Dispatch grid: (cols/16, rows/16, H).

/// The WGSL's `@workgroup_size`: the engine's grids divide by it (checked by tests/shaders.rs).
pub const WG: [u32; 3] = [16, 16, 1];

pub const NAME: &str = "attn_scores";

/// The storage bindings after the uniform params, in order; `true` = written:
/// q, k → raw, scaled, masked.
pub const WRITES: &[bool] = &[false, false, true, true, true];

crate::params! {
    /// Mirrors the WGSL `Params` struct (a multiple of 16 bytes). `scale`: 1/√d_k, or 1 with
    /// scaling off (`AttentionOptions::scale_factor`); `causal`: 1 masks keys after the query.
    pub struct Params {
        pub row0: u32,
        pub row1: u32,
        pub col0: u32,
        pub col1: u32,
        pub dk: u32,
        pub positions: u32,
        pub scale: f32,
        pub causal: u32,
    }
}
