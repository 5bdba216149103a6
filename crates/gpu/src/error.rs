use thiserror::Error;

/// Why the GPU engine could not run. Never a panic: the app falls back to the CPU.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum GpuError {
    #[error("no GPU adapter: {0}")]
    NoAdapter(String),
    #[error("the GPU refused the device: {0}")]
    RequestDevice(String),
    #[error("GPU error: {0}")]
    Wgpu(String),
    #[error("the GPU device was lost: {0}")]
    DeviceLost(String),
    /// A kernel's step asked for more than the buffers bound to it hold (a bug in the plan,
    /// caught before anything is dispatched).
    #[error("GPU plan: {0}")]
    Shape(String),
    #[error("the model does not fit this GPU: {0}")]
    TooLarge(String),
    /// More tokens than the GPU buffers hold (a big model's context is cut to fit): this
    /// request runs on the CPU, the engine stays.
    #[error("{tokens} tokens are more than the GPU buffers hold ({capacity})")]
    TooLong { tokens: usize, capacity: usize },
    #[error(transparent)]
    Model(#[from] attnlab_model::Error),
}
