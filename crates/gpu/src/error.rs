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
    #[error("the model does not fit this GPU: {0}")]
    TooLarge(String),
    #[error(transparent)]
    Model(#[from] attnlab_model::Error),
}
