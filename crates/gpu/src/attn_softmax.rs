//! `attn_softmax` (shaders/attn_softmax.wgsl): the attention weights of every head,
//! softmax(masked / τ) along each query row, one invocation per row and head (no workgroup
//! memory, no barriers). CPU twin: `cpu::softmax_rows`. The next-token probabilities, rows
//! of the vocabulary's length, use `softmax_rows` instead.

use crate::context::Gpu;
use crate::error::GpuError;
use crate::step::{groups, rows_within, Bound, Heads, Step};

/// The workgroup size the WGSL is compiled with (kernels.rs writes it in the header): 64
/// rows of one head per workgroup.
pub const WG: [u32; 3] = [64, 1, 1];

pub const NAME: &str = "attn_softmax";

/// The storage bindings after the uniform params, in order; `true` = written.
pub const WRITES: &[bool] = &[false, true];

crate::params! {
    /// Mirrors the WGSL `Params` struct (a multiple of 16 bytes).
    pub struct Params {
        pub row0: u32,
        pub rows: u32,
        pub cols: u32,
        pub row_stride: u32,
        pub head_stride: u32,
        pub tau: f32,
        pub _pad0: u32,
        pub _pad1: u32,
    }
}

/// masked scores → weights, per head (H, P, P).
pub struct Buffers<'a> {
    pub masked: &'a wgpu::Buffer,
    pub weights: &'a wgpu::Buffer,
}

pub fn bind(gpu: &Gpu, params: &wgpu::Buffer, b: Buffers) -> Bound {
    Bound::new(gpu, NAME, params, &[b.masked, b.weights])
}

/// Attention weights of every head over the first `t` keys: rows from `new` on are
/// normalised; the rows before (from an earlier forward) get their new columns cleared.
pub fn step(b: &Bound, new: usize, t: usize, heads: Heads, tau: f32) -> Result<Step<'_>, GpuError> {
    rows_within(NAME, &(new..t), heads.positions)?;
    b.need(0, "masked", heads.square_len())?;
    b.need(1, "weights", heads.square_len())?;
    let p = Params {
        row0: new as u32,
        rows: t as u32,
        cols: t as u32,
        row_stride: heads.positions as u32,
        head_stride: (heads.positions * heads.positions) as u32,
        tau,
        ..Default::default()
    };
    Ok(Step::new(
        NAME,
        b,
        p,
        [groups(t, WG[0]), heads.count as u32, 1],
    ))
}
