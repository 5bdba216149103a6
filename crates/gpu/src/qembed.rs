//! `qembed` (shaders/qembed.wgsl): the token embedding read from a matrix kept as its file
//! stores it (any type `qmatmul` reads), so that a tied output head and the embedding share
//! one copy on the GPU. CPU twin: `QMatrix::rows_into`.

use std::ops::Range;

use attnlab_model::gguf::GgmlType;

use crate::context::Gpu;
use crate::error::GpuError;
use crate::step::{flat_groups, Bound, Step};

/// The workgroup size the WGSL is compiled with (kernels.rs writes it in the header).
pub const WG: [u32; 3] = [256, 1, 1];

pub const NAME: &str = "qembed";

/// The storage bindings after the uniform params, in order; `true` = written.
pub const WRITES: &[bool] = &[false, false, true];

crate::params! {
    /// Mirrors the WGSL `Params` struct (a multiple of 16 bytes).
    pub struct Params {
        pub row0: u32,
        pub row1: u32,
        pub d: u32,
        pub ty: u32,
        pub row_bytes: u32,
        pub _pad0: u32,
        pub _pad1: u32,
        pub _pad2: u32,
    }
}

/// tokens (P), w (vocabulary rows of blocks, padded to whole u32s) → out (P, D).
pub struct Buffers<'a> {
    pub tokens: &'a wgpu::Buffer,
    pub w: &'a wgpu::Buffer,
    pub out: &'a wgpu::Buffer,
}

pub fn bind(gpu: &Gpu, params: &wgpu::Buffer, b: Buffers) -> Bound {
    Bound::new(gpu, NAME, params, &[b.tokens, b.w, b.out])
}

/// Rows `rows` of the embedding of a (vocab, d) matrix of type `ty`. The token ids must be
/// below `vocab` (the engine checks them before it writes them).
pub fn step(
    b: &Bound,
    rows: Range<usize>,
    (vocab, d): (usize, usize),
    ty: GgmlType,
) -> Result<Step<'_>, GpuError> {
    let row_bytes = crate::qmatmul::row_bytes(ty, d)?;
    if rows.start > rows.end {
        return Err(GpuError::Shape(format!("{NAME}: rows {rows:?}")));
    }
    b.need(0, "tokens", rows.end)?;
    b.need(1, "w", (vocab * row_bytes).div_ceil(4))?;
    b.need(2, "out", rows.end * d)?;
    let p = Params {
        row0: rows.start as u32,
        row1: rows.end as u32,
        d: d as u32,
        ty: ty.0,
        row_bytes: row_bytes as u32,
        ..Default::default()
    };
    let [x, y] = flat_groups(rows.len() * d, WG[0]);
    Ok(Step::new(NAME, b, p, [x, y, 1]))
}
