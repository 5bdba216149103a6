//! `add_layernorm` (shaders/add_layernorm.wgsl): the residual sum and its LayerNorm in one
//! pass, one workgroup per row. CPU twin: `cpu::add_layernorm`.

use std::ops::Range;

use crate::context::Gpu;
use crate::error::GpuError;
use crate::step::{Bound, Step};

/// The workgroup size the WGSL is compiled with (kernels.rs writes it in the header).
pub const WG: [u32; 3] = [64, 1, 1];

pub const NAME: &str = "add_layernorm";

/// The storage bindings after the uniform params, in order; `true` = written:
/// a, b, g, beta → sum, out.
pub const WRITES: &[bool] = &[false, false, false, false, true, true];

pub use crate::layernorm::Params;

/// a, b (P, D), gain, bias (D) → sum = a + b, out = LN(sum) (P, D).
pub struct Buffers<'a> {
    pub a: &'a wgpu::Buffer,
    pub b: &'a wgpu::Buffer,
    pub g: &'a wgpu::Buffer,
    pub beta: &'a wgpu::Buffer,
    pub sum: &'a wgpu::Buffer,
    pub out: &'a wgpu::Buffer,
}

pub fn bind(gpu: &Gpu, params: &wgpu::Buffer, b: Buffers) -> Bound {
    Bound::new(gpu, NAME, params, &[b.a, b.b, b.g, b.beta, b.sum, b.out])
}

/// a + b and its LayerNorm for rows `rows`, D wide.
pub fn step(b: &Bound, rows: Range<usize>, d: usize, eps: f32) -> Result<Step<'_>, GpuError> {
    crate::layernorm::rows_step(
        NAME,
        b,
        rows,
        d,
        eps,
        &[(0, "a"), (1, "b"), (4, "sum"), (5, "out")],
        &[(2, "gain"), (3, "bias")],
    )
}
