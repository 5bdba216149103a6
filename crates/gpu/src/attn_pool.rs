//! `attn_pool` (shaders/attn_pool.wgsl): what the heads grid and the head-role table read of
//! every head's attention weights, for a forward that keeps no maps: each query row's weights
//! summed `span` keys at a time into `side` cells, then its five text-role terms
//! (`roles::row_terms`) — `side + 5` values a row, never the (T, T) map. The weights are the
//! forward's own (softmax(mask(QKᵀ · scale) / τ)), computed again from q and k in two walks
//! over the keys (the row's maximum and sum, then the weights). CPU twin: `Pooled` pooling
//! `Trace::head_rows`, equal up to rounding. One workgroup per `WG[0]` queries and head.

use std::ops::Range;

use crate::attn_fused::{MAX_DK, TILE};
use crate::context::Gpu;
use crate::error::GpuError;
use crate::step::{groups, rows_within, Bound, Heads, Step};

/// The workgroup size the WGSL is compiled with: 64 queries of one head per workgroup.
pub const WG: [u32; 3] = [64, 1, 1];

/// Constants the WGSL reads (kernels.rs writes them in the header).
pub const CONSTS: &[(&str, u32)] = &[("TILE", TILE as u32)];

/// The most cells a pooled row has (the engine's buffer is sized for them): the heads grid's
/// thumbnails are at most 64 × 64.
pub const MAX_SIDE: usize = 64;

/// The role terms after a row's cells (`roles::TEXT_ROLES`' order).
pub const TERMS: usize = 5;

pub const NAME: &str = "attn_pool";

/// The storage bindings after the uniform params, in order; `true` = written: q, k → out.
pub const WRITES: &[bool] = &[false, false, true];

crate::params! {
    /// Mirrors the WGSL `Params` struct (a multiple of 16 bytes). `span`: keys per cell (a
    /// power of two); `side`: cells per row; `scale`: 1/√d_k or 1; `causal`: 1 hides keys
    /// after the query.
    pub struct Params {
        pub row0: u32,
        pub row1: u32,
        pub keys: u32,
        pub dk: u32,
        pub positions: u32,
        pub span: u32,
        pub side: u32,
        pub scale: f32,
        pub tau: f32,
        pub causal: u32,
        pub _pad0: u32,
        pub _pad1: u32,
    }
}

/// q, k (H, P, Dk) → out (H, rows, side + TERMS).
pub struct Buffers<'a> {
    pub q: &'a wgpu::Buffer,
    pub k: &'a wgpu::Buffer,
    pub out: &'a wgpu::Buffer,
}

pub fn bind(gpu: &Gpu, params: &wgpu::Buffer, b: Buffers) -> Bound {
    Bound::new(gpu, NAME, params, &[b.q, b.k, b.out])
}

/// How the rows are pooled: `span` keys to a cell, `side` cells to a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pooling {
    pub span: usize,
    pub side: usize,
}

/// Floats one pooled row takes in `out`.
pub fn row_len(side: usize) -> usize {
    side + TERMS
}

/// Queries `rows` of every head over the first `keys` keys, pooled as `pool` says, with
/// the forward's scale, τ and mask.
pub fn step(
    b: &Bound,
    rows: Range<usize>,
    keys: usize,
    heads: Heads,
    pool: Pooling,
    (scale, tau, causal): (f32, f32, bool),
) -> Result<Step<'_>, GpuError> {
    rows_within(NAME, &rows, heads.positions)?;
    rows_within(NAME, &(0..keys), heads.positions)?;
    if heads.dk > MAX_DK || !heads.dk.is_multiple_of(4) {
        return Err(GpuError::TooLarge(format!(
            "heads of {} values: the pooling takes at most {MAX_DK}, a multiple of 4",
            heads.dk
        )));
    }
    if pool.side == 0 || pool.side > MAX_SIDE || !pool.span.is_power_of_two() {
        return Err(GpuError::Shape(format!(
            "{NAME}: {} cells (1 to {MAX_SIDE}) of {} keys (a power of two) each",
            pool.side, pool.span
        )));
    }
    b.need(0, "q", heads.dk_len())?;
    b.need(1, "k", heads.dk_len())?;
    b.need(2, "out", heads.count * rows.len() * row_len(pool.side))?;
    let p = Params {
        row0: rows.start as u32,
        row1: rows.end as u32,
        keys: keys as u32,
        dk: heads.dk as u32,
        positions: heads.positions as u32,
        span: pool.span as u32,
        side: pool.side as u32,
        scale,
        tau,
        causal: causal as u32,
        _pad0: 0,
        _pad1: 0,
    };
    let grid = [groups(rows.len(), WG[0]), heads.count as u32, 1];
    Ok(Step::new(NAME, b, p, grid))
}
