//! `AnyEngine`: the GPU engine of either architecture — GPT-2's `GpuEngine` or the Llama
//! family's `LlamaGpuEngine` — behind the calls the page and the profile example make.

use attnlab_model::{AttentionOptions, Dims, Keep, Trace};

use crate::context::Gpu;
use crate::engine::{GpuEngine, LlamaGpuEngine, Profile, SlimAsk, SlimRead};
use crate::error::GpuError;

/// The engine of one architecture.
pub enum AnyEngine {
    Gpt2(Box<GpuEngine>),
    Llama(Box<LlamaGpuEngine>),
}

/// `$e` with `$g` bound to whichever engine `$any` holds.
macro_rules! either {
    ($any:expr, $g:ident => $e:expr) => {
        match $any {
            AnyEngine::Gpt2($g) => $e,
            AnyEngine::Llama($g) => $e,
        }
    };
}

impl AnyEngine {
    /// See `GpuEngine::forward`.
    pub async fn forward(&mut self, ids: &[u32], o: &AttentionOptions) -> Result<Trace, GpuError> {
        either!(self, g => g.forward(ids, o).await)
    }

    /// See `GpuEngine::forward_full`.
    pub async fn forward_full(
        &mut self,
        ids: &[u32],
        o: &AttentionOptions,
    ) -> Result<Trace, GpuError> {
        either!(self, g => g.forward_full(ids, o).await)
    }

    /// See `GpuEngine::profile`.
    pub async fn profile(
        &mut self,
        ids: &[u32],
        o: &AttentionOptions,
        now: &dyn Fn() -> f64,
    ) -> Result<(Trace, Profile), GpuError> {
        either!(self, g => g.profile(ids, o, now).await)
    }

    /// See `GpuEngine::forward_slim`.
    pub async fn forward_slim(
        &mut self,
        ids: &[u32],
        o: &AttentionOptions,
        ask: &SlimAsk,
    ) -> Result<SlimRead, GpuError> {
        either!(self, g => g.forward_slim(ids, o, ask).await)
    }

    /// See `GpuEngine::with_new_keep`.
    pub async fn with_new_keep(self, budget: u64, keep: Keep) -> Result<AnyEngine, GpuError> {
        Ok(match self {
            AnyEngine::Gpt2(g) => AnyEngine::Gpt2(Box::new(g.with_new_keep(budget, keep).await?)),
            AnyEngine::Llama(g) => AnyEngine::Llama(Box::new(g.with_new_keep(budget, keep).await?)),
        })
    }

    pub fn keep(&self) -> Keep {
        either!(self, g => g.keep())
    }

    pub fn dims(&self, t: usize) -> Dims {
        either!(self, g => g.dims(t))
    }

    pub fn last_was_incremental(&self) -> bool {
        either!(self, g => g.last_was_incremental())
    }

    pub fn clear_cache(&mut self) {
        either!(self, g => g.clear_cache())
    }

    pub fn capacity(&self) -> usize {
        either!(self, g => g.capacity())
    }

    pub fn gpu(&self) -> &Gpu {
        either!(self, g => g.gpu())
    }
}
