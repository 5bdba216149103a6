//! `residual_add` (shaders/residual_add.wgsl): Residual connection. CPU twin: `cpu::residual_add`.
//! Dispatch grid: (n/64, 1, 1).

use bytemuck::{Pod, Zeroable};

pub const NAME: &str = "residual_add";

/// The storage bindings after the uniform params, in order; `true` = written.
pub const WRITES: &[bool] = &[false, false, true];

/// Mirrors the WGSL `Params` struct (a multiple of 16 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct Params {
    pub start: u32,
    pub end: u32,
    pub _pad0: u32,
    pub _pad1: u32,
}
