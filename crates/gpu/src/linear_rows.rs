//! `linear_rows` (shaders/linear_rows.wgsl): `out = act(x·W + b)` for a few rows, one
//! invocation per output column and `MAX_ROWS` rows. CPU twin: `cpu::linear`. Shares
//! `linear`'s `Params` and bindings (the kernel table says `like linear`); `linear::step` picks
//! it for ≤ `MAX_ROWS` rows, and for every row count where the adapter runs on the CPU
//! (`linear::tile_from`).

pub const NAME: &str = "linear_rows";

/// The workgroup size the WGSL is compiled with (kernels.rs writes it in the header).
pub const WG: [u32; 3] = [64, 1, 1];

/// Row counts up to this use `linear_rows`; more use the tiled `linear`. The WGSL's ROWS.
pub const MAX_ROWS: usize = 8;

/// The header constants the WGSL reads besides the workgroup size.
pub const CONSTS: &[(&str, u32)] = &[("ROWS", MAX_ROWS as u32)];
