//! `layernorm` (shaders/layernorm.wgsl): LayerNorm, one workgroup per row. CPU twin:
//! `cpu::layernorm`.

use std::ops::Range;

use crate::context::Gpu;
use crate::error::GpuError;
use crate::step::{Bound, Step, MAX_GROUPS};

/// The workgroup size the WGSL is compiled with (kernels.rs writes it in the header).
pub const WG: [u32; 3] = [64, 1, 1];

pub const NAME: &str = "layernorm";

/// The storage bindings after the uniform params, in order; `true` = written.
pub const WRITES: &[bool] = &[false, false, false, true];

crate::params! {
    /// Mirrors the WGSL `Params` struct (a multiple of 16 bytes).
    pub struct Params {
        pub row0: u32,
        pub d: u32,
        pub eps: f32,
        pub _pad: u32,
    }
}

/// x (P, D), gain (D), bias (D) → out (P, D).
pub struct Buffers<'a> {
    pub x: &'a wgpu::Buffer,
    pub g: &'a wgpu::Buffer,
    pub b: &'a wgpu::Buffer,
    pub out: &'a wgpu::Buffer,
}

pub fn bind(gpu: &Gpu, params: &wgpu::Buffer, b: Buffers) -> Bound {
    Bound::new(gpu, NAME, params, &[b.x, b.g, b.b, b.out])
}

/// LayerNorm of rows `rows`, D wide.
pub fn step(b: &Bound, rows: Range<usize>, d: usize, eps: f32) -> Result<Step<'_>, GpuError> {
    rows_step(
        NAME,
        b,
        rows,
        d,
        eps,
        &[(0, "x"), (3, "out")],
        &[(1, "gain"), (2, "bias")],
    )
}

/// A row-per-workgroup step over `rows` (layernorm and add_layernorm): the `wide` bindings hold
/// (P, D), the `vectors` D.
pub(crate) fn rows_step<'a>(
    kernel: &'static str,
    b: &'a Bound,
    rows: Range<usize>,
    d: usize,
    eps: f32,
    wide: &[(usize, &str)],
    vectors: &[(usize, &str)],
) -> Result<Step<'a>, GpuError> {
    // one workgroup per row
    if rows.start > rows.end || rows.len() > MAX_GROUPS as usize {
        return Err(GpuError::Shape(format!(
            "{kernel}: rows {rows:?} (at most {MAX_GROUPS} a dispatch)"
        )));
    }
    for &(i, what) in wide {
        b.need(i, what, rows.end * d)?;
    }
    for &(i, what) in vectors {
        b.need(i, what, d)?;
    }
    let p = Params {
        row0: rows.start as u32,
        d: d as u32,
        eps,
        _pad: 0,
    };
    Ok(Step::new(kernel, b, p, [rows.len() as u32, 1, 1]))
}
