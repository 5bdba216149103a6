//! `pack_scores` (shaders/pack_scores.wgsl): Compacts a layer's four strided score matrices
//! for the readback. Dispatch grid: (T·T/64, H, 4).

/// The WGSL's `@workgroup_size`: the engine's grids divide by it (checked by tests/shaders.rs).
pub const WG: [u32; 3] = [64, 1, 1];

pub const NAME: &str = "pack_scores";

/// The storage bindings after the uniform params, in order; `true` = written:
/// raw, scaled, masked, weights → dst.
pub const WRITES: &[bool] = &[false, false, false, false, true];

crate::params! {
    /// Mirrors the WGSL `Params` struct (a multiple of 16 bytes).
    pub struct Params {
        pub t: u32,
        pub positions: u32,
        pub heads: u32,
        pub dst_offset: u32,
    }
}
