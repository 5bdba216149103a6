//! `linear` (shaders/linear.wgsl): `out = act(x·W + b)`, tiled. CPU twin: `cpu::linear` (and
//! `cpu::matmul_into` for the lm head), then `cpu::gelu` where `act` asks for it. Its
//! [`step`] launches `linear_rows` instead for the few rows a keystroke adds.

use std::ops::Range;

use crate::context::Gpu;
use crate::error::GpuError;
use crate::linear_rows;
use crate::step::{groups, Bound, Step};

/// The workgroup size the WGSL is compiled with (kernels.rs writes it in the header): one
/// square tile of outputs per workgroup.
pub const WG: [u32; 3] = [16, 16, 1];

pub const NAME: &str = "linear";

/// The storage bindings after the uniform params, in order; `true` = written.
pub const WRITES: &[bool] = &[false, false, false, true];

crate::params! {
    /// Mirrors the WGSL `Params` struct (a multiple of 16 bytes). `act`: the activation
    /// applied to the result, [`ACT_NONE`] or [`act`] of the model's.
    /// `out_shift`: out's row r holds x's row r + out_shift (0, or `row0` to write one row
    /// into a one-row buffer).
    pub struct Params {
        pub row0: u32,
        pub row1: u32,
        pub k: u32,
        pub n: u32,
        pub w_transposed: u32,
        pub has_bias: u32,
        pub act: u32,
        pub out_shift: u32,
    }
}

/// `act` for no activation.
pub const ACT_NONE: u32 = 0;

/// `act` for the FFN's activation (activation.wgsl's modes).
pub fn act(a: attnlab_model::Activation) -> u32 {
    match a {
        attnlab_model::Activation::GeluTanh => 1,
        attnlab_model::Activation::GeluErf => 2,
    }
}

/// x (P, K), W (K, N) — or (N, K) for the tied lm head —, bias (N) → out (P, N).
pub struct Buffers<'a> {
    pub x: &'a wgpu::Buffer,
    pub w: &'a wgpu::Buffer,
    pub b: &'a wgpu::Buffer,
    pub out: &'a wgpu::Buffer,
}

pub fn bind(gpu: &Gpu, params: &wgpu::Buffer, b: Buffers) -> Bound {
    Bound::new(gpu, NAME, params, &[b.x, b.w, b.b, b.out])
}

/// How W is stored and whether there is a bias.
#[derive(Clone, Copy)]
pub enum Weight {
    /// W (K, N) and a bias: GPT-2's Conv1D layers.
    WithBias,
    /// Wᵀ (N, K), no bias: the lm head tied to the token embedding.
    TiedTransposed,
}

/// The fewest rows for which `step` uses the tiled kernel: past `linear_rows::MAX_ROWS` when
/// `tiled` (a GPU's default); never otherwise (the default on an adapter that runs on the
/// CPU — SwiftShader, lavapipe — where workgroup memory and barriers cost more than they
/// save: the row kernel's full forward of 64 tokens measured 5–6× faster there on
/// SwiftShader, 2.7× on lavapipe; BENCHMARKS.md, issue 13).
pub fn tile_from(tiled: bool) -> usize {
    if tiled {
        linear_rows::MAX_ROWS + 1
    } else {
        usize::MAX
    }
}

/// `act(x·W + b)` for rows `rows`, K inputs, N outputs; the tiled kernel from `tile_from`
/// rows on (see [`tile_from`]), `linear_rows` below.
pub fn step(
    b: &Bound,
    rows: Range<usize>,
    (k, n): (usize, usize),
    weight: Weight,
    act: u32,
    tile_from: usize,
) -> Result<Step<'_>, GpuError> {
    step_shifted(b, rows, (k, n), weight, act, tile_from, 0)
}

/// `step` writing x's row r to out's row r − `out_shift` (at most `rows.start`): the lm head
/// of a Trace that keeps one row of logits reads the last row into a one-row buffer.
pub fn step_shifted(
    b: &Bound,
    rows: Range<usize>,
    (k, n): (usize, usize),
    weight: Weight,
    act: u32,
    tile_from: usize,
    out_shift: usize,
) -> Result<Step<'_>, GpuError> {
    if out_shift > rows.start {
        return Err(GpuError::Shape(format!(
            "linear: rows {rows:?} shifted up by {out_shift}"
        )));
    }
    b.need(0, "x", rows.end * k)?;
    b.need(1, "W", k * n)?;
    b.need(3, "out", (rows.end - out_shift) * n)?;
    let has_bias = matches!(weight, Weight::WithBias);
    if has_bias {
        b.need(2, "bias", n)?;
    }
    let p = Params {
        row0: rows.start as u32,
        row1: rows.end as u32,
        k: k as u32,
        n: n as u32,
        w_transposed: matches!(weight, Weight::TiedTransposed) as u32,
        has_bias: has_bias as u32,
        act,
        out_shift: out_shift as u32,
    };
    // few rows (or an adapter that runs on the CPU): one invocation per column and MAX_ROWS
    // rows; many: one tile per workgroup
    Ok(if rows.len() < tile_from {
        let grid = [
            groups(n, linear_rows::WG[0]),
            groups(rows.len(), linear_rows::MAX_ROWS as u32),
            1,
        ];
        Step::new(linear_rows::NAME, b, p, grid)
    } else {
        Step::new(NAME, b, p, [groups(n, WG[0]), groups(rows.len(), WG[1]), 1])
    })
}
