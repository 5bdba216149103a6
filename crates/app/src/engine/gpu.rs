//! The GPU backend: the WebGPU engine of `attnlab-gpu` for the model's architecture (GPT-2's
//! or the Llama family's), its errors sorted into what the policy in `engine` needs to know,
//! and whether its adapter is a software one.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use attnlab_gpu::{AnyEngine, GpuEngine, GpuError, LlamaGpuEngine};
use attnlab_model::llama::LlamaModel;
use attnlab_model::AttentionOptions;

use super::{Compute, ComputeError, Computed, CpuWhy, GpuSide, Slim};
use crate::dom::now;

pub struct Gpu {
    /// Out while a forward is in flight.
    engine: RefCell<Option<AnyEngine>>,
    lose: Cell<bool>,
}

impl Gpu {
    /// A GPU engine for a GPT-2-layout `model` with what the badge says of its adapter, or
    /// why there is none.
    pub async fn start(model: &attnlab_model::Model) -> Result<GpuSide<Gpu>, String> {
        let engine = GpuEngine::new(model).await.map_err(|e| e.to_string())?;
        Ok(Self::side(AnyEngine::Gpt2(Box::new(engine)), true))
    }

    /// A GPU engine for a Llama-family `model` (its weights uploaded as compact as they are
    /// in memory; the caller may drop the model then), or why the CPU computes: no WebGPU, or
    /// a model the engine does not run (a tensor type its kernels do not read, buffers
    /// larger than the device binds).
    pub async fn start_llama(model: &LlamaModel) -> Result<GpuSide<Gpu>, CpuWhy> {
        match LlamaGpuEngine::new(model).await {
            // on a software adapter, a real model is not worth Auto's trial
            Ok(engine) => Ok(Self::side(AnyEngine::Llama(Box::new(engine)), false)),
            Err(e @ GpuError::TooLarge(_)) => Err(CpuWhy::CpuOnlyModel(e.to_string())),
            Err(e) => Err(CpuWhy::NoWebGpu(e.to_string())),
        }
    }

    /// `trial`: whether Auto may measure it against the CPU on a software adapter.
    fn side(engine: AnyEngine, trial: bool) -> GpuSide<Gpu> {
        let info = &engine.gpu().info;
        let adapter = info.name.trim().to_string();
        let software = engine.gpu().runs_on_cpu();
        GpuSide {
            compute: Gpu {
                engine: RefCell::new(Some(engine)),
                lose: Cell::new(false),
            },
            adapter,
            software,
            trial,
        }
    }

    /// Destroys the device before the next forward (the end-to-end tests' fault injection).
    pub fn lose(&self) {
        self.lose.set(true);
    }

    /// Profiles a full forward of `ids` and the incremental one (the last token typed after
    /// the others): each dispatch and the readback timed on their own (for the benchmarks).
    pub async fn profile(&self, ids: &[u32]) -> Result<[attnlab_gpu::Profile; 2], String> {
        let Some(mut engine) = self.engine.borrow_mut().take() else {
            return Err("the GPU engine is busy or gone".into());
        };
        let opts = AttentionOptions::default();
        let mut run = async || {
            engine.clear_cache();
            let (_, full) = engine.profile(ids, &opts, &now).await?;
            engine
                .forward_full(&ids[..ids.len().saturating_sub(1)], &opts)
                .await?;
            let (_, inc) = engine.profile(ids, &opts, &now).await?;
            engine.clear_cache();
            Ok::<_, GpuError>([full, inc])
        };
        let out = run().await.map_err(|e| e.to_string());
        *self.engine.borrow_mut() = Some(engine);
        out
    }
}

impl Compute for Gpu {
    async fn forward(
        &self,
        ids: &[u32],
        opts: &AttentionOptions,
        slim: Slim<'_>,
    ) -> Result<Computed, ComputeError> {
        if slim.is_some() {
            return Err(ComputeError::TooLong(format!(
                "at {} tokens the page keeps one head's maps at a time, which the WebGPU engine does not do in the page yet",
                ids.len()
            )));
        }
        let Some(mut engine) = self.engine.borrow_mut().take() else {
            return Err(ComputeError::Lost("the GPU engine is busy or gone".into()));
        };
        if self.lose.replace(false) {
            engine.gpu().device.destroy();
        }
        let started = now();
        let result = engine.forward(ids, opts).await;
        let ms = now() - started;
        let incremental = engine.last_was_incremental();
        match result {
            Ok(trace) => {
                *self.engine.borrow_mut() = Some(engine);
                Ok(Computed {
                    trace: Rc::new(trace),
                    incremental,
                    ms,
                    engine_ms: None,
                    complete: true,
                })
            }
            Err(GpuError::Model(e)) => {
                *self.engine.borrow_mut() = Some(engine);
                Err(ComputeError::Input(e.to_string()))
            }
            Err(e @ GpuError::TooLong { .. }) => {
                *self.engine.borrow_mut() = Some(engine);
                Err(ComputeError::TooLong(e.to_string()))
            }
            // anything else: the engine is dropped here
            Err(e) => Err(ComputeError::Lost(e.to_string())),
        }
    }
}
