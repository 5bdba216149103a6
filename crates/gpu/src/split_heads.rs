//! `split_heads` (shaders/split_heads.wgsl): the fused QKV projection → per-head Q, K, V.
//! CPU twin: the head split in `forward`. One invocation per value of a row's D.

use std::ops::Range;

use crate::context::Gpu;
use crate::error::GpuError;
use crate::step::{groups, rows_within, Bound, Heads, Step};

/// The workgroup size the WGSL is compiled with (kernels.rs writes it in the header).
pub const WG: [u32; 3] = [64, 1, 1];

pub const NAME: &str = "split_heads";

/// The storage bindings after the uniform params, in order; `true` = written.
pub const WRITES: &[bool] = &[false, true, true, true];

crate::params! {
    /// Mirrors the WGSL `Params` struct (a multiple of 16 bytes).
    pub struct Params {
        pub row0: u32,
        pub row1: u32,
        pub d: u32,
        pub dk: u32,
        pub positions: u32,
        pub _pad0: u32,
        pub _pad1: u32,
        pub _pad2: u32,
    }
}

/// qkv (P, 3D) → q, k, v (H, P, Dk).
pub struct Buffers<'a> {
    pub qkv: &'a wgpu::Buffer,
    pub q: &'a wgpu::Buffer,
    pub k: &'a wgpu::Buffer,
    pub v: &'a wgpu::Buffer,
}

pub fn bind(gpu: &Gpu, params: &wgpu::Buffer, b: Buffers) -> Bound {
    Bound::new(gpu, NAME, params, &[b.qkv, b.q, b.k, b.v])
}

/// Rows `rows` of qkv into the heads.
pub fn step(b: &Bound, rows: Range<usize>, heads: Heads) -> Result<Step<'_>, GpuError> {
    let d = heads.count * heads.dk;
    rows_within(NAME, &rows, heads.positions)?;
    b.need(0, "qkv", rows.end * 3 * d)?;
    for (i, what) in [(1, "q"), (2, "k"), (3, "v")] {
        b.need(i, what, heads.dk_len())?;
    }
    let p = Params {
        row0: rows.start as u32,
        row1: rows.end as u32,
        d: d as u32,
        dk: heads.dk as u32,
        positions: heads.positions as u32,
        ..Default::default()
    };
    Ok(Step::new(NAME, b, p, [groups(rows.len() * d, WG[0]), 1, 1]))
}
