//! `swiglu` (shaders/swiglu.wgsl): the Llama family's FFN gate, gate ← SiLU(gate) · up, in
//! place. One invocation per element. CPU twin: `llama::swiglu`.

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
        pub n: u32,
        pub _pad0: u32,
        pub _pad1: u32,
        pub _pad2: u32,
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

/// The gate of the first `n` elements.
pub fn step(b: &Bound, n: usize) -> Result<Step<'_>, GpuError> {
    b.need(0, "gate", n)?;
    b.need(1, "up", n)?;
    let p = Params {
        n: n as u32,
        ..Default::default()
    };
    let [x, y] = flat_groups(n, WG[0]);
    Ok(Step::new(NAME, b, p, [x, y, 1]))
}
