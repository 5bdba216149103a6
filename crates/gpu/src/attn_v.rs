//! `attn_v` (shaders/attn_v.wgsl): the weighted sum of V per head, written per head and
//! concatenated; a switched-off head writes 0. CPU twin: `cpu::attn_v`, 0 for an ablated head,
//! then the concatenation. One invocation per (query, value dimension) and head.

use std::collections::BTreeSet;
use std::ops::Range;

use crate::context::Gpu;
use crate::error::GpuError;
use crate::step::{flat_groups, rows_within, Bound, Heads, Step};

/// The workgroup size the WGSL is compiled with (kernels.rs writes it in the header): 64
/// (query, dimension) pairs of one head per workgroup.
pub const WG: [u32; 3] = [64, 1, 1];

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
pub fn ablation_mask(ablate: &BTreeSet<(usize, usize)>, layer: usize) -> (u32, u32) {
    let m = ablate
        .iter()
        .filter(|&&(l, h)| l == layer && h < MAX_HEADS)
        .fold(0u64, |m, &(_, h)| m | 1 << h);
    (m as u32, (m >> 32) as u32)
}

/// weights (H, P, P), v (H, P, Dk) → head_out (H, P, Dk), concat (P, H·Dk).
pub struct Buffers<'a> {
    pub weights: &'a wgpu::Buffer,
    pub v: &'a wgpu::Buffer,
    pub head_out: &'a wgpu::Buffer,
    pub concat: &'a wgpu::Buffer,
}

pub fn bind(gpu: &Gpu, params: &wgpu::Buffer, b: Buffers) -> Bound {
    Bound::new(gpu, NAME, params, &[b.weights, b.v, b.head_out, b.concat])
}

/// weights · V for queries `rows` over the first `keys` keys; `(lo, hi)` from
/// [`ablation_mask`].
pub fn step(
    b: &Bound,
    rows: Range<usize>,
    keys: usize,
    heads: Heads,
    (ablate_lo, ablate_hi): (u32, u32),
) -> Result<Step<'_>, GpuError> {
    rows_within(NAME, &rows, heads.positions)?;
    rows_within(NAME, &(0..keys), heads.positions)?;
    if heads.count > MAX_HEADS {
        return Err(GpuError::TooLarge(format!(
            "{} heads per layer: heads are switched off by a mask of {MAX_HEADS}",
            heads.count
        )));
    }
    let d = heads.count * heads.dk;
    b.need(0, "weights", heads.square_len())?;
    b.need(1, "v", heads.dk_len())?;
    b.need(2, "head_out", heads.dk_len())?;
    b.need(3, "concat", rows.end * d)?;
    let p = Params {
        row0: rows.start as u32,
        row1: rows.end as u32,
        keys: keys as u32,
        dk: heads.dk as u32,
        positions: heads.positions as u32,
        d: d as u32,
        ablate_lo,
        ablate_hi,
    };
    let [x, y] = flat_groups(rows.len() * heads.dk, WG[0]);
    let grid = [x, y, heads.count as u32];
    Ok(Step::new(NAME, b, p, grid))
}
