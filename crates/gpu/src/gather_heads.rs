//! `gather_heads` (shaders/gather_heads.wgsl): a row-major projection of S heads → per-head
//! rows (H, P, Dk), query head h reading source head h / group (grouped-query attention's
//! shared keys and values; group 1 for the queries). CPU twin: the per-head columns of
//! `llama::forward`'s pass.

use std::ops::Range;

use crate::context::Gpu;
use crate::error::GpuError;
use crate::step::{flat_groups, rows_within, Bound, Heads, Step};

/// The workgroup size the WGSL is compiled with (kernels.rs writes it in the header).
pub const WG: [u32; 3] = [256, 1, 1];

pub const NAME: &str = "gather_heads";

/// The storage bindings after the uniform params, in order; `true` = written.
pub const WRITES: &[bool] = &[false, true];

crate::params! {
    /// Mirrors the WGSL `Params` struct (a multiple of 16 bytes).
    pub struct Params {
        pub row0: u32,
        pub row1: u32,
        pub heads: u32,
        pub dk: u32,
        pub positions: u32,
        pub group: u32,
        pub _pad0: u32,
        pub _pad1: u32,
    }
}

/// src (P, H / group × Dk) → dst (H, P, Dk).
pub struct Buffers<'a> {
    pub src: &'a wgpu::Buffer,
    pub dst: &'a wgpu::Buffer,
}

pub fn bind(gpu: &Gpu, params: &wgpu::Buffer, b: Buffers) -> Bound {
    Bound::new(gpu, NAME, params, &[b.src, b.dst])
}

/// Rows `rows` of src into every head, `group` query heads to a source head.
pub fn step(
    b: &Bound,
    rows: Range<usize>,
    heads: Heads,
    group: usize,
) -> Result<Step<'_>, GpuError> {
    rows_within(NAME, &rows, heads.positions)?;
    if group == 0 || !heads.count.is_multiple_of(group) {
        return Err(GpuError::Shape(format!(
            "{NAME}: {} heads in groups of {group}",
            heads.count
        )));
    }
    b.need(0, "src", rows.end * heads.count / group * heads.dk)?;
    b.need(1, "dst", heads.dk_len())?;
    let p = Params {
        row0: rows.start as u32,
        row1: rows.end as u32,
        heads: heads.count as u32,
        dk: heads.dk as u32,
        positions: heads.positions as u32,
        group: group as u32,
        ..Default::default()
    };
    let [x, y] = flat_groups(rows.len() * heads.count * heads.dk, WG[0]);
    Ok(Step::new(NAME, b, p, [x, y, 1]))
}
