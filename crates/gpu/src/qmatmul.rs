//! `qmatmul` (shaders/qmatmul.wgsl): y = x · Wᵀ (+ b) with W as a GGUF file stores it (F32,
//! F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K blocks), dequantized inside the product so that the weights
//! stay as compact on the GPU as in the file. One invocation per output column and [`ROWS`]
//! rows of x. CPU twin: `attnlab_model::qmatrix::QMatrix::matmul_t`, then the bias.

use std::ops::Range;

use attnlab_model::gguf::GgmlType;

use crate::context::Gpu;
use crate::error::GpuError;
use crate::step::{groups, Bound, Step, MAX_GROUPS};

/// The workgroup size the WGSL is compiled with (kernels.rs writes it in the header).
pub const WG: [u32; 3] = [64, 1, 1];

pub const NAME: &str = "qmatmul";

/// The storage bindings after the uniform params, in order; `true` = written.
pub const WRITES: &[bool] = &[false, false, false, true];

/// Rows of x one invocation multiplies (each weight is dequantized once for them).
pub const ROWS: usize = 4;

/// The constants the WGSL reads from its header.
pub const CONSTS: &[(&str, u32)] = &[("ROWS", ROWS as u32)];

/// The types the kernel reads: every type attnlab reads.
pub const TYPES: [GgmlType; 11] = GgmlType::READ;

crate::params! {
    /// Mirrors the WGSL `Params` struct (a multiple of 16 bytes). `out_shift`: y's row r
    /// holds x's row r + out_shift (0, or `row0` to write one row into a one-row buffer).
    pub struct Params {
        pub m: u32,
        pub k: u32,
        pub n: u32,
        pub ty: u32,
        pub row_bytes: u32,
        pub row0: u32,
        pub bias: u32,
        pub out_shift: u32,
    }
}

/// x (P, K), w (N rows of blocks, padded to whole u32s), b (N, or a few zeros for a product
/// without bias), y (P, N).
pub struct Buffers<'a> {
    pub x: &'a wgpu::Buffer,
    pub w: &'a wgpu::Buffer,
    pub b: &'a wgpu::Buffer,
    pub y: &'a wgpu::Buffer,
}

pub fn bind(gpu: &Gpu, params: &wgpu::Buffer, b: Buffers) -> Bound {
    Bound::new(gpu, NAME, params, &[b.x, b.w, b.b, b.y])
}

/// Bytes of one row of `cols` values of type `ty`, if the kernel reads that type.
pub fn row_bytes(ty: GgmlType, cols: usize) -> Result<usize, GpuError> {
    match ty.block() {
        Some((block, size)) if TYPES.contains(&ty) && cols.is_multiple_of(block) => {
            Ok(cols / block * size)
        }
        _ => Err(GpuError::Shape(format!(
            "{NAME}: rows of {cols} {} values are not run on the GPU (it reads {})",
            ty.name(),
            TYPES.map(|t| t.name()).join(", ")
        ))),
    }
}

/// Rows `rows` of y = x · Wᵀ, W (n, k) of type `ty`, plus the bias when `bias`.
pub fn step(
    b: &Bound,
    rows: Range<usize>,
    (k, n): (usize, usize),
    ty: GgmlType,
    bias: bool,
) -> Result<Step<'_>, GpuError> {
    step_shifted(b, rows, (k, n), ty, bias, 0)
}

/// `step` writing x's row r to y's row r − `out_shift` (at most `rows.start`): the output
/// head of a Trace that keeps one row of logits reads the last row into a one-row buffer.
pub fn step_shifted(
    b: &Bound,
    rows: Range<usize>,
    (k, n): (usize, usize),
    ty: GgmlType,
    bias: bool,
    out_shift: usize,
) -> Result<Step<'_>, GpuError> {
    let row_bytes = row_bytes(ty, k)?;
    if out_shift > rows.start {
        return Err(GpuError::Shape(format!(
            "{NAME}: rows {rows:?} shifted up by {out_shift}"
        )));
    }
    // one row of workgroups per ROWS rows of x
    if rows.start > rows.end || rows.len().div_ceil(ROWS) > MAX_GROUPS as usize {
        return Err(GpuError::Shape(format!(
            "{NAME}: rows {rows:?} (at most {MAX_GROUPS} a dispatch)"
        )));
    }
    b.need(0, "x", rows.end * k)?;
    b.need(1, "w", (n * row_bytes).div_ceil(4))?;
    if bias {
        b.need(2, "b", n)?;
    }
    b.need(3, "y", (rows.end - out_shift) * n)?;
    let p = Params {
        m: rows.len() as u32,
        k: k as u32,
        n: n as u32,
        ty: ty.0,
        row_bytes: row_bytes as u32,
        row0: rows.start as u32,
        bias: bias.into(),
        out_shift: out_shift as u32,
    };
    Ok(Step::new(
        NAME,
        b,
        p,
        [groups(n, WG[0]), rows.len().div_ceil(ROWS) as u32, 1],
    ))
}
