//! `attn_scores` (shaders/attn_scores.wgsl): QKᵀ, ÷√d_k and the causal mask in one pass,
//! writing the raw, scaled and masked scores the views show. CPU twin: `cpu::attn_scores`.
//! One invocation per (query, key) pair and head, the pairs of the region counted row by row.

use std::ops::Range;

use crate::context::Gpu;
use crate::error::GpuError;
use crate::step::{flat_groups, rows_within, Bound, Heads, Step};

/// The workgroup size the WGSL is compiled with (kernels.rs writes it in the header): 64
/// (query, key) pairs of one head per workgroup.
pub const WG: [u32; 3] = [64, 1, 1];

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

/// q, k (H, P, Dk) → raw, scaled, masked (H, P, P).
pub struct Buffers<'a> {
    pub q: &'a wgpu::Buffer,
    pub k: &'a wgpu::Buffer,
    pub raw: &'a wgpu::Buffer,
    pub scaled: &'a wgpu::Buffer,
    pub masked: &'a wgpu::Buffer,
}

pub fn bind(gpu: &Gpu, params: &wgpu::Buffer, b: Buffers) -> Bound {
    Bound::new(gpu, NAME, params, &[b.q, b.k, b.raw, b.scaled, b.masked])
}

/// Scores of queries `rows` against keys `keys`, every head.
pub fn step(
    b: &Bound,
    rows: Range<usize>,
    keys: Range<usize>,
    heads: Heads,
    scale: f32,
    causal: bool,
) -> Result<Step<'_>, GpuError> {
    rows_within(NAME, &rows, heads.positions)?;
    rows_within(NAME, &keys, heads.positions)?;
    for (i, what) in [(0, "q"), (1, "k")] {
        b.need(i, what, heads.dk_len())?;
    }
    for (i, what) in [(2, "raw"), (3, "scaled"), (4, "masked")] {
        b.need(i, what, heads.square_len())?;
    }
    let p = Params {
        row0: rows.start as u32,
        row1: rows.end as u32,
        col0: keys.start as u32,
        col1: keys.end as u32,
        dk: heads.dk as u32,
        positions: heads.positions as u32,
        scale,
        causal: causal as u32,
    };
    let [x, y] = flat_groups(rows.len() * keys.len(), WG[0]);
    let grid = [x, y, heads.count as u32];
    Ok(Step::new(NAME, b, p, grid))
}
