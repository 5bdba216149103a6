//! `rms_norm` (shaders/rms_norm.wgsl): the Llama family's RMSNorm, one workgroup per row. CPU
//! twin: `llama::rms_norm`.

use std::ops::Range;

use crate::context::Gpu;
use crate::error::GpuError;
use crate::layernorm::rows_step;
use crate::step::{Bound, Step};

/// The workgroup size the WGSL is compiled with (kernels.rs writes it in the header).
pub const WG: [u32; 3] = [64, 1, 1];

pub const NAME: &str = "rms_norm";

/// The storage bindings after the uniform params, in order; `true` = written.
pub const WRITES: &[bool] = &[false, false, true];

crate::params! {
    /// Mirrors the WGSL `Params` struct (a multiple of 16 bytes).
    pub struct Params {
        pub row0: u32,
        pub d: u32,
        pub eps: f32,
        pub _pad: u32,
    }
}

/// x (P, D), gain (D) → out (P, D).
pub struct Buffers<'a> {
    pub x: &'a wgpu::Buffer,
    pub g: &'a wgpu::Buffer,
    pub out: &'a wgpu::Buffer,
}

pub fn bind(gpu: &Gpu, params: &wgpu::Buffer, b: Buffers) -> Bound {
    Bound::new(gpu, NAME, params, &[b.x, b.g, b.out])
}

/// RMSNorm of rows `rows`, D wide.
pub fn step(b: &Bound, rows: Range<usize>, d: usize, eps: f32) -> Result<Step<'_>, GpuError> {
    rows_step(
        NAME,
        b,
        rows,
        d,
        eps,
        &[(0, "x"), (2, "out")],
        &[(1, "gain")],
    )
}
