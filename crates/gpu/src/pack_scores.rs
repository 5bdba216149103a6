//! `pack_scores` (shaders/pack_scores.wgsl): compacts a layer's four strided score matrices
//! for the readback: raw, scaled, masked, weights ([`Score`]'s order), each (H, T, T), one
//! after the other. One invocation per entry, per head, per matrix.

use crate::context::Gpu;
use crate::error::GpuError;
use crate::step::{groups, rows_within, Bound, Heads, Step};

/// The workgroup size the WGSL is compiled with (kernels.rs writes it in the header).
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

/// The four score matrices, in the order the kernel packs them (its `gid.z`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Score {
    Raw,
    Scaled,
    Masked,
    Weights,
}

impl Score {
    pub const ALL: [Score; 4] = [Score::Raw, Score::Scaled, Score::Masked, Score::Weights];

    /// Where this matrix starts in a layer's packed block of `heads` × T × T entries each.
    pub fn offset(self, heads: usize, t: usize) -> usize {
        self as usize * heads * t * t
    }
}

/// Elements one layer's packed block takes at T tokens.
pub fn packed_len(heads: usize, t: usize) -> usize {
    Score::ALL.len() * heads * t * t
}

/// raw, scaled, masked, weights (H, P, P) → dst.
pub struct Buffers<'a> {
    pub raw: &'a wgpu::Buffer,
    pub scaled: &'a wgpu::Buffer,
    pub masked: &'a wgpu::Buffer,
    pub weights: &'a wgpu::Buffer,
    pub dst: &'a wgpu::Buffer,
}

pub fn bind(gpu: &Gpu, params: &wgpu::Buffer, b: Buffers) -> Bound {
    Bound::new(
        gpu,
        NAME,
        params,
        &[b.raw, b.scaled, b.masked, b.weights, b.dst],
    )
}

/// The first `t` rows and columns of each matrix into dst from `dst_offset`.
pub fn step(b: &Bound, t: usize, heads: Heads, dst_offset: usize) -> Result<Step<'_>, GpuError> {
    rows_within(NAME, &(0..t), heads.positions)?;
    for (i, what) in [(0, "raw"), (1, "scaled"), (2, "masked"), (3, "weights")] {
        b.need(i, what, heads.square_len())?;
    }
    b.need(4, "dst", dst_offset + packed_len(heads.count, t))?;
    let p = Params {
        t: t as u32,
        positions: heads.positions as u32,
        heads: heads.count as u32,
        dst_offset: dst_offset as u32,
    };
    let grid = [
        groups(t * t, WG[0]),
        heads.count as u32,
        Score::ALL.len() as u32,
    ];
    Ok(Step::new(NAME, b, p, grid))
}
