//! `linear_rows` (shaders/linear_rows.wgsl): `out = x·W + b` for a few rows, one invocation
//! per output column and 8 rows. CPU twin: `cpu::linear`. Dispatch grid: (N/64, rows/8, 1).
//! Shares `linear::Params` and its bindings; the engine picks it for ≤ `MAX_ROWS` rows.

pub const NAME: &str = "linear_rows";

pub use crate::linear::{Params, WRITES};

/// The WGSL's `@workgroup_size`: the engine's grids divide by it (checked by tests/shaders.rs).
pub const WG: [u32; 3] = [64, 1, 1];

/// Row counts up to this use `linear_rows`; more use the tiled `linear`.
pub const MAX_ROWS: usize = 8;
