//! `qmatmul` (shaders/qmatmul.wgsl): y = x · Wᵀ with W as a GGUF file stores it (F16, BF16,
//! Q4_0, Q4_1, Q8_0 blocks), dequantized inside the product so that the weights stay as
//! compact on the GPU as in the file. One invocation per output. CPU twin:
//! `attnlab_model::qmatrix::QMatrix::matmul_t`.

use std::ops::Range;

use attnlab_model::gguf::GgmlType;

use crate::context::Gpu;
use crate::error::GpuError;
use crate::step::{groups, Bound, Step, MAX_GROUPS};

/// The workgroup size the WGSL is compiled with (kernels.rs writes it in the header).
pub const WG: [u32; 3] = [64, 1, 1];

pub const NAME: &str = "qmatmul";

/// The storage bindings after the uniform params, in order; `true` = written.
pub const WRITES: &[bool] = &[false, false, true];

/// The block types the kernel dequantizes.
pub const TYPES: [GgmlType; 5] = [
    GgmlType::F16,
    GgmlType::BF16,
    GgmlType::Q4_0,
    GgmlType::Q4_1,
    GgmlType::Q8_0,
];

crate::params! {
    /// Mirrors the WGSL `Params` struct (a multiple of 16 bytes).
    pub struct Params {
        pub m: u32,
        pub k: u32,
        pub n: u32,
        pub ty: u32,
        pub row_bytes: u32,
        pub row0: u32,
        pub _pad0: u32,
        pub _pad1: u32,
    }
}

/// x (P, K), w (N rows of blocks, padded to whole u32s), y (P, N).
pub struct Buffers<'a> {
    pub x: &'a wgpu::Buffer,
    pub w: &'a wgpu::Buffer,
    pub y: &'a wgpu::Buffer,
}

pub fn bind(gpu: &Gpu, params: &wgpu::Buffer, b: Buffers) -> Bound {
    Bound::new(gpu, NAME, params, &[b.x, b.w, b.y])
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

/// Rows `rows` of y = x · Wᵀ, W (n, k) of type `ty`.
pub fn step(
    b: &Bound,
    rows: Range<usize>,
    (k, n): (usize, usize),
    ty: GgmlType,
) -> Result<Step<'_>, GpuError> {
    let row_bytes = row_bytes(ty, k)?;
    // one row of workgroups per row of x
    if rows.start > rows.end || rows.len() > MAX_GROUPS as usize {
        return Err(GpuError::Shape(format!(
            "{NAME}: rows {rows:?} (at most {MAX_GROUPS} a dispatch)"
        )));
    }
    b.need(0, "x", rows.end * k)?;
    b.need(1, "w", (n * row_bytes).div_ceil(4))?;
    b.need(2, "y", rows.end * n)?;
    let p = Params {
        m: rows.len() as u32,
        k: k as u32,
        n: n as u32,
        ty: ty.0,
        row_bytes: row_bytes as u32,
        row0: rows.start as u32,
        ..Default::default()
    };
    Ok(Step::new(
        NAME,
        b,
        p,
        [groups(n, WG[0]), rows.len() as u32, 1],
    ))
}
