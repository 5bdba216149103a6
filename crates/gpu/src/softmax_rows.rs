//! `softmax_rows` (shaders/softmax_rows.wgsl): numerically stable softmax with temperature,
//! one workgroup per row, for long rows: the next-token probabilities ([`step_rows`]). CPU
//! twin: `cpu::softmax_rows`. The attention weights (rows of at most the context) are
//! `attn_softmax`'s.

use std::ops::Range;

use crate::context::Gpu;
use crate::error::GpuError;
use crate::step::{Bound, Step};

/// The workgroup size the WGSL is compiled with (kernels.rs writes it in the header).
pub const WG: [u32; 3] = [64, 1, 1];

pub const NAME: &str = "softmax_rows";

/// The storage bindings after the uniform params, in order; `true` = written.
pub const WRITES: &[bool] = &[false, true];

crate::params! {
    /// Mirrors the WGSL `Params` struct (a multiple of 16 bytes).
    pub struct Params {
        pub row0: u32,
        pub cols: u32,
        pub tau: f32,
        pub _pad: u32,
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

/// Softmax over rows `rows` of a (P, cols) matrix, τ = 1 (the next-token probabilities).
pub fn step_rows(b: &Bound, rows: Range<usize>, cols: usize) -> Result<Step<'_>, GpuError> {
    b.need(0, "x", rows.end * cols)?;
    b.need(1, "out", rows.end * cols)?;
    let p = Params {
        row0: rows.start as u32,
        cols: cols as u32,
        tau: 1.0,
        ..Default::default()
    };
    Ok(Step::new(NAME, b, p, [rows.len() as u32, 1, 1]))
}
