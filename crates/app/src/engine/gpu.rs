//! The GPU backend: the WebGPU engine of `attnlab-gpu` for the model's architecture (GPT-2's
//! or the Llama family's), its errors sorted into what the policy in `engine` needs to know,
//! and whether its adapter is a software one.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use attnlab_gpu::attn_pool::Pooling;
use attnlab_gpu::engine::{SlimAsk, ACTIVATION_BUDGET, LONG_TEXT_BUDGET};
use attnlab_gpu::{AnyEngine, GpuEngine, GpuError, LlamaGpuEngine};
use attnlab_model::llama::LlamaModel;
use attnlab_model::{AttentionOptions, Keep, Pooled, Trace};

use super::{Compute, ComputeError, Computed, CpuWhy, GpuSide, Slim, THUMBNAIL_SIDE};
use crate::dom::now;

pub struct Gpu {
    /// Out while a forward is in flight.
    engine: RefCell<Option<AnyEngine>>,
    lose: Cell<bool>,
    /// A long text's rows pooled for the heads grid (slim results), grown with the engine's.
    pooled: RefCell<Pooled>,
    /// The last forward's result when it was slim (shared with the page): the next slim
    /// result keeps its heads' shared rows when that forward went on from it.
    slim_prev: RefCell<Option<Rc<Trace>>>,
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
                pooled: RefCell::new(Pooled::new(THUMBNAIL_SIDE)),
                slim_prev: RefCell::new(None),
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

impl Gpu {
    /// A long text's slim result (`Trace::slim_from`): `heads`' maps from their vectors (the
    /// rows shared with `earlier`, the last slim result, kept from it when the forward went
    /// on from that run: a keystroke at the end computes the head's last rows, not T × T),
    /// the heads grid's thumbnails and roles from the rows the engine pooled (only those the
    /// pooled rows lack: a keystroke at the end pools one row of every head).
    async fn slim(
        &self,
        engine: &mut AnyEngine,
        ids: &[u32],
        opts: &AttentionOptions,
        heads: &[(usize, usize)],
        earlier: Option<Rc<Trace>>,
    ) -> Result<Trace, GpuError> {
        let dims = engine.dims(ids.len());
        let shape = (dims.n_layer, dims.n_head);
        let plan = self.pooled.borrow().plan(ids, opts, shape);
        let ask = SlimAsk {
            heads: heads.to_vec(),
            pool: plan.ok().map(|(rows, span)| {
                let side = THUMBNAIL_SIDE;
                (rows, Pooling { span, side })
            }),
        };
        let read = engine.forward_slim(ids, opts, &ask).await?;
        let mut pooled = self.pooled.borrow_mut();
        pooled.update_pooled(ids, opts, shape, &read.pooled)?;
        let meta = (ids, 0, opts);
        let earlier = earlier.filter(|_| engine.last_was_incremental());
        let preds = (read.logits, read.probs);
        let mut trace = Trace::slim_from(dims, meta, preds, read.heads, earlier.as_deref())?;
        trace.thumbnails = Some(pooled.thumbnails());
        Ok(trace)
    }
}

impl Compute for Gpu {
    async fn forward(
        &self,
        ids: &[u32],
        opts: &AttentionOptions,
        slim: Slim<'_>,
    ) -> Result<Computed, ComputeError> {
        let Some(mut engine) = self.engine.borrow_mut().take() else {
            return Err(ComputeError::Lost("the GPU engine is busy or gone".into()));
        };
        if self.lose.replace(false) {
            engine.gpu().device.destroy();
        }
        let started = now();
        // whatever this run gives, the earlier slim result is no longer the last one
        let earlier = self.slim_prev.take();
        // a long text's engine keeps no maps (and holds far more positions); a short text's
        // keeps them all: the buffers are made again when the text crosses over
        let (keep, budget) = if slim.is_some() {
            (Keep::Streams, LONG_TEXT_BUDGET)
        } else {
            (Keep::All, ACTIVATION_BUDGET)
        };
        if engine.keep() != keep {
            engine = match engine.with_new_keep(budget, keep).await {
                Ok(e) => e,
                Err(e) => return Err(ComputeError::Lost(e.to_string())),
            };
            *self.pooled.borrow_mut() = Pooled::new(THUMBNAIL_SIDE);
        }
        let result = match slim {
            Some(heads) => self.slim(&mut engine, ids, opts, heads, earlier).await,
            None => engine.forward(ids, opts).await,
        };
        let ms = now() - started;
        let incremental = engine.last_was_incremental();
        match result {
            Ok(trace) => {
                *self.engine.borrow_mut() = Some(engine);
                let trace = Rc::new(trace);
                if slim.is_some() {
                    *self.slim_prev.borrow_mut() = Some(Rc::clone(&trace));
                }
                Ok(Computed {
                    trace,
                    incremental,
                    ms,
                    engine_ms: None,
                    complete: slim.is_none(),
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
