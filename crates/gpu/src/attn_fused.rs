//! `attn_fused` (shaders/attn_fused.wgsl): a head's output, softmax(mask(QKᵀ · scale) / τ) · V,
//! without writing a score — an online softmax over the keys, which pass through workgroup
//! memory a tile at a time — for a forward that keeps no maps (`Keep::Streams`): no (H, T, T)
//! buffer exists, so the length is bounded by the (H, T, Dk) ones. CPU twin:
//! `cpu::attn_fused`, then the concatenation (its dot products summed four lanes apart); equal
//! to `attn_scores` → `attn_softmax` → `attn_v` up to rounding. One workgroup per `WG[0]`
//! queries and head.

use std::ops::Range;

use crate::attn_v::MAX_HEADS;
use crate::context::Gpu;
use crate::error::GpuError;
use crate::step::{groups, rows_within, Bound, Heads, Step};

/// The workgroup size the WGSL is compiled with (kernels.rs writes it in the header): 64
/// queries of one head per workgroup.
pub const WG: [u32; 3] = [64, 1, 1];

/// Keys per tile, and the longest query and key a head may have (a multiple of 4: the WGSL
/// reads them as vec4s): the tile of keys and the tile of values together fill WebGPU's least
/// workgroup storage (16 KiB). The WGSL's arrays are sized for these.
pub const TILE: usize = 16;
pub const MAX_DK: usize = 128;

/// Constants the WGSL reads (kernels.rs writes them in the header).
pub const CONSTS: &[(&str, u32)] = &[("TILE", TILE as u32)];

/// Whether the fused attention takes heads of `dk` values.
pub fn takes(dk: usize) -> bool {
    dk <= MAX_DK && dk.is_multiple_of(4)
}

pub const NAME: &str = "attn_fused";

/// The storage bindings after the uniform params, in order; `true` = written:
/// q, k, v → head_out, concat.
pub const WRITES: &[bool] = &[false, false, false, true, true];

crate::params! {
    /// Mirrors the WGSL `Params` struct (a multiple of 16 bytes). `d` = H·Dk (the concat's
    /// width); `scale`: 1/√d_k or 1; `causal`: 1 hides keys after the query; `ablate_lo`,
    /// `ablate_hi`: `attn_v::ablation_mask`.
    pub struct Params {
        pub row0: u32,
        pub row1: u32,
        pub keys: u32,
        pub dk: u32,
        pub positions: u32,
        pub d: u32,
        pub scale: f32,
        pub tau: f32,
        pub causal: u32,
        pub ablate_lo: u32,
        pub ablate_hi: u32,
        pub _pad0: u32,
    }
}

/// q, k, v (H, P, Dk) → head_out (H, P, Dk), concat (P, H·Dk).
pub struct Buffers<'a> {
    pub q: &'a wgpu::Buffer,
    pub k: &'a wgpu::Buffer,
    pub v: &'a wgpu::Buffer,
    pub head_out: &'a wgpu::Buffer,
    pub concat: &'a wgpu::Buffer,
}

pub fn bind(gpu: &Gpu, params: &wgpu::Buffer, b: Buffers) -> Bound {
    Bound::new(gpu, NAME, params, &[b.q, b.k, b.v, b.head_out, b.concat])
}

/// The attention options a fused step applies.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Softmax {
    /// 1/√d_k, or 1 with scaling off.
    pub scale: f32,
    pub tau: f32,
    pub causal: bool,
    /// `attn_v::ablation_mask` of the layer.
    pub ablate: (u32, u32),
}

/// The outputs of queries `rows` over the first `keys` keys, every head.
pub fn step(
    b: &Bound,
    rows: Range<usize>,
    keys: usize,
    heads: Heads,
    s: Softmax,
) -> Result<Step<'_>, GpuError> {
    rows_within(NAME, &rows, heads.positions)?;
    rows_within(NAME, &(0..keys), heads.positions)?;
    if !takes(heads.dk) || heads.count > MAX_HEADS {
        return Err(GpuError::TooLarge(format!(
            "{} heads of {} values: the fused attention takes at most {MAX_HEADS} heads of at most {MAX_DK}, a multiple of 4",
            heads.count, heads.dk
        )));
    }
    let d = heads.count * heads.dk;
    for (i, what) in [(0, "q"), (1, "k"), (2, "v"), (3, "head_out")] {
        b.need(i, what, heads.dk_len())?;
    }
    b.need(4, "concat", rows.end * d)?;
    let p = Params {
        row0: rows.start as u32,
        row1: rows.end as u32,
        keys: keys as u32,
        dk: heads.dk as u32,
        positions: heads.positions as u32,
        d: d as u32,
        scale: s.scale,
        tau: s.tau,
        causal: s.causal as u32,
        ablate_lo: s.ablate.0,
        ablate_hi: s.ablate.1,
        _pad0: 0,
    };
    let grid = [groups(rows.len(), WG[0]), heads.count as u32, 1];
    Ok(Step::new(NAME, b, p, grid))
}
