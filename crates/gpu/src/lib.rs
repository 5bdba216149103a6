//! attnlab's GPU engine: the forward pass as WGSL compute shaders through wgpu — Vulkan,
//! Metal or DX12 natively, WebGPU in the browser — producing the same `Trace` as the CPU
//! reference in `attnlab-model`.
//!
//! One module per kernel — its `Params`, its named bindings (`bind`) and its launch (`step`:
//! shapes checked, grid from the workgroup size the WGSL is compiled with) — named after the
//! shader in `shaders/` and after its CPU twin in `attnlab_model::cpu`. The engine (engine/)
//! lays out the buffers, binds them once and plans each forward as a list of steps.

pub mod add_layernorm;
pub mod any_engine;
pub mod attn_fused;
pub mod attn_pool;
pub mod attn_scores;
pub mod attn_softmax;
pub mod attn_v;
pub mod context;
pub mod embed;
pub mod engine;
pub mod error;
pub mod gather_heads;
pub mod kernel;
pub mod kernels;
pub mod layernorm;
pub mod linear;
pub mod linear_rows;
pub mod pack_scores;
pub mod params;
pub mod qembed;
pub mod qmatmul;
pub mod residual_add;
pub mod rms_norm;
pub mod rope;
pub mod softmax_rows;
pub mod split_heads;
pub mod step;
pub mod swiglu;

pub use any_engine::AnyEngine;
pub use context::{runs_on_cpu, Gpu};
pub use engine::{GpuEngine, LlamaGpuEngine, Profile};
pub use error::GpuError;
/// The wgpu this engine is built on (its types appear in the API, e.g. `AdapterInfo`).
pub use wgpu;
