//! `GpuEngine`: the whole forward pass on the GPU, producing the same `Trace` as the CPU
//! reference. Split by job:
//!
//! - [`buffers`]: the weights on the GPU and every activation buffer, sized once for the
//!   context (`capacity`) and reused; fields the model's `TraceLayout` calls shared get one
//!   buffer;
//! - [`binds`]: the bind groups of every kernel of every block, made once;
//! - [`plan`]: the dispatches of one forward, in the order of the block;
//! - [`readback`]: the copies into one staging buffer and the Trace cut out of it;
//! - [`run`]: one forward's submission and readback, and its [`Profile`];
//! - [`slim`]: what a page's long text reads back instead of the Trace ([`SlimAsk`],
//!   [`SlimRead`]), with every head's rows pooled for the heads grid (`attn_pool`);
//! - [`llama`]: the Llama family's engine, [`LlamaGpuEngine`], on the same buffers,
//!   readback and submission.
//!
//! A forward writes the token ids and one block of uniform params, records every dispatch in
//! one compute pass, copies what the Trace needs into the staging buffer, submits once and
//! maps once. Per-head matrices live with a row stride of the capacity, so that an
//! incremental forward (the user typed at the end) computes only the new rows and leaves the
//! cached ones in place.
//!
//! An engine made to keep no maps (`with_keep(…, Keep::Streams)`, both architectures) has no
//! (H, P, P) buffer: its attention is one fused kernel (`attn_fused`, an online softmax), the
//! row fields the Trace does not keep are one buffer for every block, the output head runs
//! for the last row, its readback copies what `Keep::Streams` keeps, and a head's maps are
//! computed from the q and k it returns (`Trace::head_rows`). Its `forward_slim` reads back
//! only what a page shows of a long text (`slim`); `with_new_keep` makes an engine's buffers
//! again for the other `Keep`, the weights staying where they are.

mod binds;
mod buffers;
mod llama;
mod plan;
mod readback;
mod run;
mod slim;

use attnlab_model::forward::{prepare, reusable_prefix};
use attnlab_model::{AttentionOptions, Config, Dims, Keep, Model, Trace};

use crate::context::Gpu;
use crate::error::GpuError;
use crate::step::Heads;
use crate::{attn_v, linear};
use binds::Binds;
pub use buffers::{capacity, capacity_of, ACTIVATION_BUDGET, LONG_TEXT_BUDGET};
use buffers::{check_bindings, Activations, Weights};
pub use llama::LlamaGpuEngine;
use run::execute;
pub use run::Profile;
use slim::{Output, Reading};
pub use slim::{SlimAsk, SlimRead};

/// The GPU forward pass of one model.
pub struct GpuEngine {
    gpu: Gpu,
    config: Config,
    /// The per-head shape; `positions` is how many positions the buffers hold (the model's
    /// context, or less for big models).
    heads: Heads,
    /// Kept alive for the bind groups.
    _weights: Weights,
    acts: Activations,
    binds: Binds,
    /// Tokens and options whose rows the buffers hold.
    cached: Option<(Vec<u32>, AttentionOptions)>,
    last_incremental: bool,
    /// Compute dispatches the last forward recorded.
    last_dispatches: usize,
    /// Whether many rows go to the tiled matrix kernel (`linear::tile_from`; not on an
    /// adapter that runs on the CPU).
    tiled: bool,
}

impl GpuEngine {
    /// Uploads the model and builds everything a forward needs.
    pub async fn new(model: &Model) -> Result<GpuEngine, GpuError> {
        let gpu = Gpu::new(crate::kernels::ALL).await?;
        Self::with_gpu(gpu, model).await
    }

    /// Like `new`, on an existing device.
    pub async fn with_gpu(gpu: Gpu, model: &Model) -> Result<GpuEngine, GpuError> {
        Self::with_budget(gpu, model, ACTIVATION_BUDGET).await
    }

    /// Like `with_gpu`, holding at most `budget` bytes of activations (the context the buffers
    /// hold shrinks to fit, see [`capacity`]).
    pub async fn with_budget(gpu: Gpu, model: &Model, budget: u64) -> Result<GpuEngine, GpuError> {
        Self::with_keep(gpu, model, budget, Keep::All).await
    }

    /// Like `with_budget`, its forwards' Traces keeping what `keep` says: with
    /// `Keep::Streams` no (H, P, P) buffer exists and the attention is one fused kernel
    /// (`attn_fused`), so a GPT-2-sized model holds its whole context of 1,024.
    pub async fn with_keep(
        gpu: Gpu,
        model: &Model,
        budget: u64,
        keep: Keep,
    ) -> Result<GpuEngine, GpuError> {
        let c = model.config.clone();
        let heads = Self::fitted(&gpu, &c, budget, keep)?;
        let scope = gpu.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let oom = gpu.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let weights = Weights::upload(&gpu, model);
        if let Some(e) = oom.pop().await {
            return Err(GpuError::TooLarge(e.to_string()));
        }
        if let Some(e) = scope.pop().await {
            return Err(GpuError::Wgpu(format!("uploading the model: {e}")));
        }
        Self::assemble(gpu, c, weights, heads, keep).await
    }

    /// The same engine, its buffers made again to keep what `keep` says within `budget` (the
    /// weights stay on the GPU as they are): a long text's page switches to an engine that
    /// keeps no maps, and back. The cached rows are gone.
    pub async fn with_new_keep(self, budget: u64, keep: Keep) -> Result<GpuEngine, GpuError> {
        let GpuEngine {
            gpu,
            config,
            _weights: weights,
            acts,
            binds,
            tiled,
            ..
        } = self;
        drop((binds, acts));
        let heads = Self::fitted(&gpu, &config, budget, keep)?;
        let mut engine = Self::assemble(gpu, config, weights, heads, keep).await?;
        engine.tiled = tiled;
        Ok(engine)
    }

    /// What keeps the buffers of `keep`: the per-head shape at the positions that fit
    /// `budget` and the device's bindings (see [`capacity`]), or why none does.
    fn fitted(gpu: &Gpu, c: &Config, budget: u64, keep: Keep) -> Result<Heads, GpuError> {
        let max_binding = gpu
            .limits
            .max_storage_buffer_binding_size
            .min(gpu.limits.max_buffer_size);
        let p = capacity(c, max_binding, budget, keep);
        let heads = Heads {
            count: c.n_head,
            dk: c.d_k(),
            positions: p,
        };
        let sizes = [("wte", c.vocab_size * c.n_embd), ("FFN", p * c.d_ff())];
        check_bindings(heads, keep, c.vocab_size, &sizes, max_binding)?;
        if c.n_head > attn_v::MAX_HEADS {
            return Err(GpuError::TooLarge(format!(
                "{} heads per layer: the GPU engine switches heads off by a mask of {}",
                c.n_head,
                attn_v::MAX_HEADS
            )));
        }
        Ok(heads)
    }

    /// The activation buffers of `heads` and every bind group, around uploaded `weights`.
    async fn assemble(
        gpu: Gpu,
        c: Config,
        weights: Weights,
        heads: Heads,
        keep: Keep,
    ) -> Result<GpuEngine, GpuError> {
        let scope = gpu.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let oom = gpu.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let acts = Activations::new(
            &gpu,
            &Dims::new(&c, heads.positions),
            heads,
            (weights.ln_f.is_some(), 3 * c.n_embd, c.n_layer * 17 + 16),
            keep,
        );
        let binds = Binds::new(&gpu, &c, &weights, &acts);
        if let Some(e) = oom.pop().await {
            return Err(GpuError::TooLarge(e.to_string()));
        }
        if let Some(e) = scope.pop().await {
            return Err(GpuError::Wgpu(format!("setting up the model: {e}")));
        }
        let tiled = !gpu.runs_on_cpu();
        Ok(GpuEngine {
            gpu,
            config: c,
            heads,
            _weights: weights,
            acts,
            binds: binds?,
            cached: None,
            last_incremental: false,
            last_dispatches: 0,
            tiled,
        })
    }

    /// What the engine's forwards keep.
    pub fn keep(&self) -> Keep {
        self.acts.keep
    }

    /// The model's sizes over `t` tokens.
    pub fn dims(&self, t: usize) -> Dims {
        Dims::new(&self.config, t)
    }

    /// Whether forwards of many rows use the tiled matrix kernel (the default on a GPU) or
    /// the row kernel (the default on an adapter that runs on the CPU); for tests and
    /// benchmarks of both.
    pub fn set_tiled_linear(&mut self, tiled: bool) {
        self.tiled = tiled;
    }

    /// Whether forwards of many rows use the tiled matrix kernel.
    pub fn tiled_linear(&self) -> bool {
        self.tiled
    }

    /// The adapter, e.g. "llvmpipe (Vulkan)" or a browser's WebGPU adapter.
    pub fn adapter_info(&self) -> &wgpu::AdapterInfo {
        &self.gpu.info
    }

    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// How many compute dispatches the last forward recorded (copies not counted).
    pub fn last_dispatches(&self) -> usize {
        self.last_dispatches
    }

    /// Whether the last forward reused cached rows.
    pub fn last_was_incremental(&self) -> bool {
        self.last_incremental
    }

    /// Forgets the cached rows: the next forward is a full one.
    pub fn clear_cache(&mut self) {
        self.cached = None;
    }

    /// Destroys the device (for tests of the CPU fallback): every later call fails.
    pub fn destroy_device(&self) {
        self.gpu.device.destroy();
    }

    /// Runs the model on `tokens`; incremental when `tokens` extends the previous call's
    /// tokens with the same options and the causal mask on.
    pub async fn forward(
        &mut self,
        tokens: &[u32],
        opts: &AttentionOptions,
    ) -> Result<Trace, GpuError> {
        let (run, dropped, s) = self.start(tokens, opts, true)?;
        Ok(self
            .forward_from(run, dropped, opts, s, None, None)
            .await?
            .0
            .trace())
    }

    /// `forward` for a long text's page: only what `ask` names comes back (`SlimRead`); the
    /// engine must keep no maps (`with_keep(…, Keep::Streams)`).
    pub async fn forward_slim(
        &mut self,
        tokens: &[u32],
        opts: &AttentionOptions,
        ask: &SlimAsk,
    ) -> Result<SlimRead, GpuError> {
        let (run, dropped, s) = self.start(tokens, opts, true)?;
        let out = self
            .forward_from(run, dropped, opts, s, None, Some(ask))
            .await?;
        Ok(out.0.slim())
    }

    /// Runs the model on `tokens` from scratch.
    pub async fn forward_full(
        &mut self,
        tokens: &[u32],
        opts: &AttentionOptions,
    ) -> Result<Trace, GpuError> {
        let (run, dropped, _) = self.start(tokens, opts, false)?;
        Ok(self
            .forward_from(run, dropped, opts, 0, None, None)
            .await?
            .0
            .trace())
    }

    /// Runs `forward` (incremental where it would be) with every dispatch submitted and
    /// waited for on its own, then the readback, each timed with `now` (milliseconds, the
    /// caller's clock: `Instant` natively, `performance.now()` in a browser). For finding
    /// where the time goes on an adapter; the Trace is the one `forward` returns.
    pub async fn profile(
        &mut self,
        tokens: &[u32],
        opts: &AttentionOptions,
        now: &dyn Fn() -> f64,
    ) -> Result<(Trace, Profile), GpuError> {
        let (run, dropped, s) = self.start(tokens, opts, true)?;
        let (out, profile) = self
            .forward_from(run, dropped, opts, s, Some(now), None)
            .await?;
        Ok((
            out.trace(),
            profile.expect("a profiled forward returns its profile"),
        ))
    }

    /// The tokens a forward runs (the context's last ones), how many were dropped in front,
    /// and how many leading rows the buffers already hold (0 unless `reuse`).
    fn start<'t>(
        &self,
        tokens: &'t [u32],
        opts: &AttentionOptions,
        reuse: bool,
    ) -> Result<(&'t [u32], usize, usize), GpuError> {
        let (run, dropped) = prepare(&self.config, tokens, opts)?;
        self.fits(run.len())?;
        let s = self
            .cached
            .as_ref()
            .filter(|_| reuse)
            .and_then(|(t, o)| reusable_prefix(t, o, run, dropped, opts))
            .unwrap_or(0);
        Ok((run, dropped, s))
    }

    /// How many tokens one forward can take: the model's context, or less where the GPU
    /// buffers for the full context would not fit (see [`capacity`]).
    pub fn capacity(&self) -> usize {
        self.heads.positions
    }

    fn fits(&self, t: usize) -> Result<(), GpuError> {
        if t > self.capacity() {
            return Err(GpuError::TooLong {
                tokens: t,
                capacity: self.capacity(),
            });
        }
        Ok(())
    }

    /// One forward of `run` whose first `s` rows are cached. With `profile`, each dispatch
    /// is submitted and waited for on its own and timed, then the readback.
    async fn forward_from(
        &mut self,
        run: &[u32],
        dropped: usize,
        opts: &AttentionOptions,
        s: usize,
        profile: Option<&dyn Fn() -> f64>,
        slim: Option<&SlimAsk>,
    ) -> Result<(Output, Option<Profile>), GpuError> {
        if let Some(e) = self.gpu.take_error() {
            return Err(e);
        }
        self.cached = None;
        let t = run.len();
        let steps = plan::forward(
            &self.binds,
            &self.config,
            self.heads,
            (s, t),
            opts,
            (linear::tile_from(self.tiled), self.acts.keep),
        )?;
        let blocks = self.binds.blocks.iter().map(|b| &b.attn);
        let reading = Reading::new(&self.acts, blocks, self.heads, t, slim, opts)?;
        let dispatches = steps.len() + reading.dispatches();
        let (gpu, acts, heads) = (&self.gpu, &self.acts, self.heads);
        let ran = execute(gpu, acts, heads, &steps, run, profile, reading.read()).await?;
        drop((steps, reading));
        let assemble_from = profile.map(|now| now());
        let dims = Dims::new(&self.config, t);
        let out = ran.output(&self.acts, dims, (run, dropped, opts));
        let profile = ran.profile(s > 0, profile, assemble_from);
        self.cached = Some((run.to_vec(), opts.clone()));
        self.last_incremental = s > 0;
        self.last_dispatches = dispatches;
        Ok((out, profile))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use attnlab_model::LnPlacement;

    fn gpt2_small() -> Config {
        Config {
            n_embd: 768,
            n_head: 12,
            n_layer: 12,
            n_positions: 1024,
            vocab_size: 50257,
            layer_norm_epsilon: 1e-5,
            n_inner: None,
            activation_function: Default::default(),
            ln_placement: LnPlacement::Pre,
            scale_embedding: false,
        }
    }

    #[test]
    fn the_bundled_model_keeps_its_context_and_gpt2_gets_a_smaller_one() {
        let bundled = Config::bundled(4000);
        assert_eq!(
            capacity(&bundled, 128 << 20, ACTIVATION_BUDGET, Keep::All),
            bundled.n_positions
        );
        let gpt2 = gpt2_small();
        let cap = capacity(&gpt2, 128 << 20, ACTIVATION_BUDGET, Keep::All);
        assert!((16..1024).contains(&cap) && cap.is_power_of_two(), "{cap}");
        // the largest single buffer (the packed heads) fits a 128 MiB binding
        let packed = 4 * 12 * 4 * 12 * cap * (64 + cap);
        assert!(packed <= 128 << 20, "{packed}");
        // a larger budget and binding limit give more positions, never more than the context
        assert!(capacity(&gpt2, 1 << 40, 1 << 40, Keep::All) == 1024);
        assert!(capacity(&gpt2, 1 << 40, 4 << 30, Keep::All) > cap);
        // without the maps no buffer grows with T², the rows no Trace keeps are one buffer
        // for every block, and the logits one row: the whole context in the same budget
        let lean = capacity(&gpt2, 128 << 20, ACTIVATION_BUDGET, Keep::Streams);
        assert_eq!((cap, lean), (128, 1024));
        // tiny models stop at the context
        let mut tiny = gpt2;
        tiny.n_positions = 8;
        assert_eq!(capacity(&tiny, 1, 1, Keep::All), 8);
    }
}
