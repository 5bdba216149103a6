//! `pack_scores` (shaders/pack_scores.wgsl): compacts a layer's four strided (H, P, P) matrices
//! for the readback, each (H, T, T), one after the other in the order they are bound (the
//! engine binds the raw, scaled and masked scores and the weights: `engine::buffers::PACKED`).
//! One invocation per entry, per head, per matrix.

use crate::context::Gpu;
use crate::error::GpuError;
use crate::step::{groups, rows_within, Bound, Heads, Step};

/// The workgroup size the WGSL is compiled with (kernels.rs writes it in the header).
pub const WG: [u32; 3] = [64, 1, 1];

pub const NAME: &str = "pack_scores";

/// The storage bindings after the uniform params, in order; `true` = written:
/// the four sources → dst.
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

/// How many (H, P, P) matrices the kernel packs (its `gid.z`).
pub const MATRICES: usize = 4;

/// Elements one layer's packed block takes at T tokens.
pub fn packed_len(heads: usize, t: usize) -> usize {
    MATRICES * heads * t * t
}

/// Four (H, P, P) matrices → dst, packed in the order given.
pub struct Buffers<'a> {
    pub sources: [&'a wgpu::Buffer; MATRICES],
    pub dst: &'a wgpu::Buffer,
}

pub fn bind(gpu: &Gpu, params: &wgpu::Buffer, b: Buffers) -> Bound {
    Bound::new(
        gpu,
        NAME,
        params,
        &[
            b.sources[0],
            b.sources[1],
            b.sources[2],
            b.sources[3],
            b.dst,
        ],
    )
}

/// The first `t` rows and columns of each matrix into dst from `dst_offset`.
pub fn step(b: &Bound, t: usize, heads: Heads, dst_offset: usize) -> Result<Step<'_>, GpuError> {
    rows_within(NAME, &(0..t), heads.positions)?;
    for i in 0..MATRICES {
        b.need(i, "source", heads.square_len())?;
    }
    b.need(4, "dst", dst_offset + packed_len(heads.count, t))?;
    let p = Params {
        t: t as u32,
        positions: heads.positions as u32,
        heads: heads.count as u32,
        dst_offset: dst_offset as u32,
    };
    let grid = [groups(t * t, WG[0]), heads.count as u32, MATRICES as u32];
    Ok(Step::new(NAME, b, p, grid))
}
