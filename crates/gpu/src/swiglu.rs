//! `swiglu` (shaders/swiglu.wgsl): the Llama family's FFN gate, gate ← SiLU(gate) · up, in
//! place. One invocation per element. CPU twin: `llama::swiglu`.

use std::ops::Range;

use crate::context::Gpu;
use crate::error::GpuError;
use crate::step::{flat_groups, Bound, Step};

/// The workgroup size the WGSL is compiled with (kernels.rs writes it in the header).
pub const WG: [u32; 3] = [256, 1, 1];

pub const NAME: &str = "swiglu";

/// The storage bindings after the uniform params, in order; `true` = written.
pub const WRITES: &[bool] = &[true, false];

crate::params! {
    /// Mirrors the WGSL `Params` struct (a multiple of 16 bytes).
    pub struct Params {
        pub start: u32,
        pub end: u32,
        pub _pad0: u32,
        pub _pad1: u32,
    }
}

/// gate (P, F) written in place, up (P, F).
pub struct Buffers<'a> {
    pub gate: &'a wgpu::Buffer,
    pub up: &'a wgpu::Buffer,
}

pub fn bind(gpu: &Gpu, params: &wgpu::Buffer, b: Buffers) -> Bound {
    Bound::new(gpu, NAME, params, &[b.gate, b.up])
}

/// The gate of elements `elems` (rows × F).
pub fn step(b: &Bound, elems: Range<usize>) -> Result<Step<'_>, GpuError> {
    if elems.start > elems.end {
        return Err(GpuError::Shape(format!("{NAME}: elements {elems:?}")));
    }
    b.need(0, "gate", elems.end)?;
    b.need(1, "up", elems.end)?;
    let p = Params {
        start: elems.start as u32,
        end: elems.end as u32,
        ..Default::default()
    };
    let [x, y] = flat_groups(elems.len(), WG[0]);
    Ok(Step::new(NAME, b, p, [x, y, 1]))
}
