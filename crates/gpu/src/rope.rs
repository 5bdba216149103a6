//! `rope` (shaders/rope.wgsl): rotary position embeddings, in place, from the table of cosines
//! and sines `llama::rope_table` computes once on the CPU. One invocation per (row, head,
//! pair). CPU twin: `llama::rope`.

use std::ops::Range;

use attnlab_model::llama::RopePairs;

use crate::context::Gpu;
use crate::error::GpuError;
use crate::step::{flat_groups, Bound, Step};

/// The workgroup size the WGSL is compiled with (kernels.rs writes it in the header).
pub const WG: [u32; 3] = [64, 1, 1];

pub const NAME: &str = "rope";

/// The storage bindings after the uniform params, in order; `true` = written.
pub const WRITES: &[bool] = &[false, true];

crate::params! {
    /// Mirrors the WGSL `Params` struct (a multiple of 16 bytes).
    pub struct Params {
        pub row0: u32,
        pub row1: u32,
        pub heads: u32,
        pub dk: u32,
        pub pos0: u32,
        pub halves: u32,
        pub _pad0: u32,
        pub _pad1: u32,
    }
}

/// table (positions, Dk/2, 2), x (P, H × Dk) rotated in place.
pub struct Buffers<'a> {
    pub table: &'a wgpu::Buffer,
    pub x: &'a wgpu::Buffer,
}

pub fn bind(gpu: &Gpu, params: &wgpu::Buffer, b: Buffers) -> Bound {
    Bound::new(gpu, NAME, params, &[b.table, b.x])
}

/// Rotates rows `rows` of x (`heads` heads of `dk`), row r at position `pos0 + r`.
pub fn step(
    b: &Bound,
    rows: Range<usize>,
    (heads, dk): (usize, usize),
    pos0: usize,
    pairs: RopePairs,
) -> Result<Step<'_>, GpuError> {
    if !dk.is_multiple_of(2) || rows.start > rows.end {
        return Err(GpuError::Shape(format!(
            "{NAME}: rows {rows:?} of heads of {dk} dimensions (an even size is needed)"
        )));
    }
    b.need(0, "table", (pos0 + rows.end) * dk)?;
    b.need(1, "x", rows.end * heads * dk)?;
    let p = Params {
        row0: rows.start as u32,
        row1: rows.end as u32,
        heads: heads as u32,
        dk: dk as u32,
        pos0: pos0 as u32,
        halves: u32::from(pairs == RopePairs::Halves),
        ..Default::default()
    };
    let [x, y] = flat_groups(rows.len() * heads * dk / 2, WG[0]);
    Ok(Step::new(NAME, b, p, [x, y, 1]))
}
