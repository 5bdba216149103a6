//! `softmax_rows` (shaders/softmax_rows.wgsl): numerically stable softmax with temperature,
//! one workgroup per row. CPU twin: `cpu::softmax_rows`. Two uses: the attention weights of
//! every head ([`step_heads`]) and the next-token probabilities ([`step_rows`]).

use std::ops::Range;

use crate::context::Gpu;
use crate::error::GpuError;
use crate::step::{rows_within, Bound, Heads, Step};

/// The workgroup size the WGSL is compiled with (kernels.rs writes it in the header).
pub const WG: [u32; 3] = [256, 1, 1];

pub const NAME: &str = "softmax_rows";

/// The storage bindings after the uniform params, in order; `true` = written.
pub const WRITES: &[bool] = &[false, true];

crate::params! {
    /// Mirrors the WGSL `Params` struct (a multiple of 16 bytes).
    pub struct Params {
        pub row_base: u32,
        pub row0: u32,
        pub cols: u32,
        pub row_stride: u32,
        pub head_stride: u32,
        pub tau: f32,
        pub _pad0: u32,
        pub _pad1: u32,
    }
}

/// x → softmax(x / τ), same shape.
pub struct Buffers<'a> {
    pub x: &'a wgpu::Buffer,
    pub out: &'a wgpu::Buffer,
}

pub fn bind(gpu: &Gpu, params: &wgpu::Buffer, b: Buffers) -> Bound {
    Bound::new(gpu, NAME, params, &[b.x, b.out])
}

/// Attention weights of every head over the first `t` keys: rows from `new` on are
/// normalised; the rows before (from an earlier forward) get their new columns cleared.
pub fn step_heads(
    b: &Bound,
    new: usize,
    t: usize,
    heads: Heads,
    tau: f32,
) -> Result<Step<'_>, GpuError> {
    rows_within(NAME, &(new..t), heads.positions)?;
    b.need(0, "masked", heads.square_len())?;
    b.need(1, "weights", heads.square_len())?;
    let p = Params {
        row_base: 0,
        row0: new as u32,
        cols: t as u32,
        row_stride: heads.positions as u32,
        head_stride: (heads.positions * heads.positions) as u32,
        tau,
        ..Default::default()
    };
    Ok(Step::new(NAME, b, p, [t as u32, heads.count as u32, 1]))
}

/// Softmax over rows `rows` of a (P, cols) matrix, τ = 1 (the next-token probabilities).
pub fn step_rows(b: &Bound, rows: Range<usize>, cols: usize) -> Result<Step<'_>, GpuError> {
    b.need(0, "x", rows.end * cols)?;
    b.need(1, "out", rows.end * cols)?;
    let p = Params {
        row_base: rows.start as u32,
        row0: rows.start as u32,
        cols: cols as u32,
        row_stride: cols as u32,
        head_stride: 0,
        tau: 1.0,
        ..Default::default()
    };
    Ok(Step::new(NAME, b, p, [rows.len() as u32, 1, 1]))
}
