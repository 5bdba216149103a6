//! `attn_v` (shaders/attn_v.wgsl): Weighted sum of V per head, written per head and
//! concatenated; a switched-off head writes 0. CPU twin: `cpu::attn_v`, 0 for an ablated head,
//! then the concatenation. Dispatch grid: (Dk/16, rows/16, H).

/// The WGSL's `@workgroup_size`: the engine's grids divide by it (checked by tests/shaders.rs).
pub const WG: [u32; 3] = [16, 16, 1];

pub const NAME: &str = "attn_v";

/// The storage bindings after the uniform params, in order; `true` = written.
pub const WRITES: &[bool] = &[false, false, true, true];

/// Heads per layer the ablation mask covers.
pub const MAX_HEADS: usize = 64;

crate::params! {
    /// Mirrors the WGSL `Params` struct (a multiple of 16 bytes). `d` = H·Dk (the concat's
    /// width); `ablate_lo`, `ablate_hi`: the switched-off heads, bit h of `ablation_mask`.
    pub struct Params {
        pub row0: u32,
        pub row1: u32,
        pub keys: u32,
        pub dk: u32,
        pub positions: u32,
        pub d: u32,
        pub ablate_lo: u32,
        pub ablate_hi: u32,
    }
}

/// The heads of `layer` that `ablate` switches off, as the (low, high) words of a 64-bit mask.
pub fn ablation_mask(
    ablate: &std::collections::BTreeSet<(usize, usize)>,
    layer: usize,
) -> (u32, u32) {
    let m = ablate
        .iter()
        .filter(|&&(l, h)| l == layer && h < MAX_HEADS)
        .fold(0u64, |m, &(_, h)| m | 1 << h);
    (m as u32, (m >> 32) as u32)
}
