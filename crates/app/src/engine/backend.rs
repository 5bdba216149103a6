//! Which engine computes, and why the CPU does when it does: what the badge and the model
//! card show.

use crate::i18n::{Key, Lang};

/// Why the CPU computes.
#[derive(Clone, Debug, PartialEq)]
pub enum CpuWhy {
    /// The browser gives no WebGPU device (with its reason).
    NoWebGpu(String),
    /// The user chose the CPU.
    Chosen,
    /// Auto measured both on a software adapter: the CPU was faster (median ms).
    Faster { cpu_ms: f64, gpu_ms: f64 },
    /// The WebGPU engine is still starting (a real model's starts after its first result).
    GpuStarting,
    /// Auto on a software adapter, for a model too large to be worth a trial there.
    SoftwareGpuSlow,
    /// The GPU failed (with the error); the CPU took over for good.
    GpuFailed(String),
    /// The WebGPU engine does not run this model yet (why: e.g. a tensor type its kernels
    /// do not read, or buffers larger than the device binds).
    CpuOnlyModel(String),
}

/// Which engine computes the Trace, as the badge shows it.
#[derive(Clone, Debug, PartialEq)]
pub enum Backend {
    Starting,
    /// `adapter` is the browser's description (often empty); `fallback` marks a software
    /// adapter such as SwiftShader.
    Gpu {
        adapter: String,
        fallback: bool,
    },
    /// Auto on a software adapter, running the first results on both.
    Comparing {
        adapter: String,
    },
    Cpu {
        why: CpuWhy,
    },
}

impl Backend {
    /// The adapter as the badge names it: the browser's description, else what kind it is.
    pub fn adapter_label(&self, lang: Lang) -> String {
        match self {
            Backend::Gpu { adapter, .. } | Backend::Comparing { adapter }
                if !adapter.is_empty() =>
            {
                adapter.clone()
            }
            Backend::Gpu { fallback: true, .. } | Backend::Comparing { .. } => {
                Key::SoftwareAdapter.text(lang).into()
            }
            Backend::Gpu { .. } => Key::GpuAdapter.text(lang).into(),
            _ => String::new(),
        }
    }
}
