//! `LlamaGpuEngine`: the Llama family's forward pass on the GPU — RMSNorm, q/k/v projections
//! on the weights as the file stores them (`qmatmul`), RoPE, grouped-query attention,
//! SwiGLU, the residual adds, the final RMSNorm and the output head — producing the same
//! `Trace` as the CPU reference (`LlamaModel::trace`). The attention is GPT-2's own kernels
//! (`attn_scores`, `attn_softmax`, `attn_v`), each query head reading the keys and values of
//! its key/value head (`gather_heads`); the activation buffers, the readback and the
//! incremental forward (new rows only, keys and values of the old ones kept on the GPU) are
//! the GPT-2 engine's.

use attnlab_model::forward::{check_tokens, reusable_prefix};
use attnlab_model::gguf::GgmlType;
use attnlab_model::llama::{rope_table, LlamaConfig, LlamaModel};
use attnlab_model::qmatrix::{QMatrix, Storage};
use attnlab_model::{AttentionOptions, Dims, Error, Field, Keep, Trace};

use super::binds::AttentionBinds;
use super::buffers::{capacity_of, check_bindings, predicted, Activations, ACTIVATION_BUDGET};
use super::run::{execute, Profile};
use super::slim::{Output, Reading, SlimAsk, SlimRead};
use crate::context::Gpu;
use crate::error::GpuError;
use crate::step::{Bound, Heads, Step};
use crate::{
    attn_v, gather_heads, qembed, qmatmul, residual_add, rms_norm, rope, softmax_rows, swiglu,
};

/// A weight matrix on the GPU, its bytes as the file (or the Hugging Face folder) holds them.
struct Matrix {
    buffer: wgpu::Buffer,
    ty: GgmlType,
    rows: usize,
    cols: usize,
}

impl Matrix {
    fn upload(gpu: &Gpu, label: &str, m: &QMatrix) -> Result<Matrix, GpuError> {
        let (ty, bytes): (GgmlType, &[u8]) = match &m.storage {
            Storage::F32(v) => (GgmlType::F32, bytemuck::cast_slice(v)),
            Storage::Blocks { ty, bytes } => (*ty, bytes),
        };
        // refuses a type the kernels do not read, by name, and a matrix larger than a binding
        qmatmul::row_bytes(ty, m.cols).map_err(|e| GpuError::TooLarge(format!("{label}: {e}")))?;
        let max = gpu
            .limits
            .max_storage_buffer_binding_size
            .min(gpu.limits.max_buffer_size);
        if bytes.len() as u64 > max {
            return Err(GpuError::TooLarge(format!(
                "{label} takes {} bytes, the GPU binds at most {max}",
                bytes.len()
            )));
        }
        let mut padded = bytes.to_vec();
        padded.resize(bytes.len().next_multiple_of(4), 0);
        Ok(Matrix {
            buffer: gpu.storage_init(label, &padded),
            ty,
            rows: m.rows,
            cols: m.cols,
        })
    }

    /// Rows `rows` of y = x · selfᵀ (+ its bias).
    fn step<'a>(
        &self,
        b: &'a Bound,
        rows: std::ops::Range<usize>,
        bias: bool,
    ) -> Result<Step<'a>, GpuError> {
        qmatmul::step(b, rows, (self.cols, self.rows), self.ty, bias)
    }
}

/// One block's weights; a missing bias is bound as `LlamaWeights::zeros`.
struct BlockWeights {
    attn_norm: wgpu::Buffer,
    q: Matrix,
    k: Matrix,
    v: Matrix,
    o: Matrix,
    /// q, k, v, o
    bias: [Option<wgpu::Buffer>; 4],
    ffn_norm: wgpu::Buffer,
    gate: Matrix,
    up: Matrix,
    down: Matrix,
}

/// The model on the GPU, with the rotation table of every position the buffers hold.
struct LlamaWeights {
    embed: Matrix,
    blocks: Vec<BlockWeights>,
    norm: wgpu::Buffer,
    output: Option<Matrix>,
    rope: wgpu::Buffer,
    zeros: wgpu::Buffer,
}

impl LlamaWeights {
    fn upload(gpu: &Gpu, m: &LlamaModel, positions: usize) -> Result<LlamaWeights, GpuError> {
        let f = |label: &str, v: &[f32]| gpu.storage_init(label, bytemuck::cast_slice(v));
        let blocks = m
            .layers
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let mat =
                    |name: &str, w: &QMatrix| Matrix::upload(gpu, &format!("blk.{i}.{name}"), w);
                let bias = [&l.bias.q, &l.bias.k, &l.bias.v, &l.bias.o]
                    .map(|b| b.as_ref().map(|b| f(&format!("blk.{i}.bias"), b)));
                Ok(BlockWeights {
                    attn_norm: f(&format!("blk.{i}.attn_norm"), &l.attn_norm),
                    q: mat("attn_q", &l.q)?,
                    k: mat("attn_k", &l.k)?,
                    v: mat("attn_v", &l.v)?,
                    o: mat("attn_output", &l.o)?,
                    bias,
                    ffn_norm: f(&format!("blk.{i}.ffn_norm"), &l.ffn_norm),
                    gate: mat("ffn_gate", &l.gate)?,
                    up: mat("ffn_up", &l.up)?,
                    down: mat("ffn_down", &l.down)?,
                })
            })
            .collect::<Result<Vec<_>, GpuError>>()?;
        Ok(LlamaWeights {
            embed: Matrix::upload(gpu, "token_embd", &m.embed)?,
            blocks,
            norm: f("output_norm", &m.norm),
            output: m
                .output
                .as_ref()
                .map(|o| Matrix::upload(gpu, "output", o))
                .transpose()?,
            rope: f("rope", &rope_table(&m.config.inv_freq(), positions)),
            zeros: f("no bias", &[0.0; 4]),
        })
    }

    /// The output head: its own, or the embedding it is tied to.
    fn head(&self) -> &Matrix {
        self.output.as_ref().unwrap_or(&self.embed)
    }
}

/// Row-major buffers a block uses on its way and the Trace does not keep: the q, k and v
/// projections before they are split into heads, and the FFN's up projection.
struct Scratch {
    q: wgpu::Buffer,
    k: wgpu::Buffer,
    v: wgpu::Buffer,
    up: wgpu::Buffer,
}

/// One block's bind groups, in the order of its dispatches.
struct BlockBinds {
    attn_norm: Bound,
    q: Bound,
    k: Bound,
    v: Bound,
    rope_q: Bound,
    rope_k: Bound,
    gather_q: Bound,
    gather_k: Bound,
    gather_v: Bound,
    attn: AttentionBinds,
    o: Bound,
    add_attn: Bound,
    ffn_norm: Bound,
    gate: Bound,
    up: Bound,
    swiglu: Bound,
    down: Bound,
    add_ffn: Bound,
}

struct Binds {
    embed: Bound,
    blocks: Vec<BlockBinds>,
    norm: Bound,
    head: Bound,
    probs: Bound,
}

impl Binds {
    fn new(gpu: &Gpu, w: &LlamaWeights, a: &Activations, s: &Scratch) -> Binds {
        let params = &a.params;
        let r = |i: usize| &a.rows[i].buffer;
        let qm = |x, m: &Matrix, b: Option<&wgpu::Buffer>, y| {
            qmatmul::bind(
                gpu,
                params,
                qmatmul::Buffers {
                    x,
                    w: &m.buffer,
                    b: b.unwrap_or(&w.zeros),
                    y,
                },
            )
        };
        let norm = |x, g, out| rms_norm::bind(gpu, params, rms_norm::Buffers { x, g, out });
        let rot = |x| rope::bind(gpu, params, rope::Buffers { table: &w.rope, x });
        let gather = |src, dst| gather_heads::bind(gpu, params, gather_heads::Buffers { src, dst });
        let add = |a, b, out| residual_add::bind(gpu, params, residual_add::Buffers { a, b, out });
        let blocks = a
            .blocks
            .iter()
            .zip(&w.blocks)
            .map(|(bb, bw)| {
                let f = |field: Field| r(bb.row(field));
                let hb = &bb.heads;
                let [bq, bk, bv, bo] = bw.bias.each_ref().map(Option::as_ref);
                BlockBinds {
                    attn_norm: norm(f(Field::Input), &bw.attn_norm, f(Field::AttnIn)),
                    q: qm(f(Field::AttnIn), &bw.q, bq, &s.q),
                    k: qm(f(Field::AttnIn), &bw.k, bk, &s.k),
                    v: qm(f(Field::AttnIn), &bw.v, bv, &s.v),
                    rope_q: rot(&s.q),
                    rope_k: rot(&s.k),
                    gather_q: gather(&s.q, hb.get(Field::Q)),
                    gather_k: gather(&s.k, hb.get(Field::K)),
                    gather_v: gather(&s.v, hb.get(Field::V)),
                    attn: AttentionBinds::new(
                        gpu,
                        params,
                        hb,
                        f(Field::Concat),
                        (a.packed.as_ref(), a.pool.as_ref()),
                    ),
                    o: qm(f(Field::Concat), &bw.o, bo, f(Field::AttnOut)),
                    add_attn: add(f(Field::Input), f(Field::AttnOut), f(Field::ResidAttn)),
                    ffn_norm: norm(f(Field::ResidAttn), &bw.ffn_norm, f(Field::FfnIn)),
                    gate: qm(f(Field::FfnIn), &bw.gate, None, f(Field::FfnHidden)),
                    up: qm(f(Field::FfnIn), &bw.up, None, &s.up),
                    swiglu: swiglu::bind(
                        gpu,
                        params,
                        swiglu::Buffers {
                            gate: f(Field::FfnHidden),
                            up: &s.up,
                        },
                    ),
                    down: qm(f(Field::FfnHidden), &bw.down, None, f(Field::FfnOut)),
                    add_ffn: add(f(Field::ResidAttn), f(Field::FfnOut), f(Field::ResidFfn)),
                }
            })
            .collect();
        let last = a
            .blocks
            .last()
            .map_or(a.embedding, |b| b.row(Field::Output));
        let normed = r(a.ln_f.expect("a Llama model's buffers hold the final norm"));
        Binds {
            embed: qembed::bind(
                gpu,
                params,
                qembed::Buffers {
                    tokens: &a.tokens,
                    w: &w.embed.buffer,
                    out: r(a.embedding),
                },
            ),
            blocks,
            norm: norm(r(last), &w.norm, normed),
            head: qm(normed, w.head(), None, r(a.logits)),
            probs: softmax_rows::bind(
                gpu,
                params,
                softmax_rows::Buffers {
                    x: r(a.logits),
                    out: r(a.probs),
                },
            ),
        }
    }
}

/// The GPU forward pass of one Llama-family model.
pub struct LlamaGpuEngine {
    gpu: Gpu,
    config: LlamaConfig,
    dims: Dims,
    heads: Heads,
    /// Kept alive for the bind groups.
    weights: LlamaWeights,
    _scratch: Scratch,
    acts: Activations,
    binds: Binds,
    /// Tokens and options whose rows the buffers hold.
    cached: Option<(Vec<u32>, AttentionOptions)>,
    last_incremental: bool,
    last_dispatches: usize,
}

impl LlamaGpuEngine {
    /// Uploads the model (its weights as compact as in memory) and builds everything a
    /// forward needs, holding at most [`ACTIVATION_BUDGET`] bytes of activations.
    pub async fn new(model: &LlamaModel) -> Result<LlamaGpuEngine, GpuError> {
        let gpu = Gpu::new(crate::kernels::ALL).await?;
        Self::with_budget(gpu, model, ACTIVATION_BUDGET).await
    }

    /// Like `new`, on an existing device, holding at most `budget` bytes of activations (the
    /// positions the buffers hold shrink to fit, see [`capacity_of`]).
    pub async fn with_budget(
        gpu: Gpu,
        model: &LlamaModel,
        budget: u64,
    ) -> Result<LlamaGpuEngine, GpuError> {
        Self::with_keep(gpu, model, budget, Keep::All).await
    }

    /// Like `with_budget`, its forwards' Traces keeping what `keep` says: with
    /// `Keep::Streams` no (H, P, P) buffer exists and the attention is one fused kernel
    /// (`attn_fused`), so the buffers hold far more positions (SmolLM2's 8,192 need ≈ 3 GB).
    pub async fn with_keep(
        gpu: Gpu,
        model: &LlamaModel,
        budget: u64,
        keep: Keep,
    ) -> Result<LlamaGpuEngine, GpuError> {
        let c = model.config.clone();
        if c.n_head * c.head_dim != c.n_embd {
            return Err(GpuError::TooLarge(format!(
                "{} heads of {} dimensions are not the model's width {}: the GPU engine lays the heads side by side in it",
                c.n_head, c.head_dim, c.n_embd
            )));
        }
        if c.n_head > attn_v::MAX_HEADS {
            return Err(GpuError::TooLarge(format!(
                "{} heads per layer: the GPU engine switches heads off by a mask of {}",
                c.n_head,
                attn_v::MAX_HEADS
            )));
        }
        let (dims, heads) = Self::fitted(&gpu, &c, model.dims(c.context), budget, keep)?;
        let scope = gpu.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let oom = gpu.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let weights = LlamaWeights::upload(&gpu, model, heads.positions);
        if let Some(e) = oom.pop().await {
            return Err(GpuError::TooLarge(e.to_string()));
        }
        if let Some(e) = scope.pop().await {
            return Err(GpuError::Wgpu(format!("uploading the model: {e}")));
        }
        Self::assemble(gpu, c, weights?, (dims, heads), keep).await
    }

    /// The same engine, its buffers made again to keep what `keep` says within `budget` (the
    /// weights stay on the GPU as they are; the rotation table is made for the positions the
    /// new buffers hold): a long text's page switches to an engine that keeps no maps, and
    /// back. The cached rows are gone.
    pub async fn with_new_keep(self, budget: u64, keep: Keep) -> Result<LlamaGpuEngine, GpuError> {
        let LlamaGpuEngine {
            gpu,
            config,
            dims,
            mut weights,
            _scratch,
            acts,
            binds,
            ..
        } = self;
        drop((binds, acts, _scratch));
        let whole = Dims {
            t: config.context,
            ..dims
        };
        let (dims, heads) = Self::fitted(&gpu, &config, whole, budget, keep)?;
        let table = rope_table(&config.inv_freq(), heads.positions);
        weights.rope = gpu.storage_init("rope", bytemuck::cast_slice(&table));
        Self::assemble(gpu, config, weights, (dims, heads), keep).await
    }

    /// The positions the buffers of `keep` hold for a model of `whole` (its sizes over its
    /// context) within `budget` and the device's bindings (see [`capacity_of`]): its sizes
    /// there and the per-head shape, or why none fits.
    fn fitted(
        gpu: &Gpu,
        c: &LlamaConfig,
        whole: Dims,
        budget: u64,
        keep: Keep,
    ) -> Result<(Dims, Heads), GpuError> {
        let max_binding = gpu
            .limits
            .max_storage_buffer_binding_size
            .min(gpu.limits.max_buffer_size);
        let p = capacity_of(&whole, max_binding, budget, keep);
        let heads = Heads {
            count: c.n_head,
            dk: c.head_dim,
            positions: p,
        };
        check_bindings(
            heads,
            keep,
            c.vocab_size,
            &[("FFN", p * c.n_ff)],
            max_binding,
        )?;
        Ok((Dims { t: p, ..whole }, heads))
    }

    /// The scratch and activation buffers of `heads` and every bind group, around uploaded
    /// `weights`.
    async fn assemble(
        gpu: Gpu,
        c: LlamaConfig,
        weights: LlamaWeights,
        (dims, heads): (Dims, Heads),
        keep: Keep,
    ) -> Result<LlamaGpuEngine, GpuError> {
        let p = heads.positions;
        let scope = gpu.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let oom = gpu.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let kv = c.n_kv_head * c.head_dim;
        let scratch = Scratch {
            q: gpu.storage("q rows", p * c.n_head * c.head_dim),
            k: gpu.storage("k rows", p * kv),
            v: gpu.storage("v rows", p * kv),
            up: gpu.storage("ffn up", p * c.n_ff),
        };
        let acts = Activations::new(&gpu, &dims, heads, (true, 0, c.n_layer * 24 + 16), keep);
        let binds = Binds::new(&gpu, &weights, &acts, &scratch);
        if let Some(e) = oom.pop().await {
            return Err(GpuError::TooLarge(e.to_string()));
        }
        if let Some(e) = scope.pop().await {
            return Err(GpuError::Wgpu(format!("setting up the model: {e}")));
        }
        Ok(LlamaGpuEngine {
            gpu,
            config: c,
            dims,
            heads,
            weights,
            _scratch: scratch,
            acts,
            binds,
            cached: None,
            last_incremental: false,
            last_dispatches: 0,
        })
    }

    /// What the engine's forwards keep.
    pub fn keep(&self) -> Keep {
        self.acts.keep
    }

    /// The model's sizes over `t` tokens.
    pub fn dims(&self, t: usize) -> Dims {
        Dims { t, ..self.dims }
    }

    /// The adapter, e.g. "llvmpipe (Vulkan)" or a browser's WebGPU adapter.
    pub fn adapter_info(&self) -> &wgpu::AdapterInfo {
        &self.gpu.info
    }

    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// How many tokens one forward can take: the model's context, or less where the buffers
    /// for the whole context would not fit.
    pub fn capacity(&self) -> usize {
        self.heads.positions
    }

    /// How many compute dispatches the last forward recorded.
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

    /// Bytes of weights on the GPU.
    pub fn weight_bytes(&self) -> u64 {
        let w = &self.weights;
        let mats = w
            .blocks
            .iter()
            .flat_map(|b| [&b.q, &b.k, &b.v, &b.o, &b.gate, &b.up, &b.down]);
        mats.chain([&w.embed])
            .chain(&w.output)
            .map(|m| m.buffer.size())
            .sum()
    }

    /// Runs the model on `tokens`; incremental when `tokens` extends the previous call's
    /// tokens with the same options and the causal mask on.
    pub async fn forward(
        &mut self,
        tokens: &[u32],
        opts: &AttentionOptions,
    ) -> Result<Trace, GpuError> {
        Ok(self.run(tokens, opts, true, None, None).await?.0.trace())
    }

    /// `forward` for a long text's page: only what `ask` names comes back (`SlimRead`); the
    /// engine must keep no maps (`with_keep(…, Keep::Streams)`).
    pub async fn forward_slim(
        &mut self,
        tokens: &[u32],
        opts: &AttentionOptions,
        ask: &SlimAsk,
    ) -> Result<SlimRead, GpuError> {
        Ok(self
            .run(tokens, opts, true, None, Some(ask))
            .await?
            .0
            .slim())
    }

    /// Runs the model on `tokens` from scratch.
    pub async fn forward_full(
        &mut self,
        tokens: &[u32],
        opts: &AttentionOptions,
    ) -> Result<Trace, GpuError> {
        Ok(self.run(tokens, opts, false, None, None).await?.0.trace())
    }

    /// `forward` with each dispatch submitted, waited for and timed on its own (see
    /// `GpuEngine::profile`).
    pub async fn profile(
        &mut self,
        tokens: &[u32],
        opts: &AttentionOptions,
        now: &dyn Fn() -> f64,
    ) -> Result<(Trace, Profile), GpuError> {
        let (out, profile) = self.run(tokens, opts, true, Some(now), None).await?;
        Ok((
            out.trace(),
            profile.expect("a profiled forward returns its profile"),
        ))
    }

    async fn run(
        &mut self,
        tokens: &[u32],
        opts: &AttentionOptions,
        reuse: bool,
        profile: Option<&dyn Fn() -> f64>,
        slim: Option<&SlimAsk>,
    ) -> Result<(Output, Option<Profile>), GpuError> {
        let c = &self.config;
        opts.validate_for(c.n_layer, c.n_head)?;
        check_tokens(tokens, c.vocab_size)?;
        let dropped = tokens.len().saturating_sub(c.context);
        let run = &tokens[dropped..];
        let t = run.len();
        if let Some(w) = c.sliding_window.filter(|&w| t > w) {
            return Err(Error::Options(format!(
                "{t} tokens; this model's attention slides over a window of {w}, which is not read yet"
            ))
            .into());
        }
        if t > self.capacity() {
            return Err(GpuError::TooLong {
                tokens: t,
                capacity: self.capacity(),
            });
        }
        let s = self
            .cached
            .as_ref()
            .filter(|_| reuse)
            .and_then(|(prev, o)| reusable_prefix(prev, o, run, dropped, opts))
            .unwrap_or(0);
        if let Some(e) = self.gpu.take_error() {
            return Err(e);
        }
        self.cached = None;
        let steps = self.plan((s, t), opts)?;
        let blocks = self.binds.blocks.iter().map(|b| &b.attn);
        let reading = Reading::new(&self.acts, blocks, self.heads, t, slim, opts)?;
        let dispatches = steps.len() + reading.dispatches();
        let (gpu, acts, heads) = (&self.gpu, &self.acts, self.heads);
        let ran = execute(gpu, acts, heads, &steps, run, profile, reading.read()).await?;
        drop((steps, reading));
        let assemble_from = profile.map(|now| now());
        let dims = Dims { t, ..self.dims };
        let out = ran.output(&self.acts, dims, (run, dropped, opts));
        let profile = ran.profile(s > 0, profile, assemble_from);
        self.cached = Some((run.to_vec(), opts.clone()));
        self.last_incremental = s > 0;
        self.last_dispatches = dispatches;
        Ok((out, profile))
    }

    /// The dispatches of a forward over `t` tokens whose first `s` rows are cached, in the
    /// order of the block. Empty regions are left out.
    fn plan(
        &self,
        (s, t): (usize, usize),
        opts: &AttentionOptions,
    ) -> Result<Vec<Step<'_>>, GpuError> {
        let (c, b, w, heads) = (&self.config, &self.binds, &self.weights, self.heads);
        let (d, f, hd, eps) = (c.n_embd, c.n_ff, c.head_dim, c.rms_eps);
        let new = || s..t;
        let group = c.n_head / c.n_kv_head;
        let mut steps = vec![qembed::step(
            &b.embed,
            new(),
            (c.vocab_size, d),
            w.embed.ty,
        )?];
        for (li, (blk, bw)) in b.blocks.iter().zip(&w.blocks).enumerate() {
            let has = |i: usize| bw.bias[i].is_some();
            steps.extend([
                // RMSNorm, then Q, K, V = X·W (+ b): the heads side by side
                rms_norm::step(&blk.attn_norm, new(), d, eps)?,
                bw.q.step(&blk.q, new(), has(0))?,
                bw.k.step(&blk.k, new(), has(1))?,
                bw.v.step(&blk.v, new(), has(2))?,
                // each new row's q and k turned by its position's angles
                rope::step(&blk.rope_q, new(), (c.n_head, hd), 0, c.rope_pairs)?,
                rope::step(&blk.rope_k, new(), (c.n_kv_head, hd), 0, c.rope_pairs)?,
                // per head; a query head reads the keys and values of its key/value head
                gather_heads::step(&blk.gather_q, new(), heads, 1)?,
                gather_heads::step(&blk.gather_k, new(), heads, group)?,
                gather_heads::step(&blk.gather_v, new(), heads, group)?,
            ]);
            // QKᵀ, ÷√d_k, mask, softmax, weights · V (or all of it fused)
            steps.extend(blk.attn.steps(li, heads, (s, t), opts)?);
            steps.extend([
                bw.o.step(&blk.o, new(), has(3))?,
                residual_add::step(&blk.add_attn, new(), d)?,
                // RMSNorm, then SwiGLU: down(SiLU(gate(x)) · up(x))
                rms_norm::step(&blk.ffn_norm, new(), d, eps)?,
                bw.gate.step(&blk.gate, new(), false)?,
                bw.up.step(&blk.up, new(), false)?,
                swiglu::step(&blk.swiglu, s * f..t * f)?,
                bw.down.step(&blk.down, new(), false)?,
                residual_add::step(&blk.add_ffn, new(), d)?,
            ]);
        }
        steps.push(rms_norm::step(&b.norm, new(), d, eps)?);
        // the head and the softmax: the new rows', or the last one's alone (into row 0) for a
        // Trace that keeps no more
        let (rows, shift) = predicted(self.acts.keep, (s, t));
        let head = w.head();
        let out = rows.start - shift..rows.end - shift;
        steps.push(qmatmul::step_shifted(
            &b.head,
            rows,
            (head.cols, head.rows),
            head.ty,
            false,
            shift,
        )?);
        steps.push(softmax_rows::step_rows(&b.probs, out, c.vocab_size)?);
        for (li, blk) in b.blocks.iter().enumerate() {
            steps.extend(blk.attn.pack(li, heads, t)?);
        }
        steps.retain(|s| !s.is_empty());
        Ok(steps)
    }
}
