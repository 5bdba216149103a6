//! `residual_add` (shaders/residual_add.wgsl): out = a + b over rows of the residual stream.
//! CPU twin: `cpu::residual_add`.

use std::ops::Range;

use crate::context::Gpu;
use crate::error::GpuError;
use crate::step::{flat_groups, Bound, Step};

/// The workgroup size the WGSL is compiled with (kernels.rs writes it in the header).
pub const WG: [u32; 3] = [256, 1, 1];

pub const NAME: &str = "residual_add";

/// The storage bindings after the uniform params, in order; `true` = written.
pub const WRITES: &[bool] = &[false, false, true];

crate::params! {
    /// Mirrors the WGSL `Params` struct (a multiple of 16 bytes).
    pub struct Params {
        pub row0: u32,
        pub row1: u32,
        pub d: u32,
        pub _pad: u32,
    }
}

/// a, b (P, D) → out (P, D).
pub struct Buffers<'a> {
    pub a: &'a wgpu::Buffer,
    pub b: &'a wgpu::Buffer,
    pub out: &'a wgpu::Buffer,
}

pub fn bind(gpu: &Gpu, params: &wgpu::Buffer, b: Buffers) -> Bound {
    Bound::new(gpu, NAME, params, &[b.a, b.b, b.out])
}

/// a + b for rows `rows`, D wide.
pub fn step(b: &Bound, rows: Range<usize>, d: usize) -> Result<Step<'_>, GpuError> {
    if rows.start > rows.end {
        return Err(GpuError::Shape(format!("{NAME}: rows {rows:?}")));
    }
    for (i, what) in [(0, "a"), (1, "b"), (2, "out")] {
        b.need(i, what, rows.end * d)?;
    }
    let p = Params {
        row0: rows.start as u32,
        row1: rows.end as u32,
        d: d as u32,
        ..Default::default()
    };
    let [x, y] = flat_groups(rows.len() * d, WG[0]);
    Ok(Step::new(NAME, b, p, [x, y, 1]))
}
