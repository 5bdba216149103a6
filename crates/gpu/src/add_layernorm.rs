//! `add_layernorm` (shaders/add_layernorm.wgsl): the residual sum and its LayerNorm in one
//! pass, one workgroup per row. CPU twin: `cpu::add_layernorm`. Dispatch grid: (rows, 1, 1).

/// The WGSL's `@workgroup_size`: the engine's grids divide by it (checked by tests/shaders.rs).
pub const WG: [u32; 3] = [256, 1, 1];

pub const NAME: &str = "add_layernorm";

/// The storage bindings after the uniform params, in order; `true` = written:
/// a, b, g, beta → sum, out.
pub const WRITES: &[bool] = &[false, false, false, false, true, true];

pub use crate::layernorm::Params;
