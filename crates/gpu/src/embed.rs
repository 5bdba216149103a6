//! `embed` (shaders/embed.wgsl): token (× `scale`) + position embedding. CPU twin:
//! `cpu::embed`. One invocation per output value.

use std::ops::Range;

use crate::context::Gpu;
use crate::error::GpuError;
use crate::step::{groups, rows_within, Bound, Step};

/// The workgroup size the WGSL is compiled with (kernels.rs writes it in the header).
pub const WG: [u32; 3] = [64, 1, 1];

pub const NAME: &str = "embed";

/// The storage bindings after the uniform params, in order; `true` = written.
pub const WRITES: &[bool] = &[false, false, false, true];

crate::params! {
    /// Mirrors the WGSL `Params` struct (a multiple of 16 bytes).
    pub struct Params {
        pub row0: u32,
        pub row1: u32,
        pub d: u32,
        pub scale: f32,
    }
}

/// Token ids (P), wte (V, D), wpe (P, D) → out (P, D).
pub struct Buffers<'a> {
    pub tokens: &'a wgpu::Buffer,
    pub wte: &'a wgpu::Buffer,
    pub wpe: &'a wgpu::Buffer,
    pub out: &'a wgpu::Buffer,
}

pub fn bind(gpu: &Gpu, params: &wgpu::Buffer, b: Buffers) -> Bound {
    Bound::new(gpu, NAME, params, &[b.tokens, b.wte, b.wpe, b.out])
}

/// Rows `rows` of the embedding, D wide.
pub fn step(b: &Bound, rows: Range<usize>, d: usize, scale: f32) -> Result<Step<'_>, GpuError> {
    rows_within(NAME, &rows, b.lens[0])?;
    b.need(2, "wpe", rows.end * d)?;
    b.need(3, "out", rows.end * d)?;
    let p = Params {
        row0: rows.start as u32,
        row1: rows.end as u32,
        d: d as u32,
        scale,
    };
    Ok(Step::new(NAME, b, p, [groups(rows.len() * d, WG[0]), 1, 1]))
}
