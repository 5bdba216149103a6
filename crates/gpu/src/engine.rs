//! `GpuEngine`: the whole forward pass on the GPU, producing the same `Trace` as the CPU
//! reference.
//!
//! Pipelines and bind groups are made once; every buffer is sized for the full context and
//! reused. A forward writes the token ids and one block of uniform params, records every
//! dispatch in one compute pass, copies what the Trace needs into one staging buffer, submits
//! once and maps once. Per-head matrices live with a row stride of the capacity (n_positions, or less for big models), so that an
//! incremental forward (the user typed at the end) can compute only the new rows and leave
//! the cached ones in place.

use attnlab_model::forward::{prepare, reusable_prefix};
use attnlab_model::{AttentionOptions, Config, Dims, LayerTrace, LnPlacement, Model, Trace};
use bytemuck::Pod;

use crate::context::{Gpu, SLOT};
use crate::error::GpuError;
use crate::{
    add_layernorm, attn_scores, attn_v, embed, layernorm, linear, linear_rows, pack_scores,
    softmax_rows, split_heads,
};

/// At most this many bytes of activation, trace and readback buffers (weights not counted).
pub const ACTIVATION_BUDGET: u64 = 1 << 30;

/// How many positions the engine's buffers hold for `c`: the model's context `n_positions`,
/// halved until the buffers of that many positions — activations, the per-head matrices, their
/// packed copy and the readback buffer — take at most `budget` bytes and none is larger than
/// `max_binding`. Never below 16 (or the context, if smaller). A bundled-size model keeps its
/// whole context; GPT-2 (1024 positions, 12 × 12 heads) gets fewer.
pub fn capacity(c: &Config, max_binding: u64, budget: u64) -> usize {
    let (l, d, h, dk, f, v) = (
        c.n_layer as u64,
        c.n_embd as u64,
        c.n_head as u64,
        c.d_k() as u64,
        c.d_ff() as u64,
        c.vocab_size as u64,
    );
    // floats per position of the row-major buffers (at most 10 d-wide + qkv + hidden per
    // layer, embedding, ln_f, logits, probs), and of the per-head matrices at p positions
    let rows = l * (10 * d + 3 * d + f) + 2 * d + 2 * v;
    let heads = |p: u64| l * 4 * h * p * (dk + p);
    let fits = |p: u64| {
        // activations + heads, the packed copy of the heads, and a readback of both
        let total = 4 * (rows * p + heads(p) + heads(p) + (rows * p + heads(p)));
        let largest = 4 * [h * p * p, p * v, p * f, heads(p)]
            .into_iter()
            .max()
            .unwrap_or(0);
        total <= budget && largest <= max_binding
    };
    let floor = c.n_positions.min(16) as u64;
    let mut p = c.n_positions as u64;
    while p > floor && !fits(p) {
        p = (p / 2).max(floor);
    }
    p as usize
}

/// Row-major activation buffers of one block, as indices into `GpuEngine::rows`.
/// Post-LN and pre-LN share buffers where the Trace fields are the same tensor.
#[derive(Clone, Copy)]
struct LayerRows {
    input: usize,
    attn_in: usize,
    qkv: usize,
    concat: usize,
    attn_out: usize,
    resid_attn: usize,
    ln_1: usize,
    ffn_in: usize,
    ffn_hidden: usize,
    ffn_out: usize,
    resid_ffn: usize,
    ln_2: usize,
    output: usize,
}

/// Per-head buffers of one block: q, k, v, head_out (H, P, Dk); scores, scaled, masked,
/// weights (H, P, P).
struct LayerHeads {
    q: wgpu::Buffer,
    k: wgpu::Buffer,
    v: wgpu::Buffer,
    head_out: wgpu::Buffer,
    scores: wgpu::Buffer,
    scaled: wgpu::Buffer,
    masked: wgpu::Buffer,
    weights: wgpu::Buffer,
}

/// A block's bind groups, in the order of its dispatches.
struct LayerBinds {
    /// pre-LN layer 0 only: LN(embedding); later layers' LN comes from the previous add_ln_2
    ln_pre: Option<wgpu::BindGroup>,
    qkv: wgpu::BindGroup,
    split: wgpu::BindGroup,
    scores: wgpu::BindGroup,
    softmax: wgpu::BindGroup,
    attn_v: wgpu::BindGroup,
    proj: wgpu::BindGroup,
    /// x + attention, then LN: ln_1 (post) or the FFN's input LN (pre)
    add_ln_1: wgpu::BindGroup,
    fc: wgpu::BindGroup,
    fc_proj: wgpu::BindGroup,
    /// stream + FFN, then LN: ln_2 (post), or the next block's ln_1 or ln_f (pre)
    add_ln_2: wgpu::BindGroup,
    /// the four score matrices → packed
    pack: wgpu::BindGroup,
}

/// The GPU forward pass of one model.
pub struct GpuEngine {
    /// How many positions the buffers hold (the model's context, or less for big models).
    capacity: usize,
    gpu: Gpu,
    config: Config,
    _weights: Vec<wgpu::Buffer>,
    tokens: wgpu::Buffer,
    params: wgpu::Buffer,
    slots: usize,
    rows: Vec<(wgpu::Buffer, usize)>,
    embedding: usize,
    layer_rows: Vec<LayerRows>,
    heads: Vec<LayerHeads>,
    ln_f: Option<usize>,
    logits: usize,
    probs: usize,
    packed: wgpu::Buffer,
    staging: wgpu::Buffer,
    embed_bind: wgpu::BindGroup,
    layer_binds: Vec<LayerBinds>,
    ln_f_bind: Option<wgpu::BindGroup>,
    lm_head_bind: wgpu::BindGroup,
    probs_bind: wgpu::BindGroup,
    /// Tokens and options whose rows the buffers hold.
    cached: Option<(Vec<u32>, AttentionOptions)>,
    last_incremental: bool,
    /// Compute dispatches the last forward recorded.
    last_dispatches: usize,
}

fn bytes(v: &[f32]) -> &[u8] {
    bytemuck::cast_slice(v)
}

/// Workgroups to cover `a` items with `b` per group (`b`: a kernel's `WG` dimension).
fn div(a: usize, b: u32) -> u32 {
    a.div_ceil(b as usize) as u32
}

/// The kernel and grid for a linear layer over `rows` rows and `cols` outputs: the per-row
/// kernel for the few rows a keystroke adds, the tiled one otherwise.
fn linear_kernel(rows: usize, cols: usize) -> (&'static str, [u32; 3]) {
    if rows <= linear_rows::MAX_ROWS {
        (
            linear_rows::NAME,
            [
                div(cols, linear_rows::WG[0]),
                div(rows, linear_rows::MAX_ROWS as u32),
                1,
            ],
        )
    } else {
        (
            linear::NAME,
            [div(cols, linear::WG[0]), div(rows, linear::WG[1]), 1],
        )
    }
}

/// One recorded dispatch.
struct Dispatch<'a> {
    kernel: &'static str,
    bind: &'a wgpu::BindGroup,
    groups: [u32; 3],
}

/// Dispatches and their params, in order.
struct Plan<'a> {
    steps: Vec<Dispatch<'a>>,
    params: Vec<u8>,
}

impl<'a> Plan<'a> {
    fn push<P: Pod>(
        &mut self,
        kernel: &'static str,
        bind: &'a wgpu::BindGroup,
        p: P,
        groups: [u32; 3],
    ) {
        if groups.contains(&0) {
            return; // an empty region
        }
        let mut slot = bytemuck::bytes_of(&p).to_vec();
        slot.resize(SLOT as usize, 0);
        self.params.extend_from_slice(&slot);
        self.steps.push(Dispatch {
            kernel,
            bind,
            groups,
        });
    }
}

impl GpuEngine {
    /// Uploads the model and builds everything a forward needs.
    pub async fn new(model: &Model) -> Result<GpuEngine, GpuError> {
        let gpu = Gpu::new().await?;
        Self::with_gpu(gpu, model).await
    }

    /// Like `new`, on an existing device.
    pub async fn with_gpu(gpu: Gpu, model: &Model) -> Result<GpuEngine, GpuError> {
        Self::with_budget(gpu, model, ACTIVATION_BUDGET).await
    }

    /// Like `with_gpu`, holding at most `budget` bytes of activations (the context the buffers
    /// hold shrinks to fit, see [`capacity`]).
    pub async fn with_budget(gpu: Gpu, model: &Model, budget: u64) -> Result<GpuEngine, GpuError> {
        let c = model.config.clone();
        let max_binding = gpu
            .limits
            .max_storage_buffer_binding_size
            .min(gpu.limits.max_buffer_size);
        let capacity = capacity(&c, max_binding, budget);
        let (p, d, h, dk, f, v) = (
            capacity,
            c.n_embd,
            c.n_head,
            c.d_k(),
            c.d_ff(),
            c.vocab_size,
        );
        let post = c.ln_placement == LnPlacement::Post;
        for (what, n) in [
            ("wte", v * d),
            ("logits", p * v),
            ("attention", h * p * p),
            ("FFN", p * f),
        ] {
            if (n * 4) as u64 > max_binding {
                return Err(GpuError::TooLarge(format!(
                    "{what} needs {} bytes, the GPU binds at most {max_binding}",
                    n * 4
                )));
            }
        }
        let scope = gpu.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let oom = gpu.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let w = &model.weights;
        let mut weights = Vec::new();
        let mut upload = |label: &str, data: &[f32]| {
            weights.push(gpu.storage_init(label, bytes(data)));
            weights.len() - 1
        };
        let wte = upload("wte", &w.wte);
        let wpe = upload("wpe", &w.wpe);
        let zero_bias = upload("no bias", &[0.0; 4]);
        let mut lw = Vec::new();
        for (i, l) in w.layers.iter().enumerate() {
            lw.push([
                upload(&format!("h.{i}.ln_1.weight"), &l.ln_1_g),
                upload(&format!("h.{i}.ln_1.bias"), &l.ln_1_b),
                upload(&format!("h.{i}.attn.c_attn.weight"), &l.c_attn_w),
                upload(&format!("h.{i}.attn.c_attn.bias"), &l.c_attn_b),
                upload(&format!("h.{i}.attn.c_proj.weight"), &l.c_proj_w),
                upload(&format!("h.{i}.attn.c_proj.bias"), &l.c_proj_b),
                upload(&format!("h.{i}.ln_2.weight"), &l.ln_2_g),
                upload(&format!("h.{i}.ln_2.bias"), &l.ln_2_b),
                upload(&format!("h.{i}.mlp.c_fc.weight"), &l.fc_w),
                upload(&format!("h.{i}.mlp.c_fc.bias"), &l.fc_b),
                upload(&format!("h.{i}.mlp.c_proj.weight"), &l.fc_proj_w),
                upload(&format!("h.{i}.mlp.c_proj.bias"), &l.fc_proj_b),
            ]);
        }
        let ln_f_w = w
            .ln_f
            .as_ref()
            .map(|(g, b)| (upload("ln_f.weight", g), upload("ln_f.bias", b)));

        // activations
        let mut rows: Vec<(wgpu::Buffer, usize)> = Vec::new();
        let mut act = |label: String, width: usize| {
            rows.push((gpu.storage(&label, p * width), width));
            rows.len() - 1
        };
        let embedding = act("embedding".into(), d);
        let mut layer_rows = Vec::new();
        let mut input = embedding;
        for i in 0..c.n_layer {
            let attn_in = if post {
                input
            } else {
                act(format!("h.{i}.attn_in"), d)
            };
            let qkv = act(format!("h.{i}.qkv"), 3 * d);
            let concat = act(format!("h.{i}.concat"), d);
            let attn_out = act(format!("h.{i}.attn_out"), d);
            let resid_attn = act(format!("h.{i}.resid_attn"), d);
            let ln_1 = if post {
                act(format!("h.{i}.ln_1"), d)
            } else {
                attn_in
            };
            let ffn_in = if post {
                ln_1
            } else {
                act(format!("h.{i}.ffn_in"), d)
            };
            let ffn_hidden = act(format!("h.{i}.ffn_hidden"), f);
            let ffn_out = act(format!("h.{i}.ffn_out"), d);
            let resid_ffn = act(format!("h.{i}.resid_ffn"), d);
            let ln_2 = if post {
                act(format!("h.{i}.ln_2"), d)
            } else {
                ffn_in
            };
            let output = if post { ln_2 } else { resid_ffn };
            layer_rows.push(LayerRows {
                input,
                attn_in,
                qkv,
                concat,
                attn_out,
                resid_attn,
                ln_1,
                ffn_in,
                ffn_hidden,
                ffn_out,
                resid_ffn,
                ln_2,
                output,
            });
            input = output;
        }
        let ln_f = ln_f_w.map(|_| act("ln_f".into(), d));
        let logits = act("logits".into(), v);
        let probs = act("probs".into(), v);
        let heads: Vec<LayerHeads> = (0..c.n_layer)
            .map(|i| LayerHeads {
                q: gpu.storage(&format!("h.{i}.q"), h * p * dk),
                k: gpu.storage(&format!("h.{i}.k"), h * p * dk),
                v: gpu.storage(&format!("h.{i}.v"), h * p * dk),
                head_out: gpu.storage(&format!("h.{i}.head_out"), h * p * dk),
                scores: gpu.storage(&format!("h.{i}.scores"), h * p * p),
                scaled: gpu.storage(&format!("h.{i}.scaled"), h * p * p),
                masked: gpu.storage(&format!("h.{i}.masked"), h * p * p),
                weights: gpu.storage(&format!("h.{i}.weights"), h * p * p),
            })
            .collect();
        // the readback holds each layer's four (H, T, Dk) and four (H, T, T) matrices; the
        // latter are packed on the GPU first
        let packed_floats = c.n_layer * 4 * h * p * (dk + p);
        let packed = gpu.storage("packed scores", c.n_layer * 4 * h * p * p);
        let mut distinct: Vec<usize> =
            Self::readback_rows(&layer_rows, embedding, ln_f, logits, probs);
        distinct.dedup();
        let staging_bytes =
            (distinct.iter().map(|&i| rows[i].1 * p).sum::<usize>() + packed_floats) * 4;
        let staging = gpu.staging("trace readback", staging_bytes as u64);
        let tokens = gpu.storage("tokens", p);
        let slots = c.n_layer * 16 + 16;
        let params = gpu.uniform_slots("params", slots);

        // bind groups, once
        let r = |i: usize| &rows[i].0;
        let wb = |i: usize| &weights[i];
        let embed_bind = gpu.bind(
            embed::NAME,
            &params,
            &[&tokens, wb(wte), wb(wpe), r(embedding)],
        );
        if !post && ln_f_w.is_none() {
            return Err(GpuError::Wgpu("a pre-LN model needs ln_f".into()));
        }
        if h > attn_v::MAX_HEADS {
            return Err(GpuError::TooLarge(format!(
                "{h} heads per layer: the GPU engine switches heads off by a mask of {}",
                attn_v::MAX_HEADS
            )));
        }
        let mut layer_binds = Vec::new();
        for (i, (lr, hb)) in layer_rows.iter().zip(&heads).enumerate() {
            let [ln1g, ln1b, caw, cab, cpw, cpb, ln2g, ln2b, fcw, fcb, fpw, fpb] = lw[i];
            let stream = if post { lr.ln_1 } else { lr.resid_attn };
            // pre-LN: the LN after this block's FFN is the next block's ln_1, or ln_f
            let (next_g, next_b, next_out) = if post {
                (ln2g, ln2b, lr.ln_2)
            } else if let Some(next) = layer_rows.get(i + 1) {
                (lw[i + 1][0], lw[i + 1][1], next.attn_in)
            } else {
                let (g, b) = ln_f_w.expect("checked above");
                (g, b, ln_f.expect("with its weights"))
            };
            layer_binds.push(LayerBinds {
                ln_pre: (!post && i == 0).then(|| {
                    gpu.bind(
                        layernorm::NAME,
                        &params,
                        &[r(lr.input), wb(ln1g), wb(ln1b), r(lr.attn_in)],
                    )
                }),
                qkv: gpu.bind(
                    linear::NAME,
                    &params,
                    &[r(lr.attn_in), wb(caw), wb(cab), r(lr.qkv)],
                ),
                split: gpu.bind(
                    split_heads::NAME,
                    &params,
                    &[r(lr.qkv), &hb.q, &hb.k, &hb.v],
                ),
                scores: gpu.bind(
                    attn_scores::NAME,
                    &params,
                    &[&hb.q, &hb.k, &hb.scores, &hb.scaled, &hb.masked],
                ),
                softmax: gpu.bind(softmax_rows::NAME, &params, &[&hb.masked, &hb.weights]),
                attn_v: gpu.bind(
                    attn_v::NAME,
                    &params,
                    &[&hb.weights, &hb.v, &hb.head_out, r(lr.concat)],
                ),
                proj: gpu.bind(
                    linear::NAME,
                    &params,
                    &[r(lr.concat), wb(cpw), wb(cpb), r(lr.attn_out)],
                ),
                add_ln_1: if post {
                    gpu.bind(
                        add_layernorm::NAME,
                        &params,
                        &[
                            r(lr.input),
                            r(lr.attn_out),
                            wb(ln1g),
                            wb(ln1b),
                            r(lr.resid_attn),
                            r(lr.ln_1),
                        ],
                    )
                } else {
                    gpu.bind(
                        add_layernorm::NAME,
                        &params,
                        &[
                            r(lr.input),
                            r(lr.attn_out),
                            wb(ln2g),
                            wb(ln2b),
                            r(lr.resid_attn),
                            r(lr.ffn_in),
                        ],
                    )
                },
                fc: gpu.bind(
                    linear::NAME,
                    &params,
                    &[r(lr.ffn_in), wb(fcw), wb(fcb), r(lr.ffn_hidden)],
                ),
                fc_proj: gpu.bind(
                    linear::NAME,
                    &params,
                    &[r(lr.ffn_hidden), wb(fpw), wb(fpb), r(lr.ffn_out)],
                ),
                add_ln_2: gpu.bind(
                    add_layernorm::NAME,
                    &params,
                    &[
                        r(stream),
                        r(lr.ffn_out),
                        wb(next_g),
                        wb(next_b),
                        r(lr.resid_ffn),
                        r(next_out),
                    ],
                ),
                pack: gpu.bind(
                    pack_scores::NAME,
                    &params,
                    &[&hb.scores, &hb.scaled, &hb.masked, &hb.weights, &packed],
                ),
            });
        }
        let last = layer_rows.last().map_or(embedding, |l| l.output);
        // post-LN's optional ln_f runs on its own; pre-LN's is the last block's add_ln_2
        let ln_f_bind = ln_f_w.zip(ln_f).filter(|_| post).map(|((g, b), out)| {
            gpu.bind(layernorm::NAME, &params, &[r(last), wb(g), wb(b), r(out)])
        });
        let lm_in = ln_f.unwrap_or(last);
        let lm_head_bind = gpu.bind(
            linear::NAME,
            &params,
            &[r(lm_in), wb(wte), wb(zero_bias), r(logits)],
        );
        let probs_bind = gpu.bind(softmax_rows::NAME, &params, &[r(logits), r(probs)]);
        if let Some(e) = oom.pop().await {
            return Err(GpuError::TooLarge(e.to_string()));
        }
        if let Some(e) = scope.pop().await {
            return Err(GpuError::Wgpu(format!("setting up the model: {e}")));
        }
        Ok(GpuEngine {
            capacity,
            gpu,
            config: c,
            _weights: weights,
            tokens,
            params,
            slots,
            rows,
            embedding,
            layer_rows,
            heads,
            ln_f,
            logits,
            probs,
            packed,
            staging,
            embed_bind,
            layer_binds,
            ln_f_bind,
            lm_head_bind,
            probs_bind,
            cached: None,
            last_incremental: false,
            last_dispatches: 0,
        })
    }

    /// Row-major buffers the Trace reads, in readback order (aliases appear once each time
    /// they are a different field; `dedup` removes only adjacent repeats).
    fn readback_rows(
        layers: &[LayerRows],
        embedding: usize,
        ln_f: Option<usize>,
        logits: usize,
        probs: usize,
    ) -> Vec<usize> {
        let mut v = vec![embedding];
        for l in layers {
            v.extend([
                l.attn_in,
                l.concat,
                l.attn_out,
                l.resid_attn,
                l.ln_1,
                l.ffn_in,
                l.ffn_hidden,
                l.ffn_out,
                l.resid_ffn,
                l.ln_2,
            ]);
        }
        v.extend(ln_f);
        v.extend([logits, probs]);
        v
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
        let (run, dropped) = prepare(&self.config, tokens, opts)?;
        self.fits(run.len())?;
        let s = self
            .cached
            .as_ref()
            .and_then(|(t, o)| reusable_prefix(t, o, run, dropped, opts))
            .unwrap_or(0);
        self.forward_from(run, dropped, opts, s).await
    }

    /// Runs the model on `tokens` from scratch.
    pub async fn forward_full(
        &mut self,
        tokens: &[u32],
        opts: &AttentionOptions,
    ) -> Result<Trace, GpuError> {
        let (run, dropped) = prepare(&self.config, tokens, opts)?;
        self.fits(run.len())?;
        self.forward_from(run, dropped, opts, 0).await
    }

    /// How many tokens one forward can take: the model's context, or less where the GPU
    /// buffers for the full context would not fit (see [`capacity`]).
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    fn fits(&self, t: usize) -> Result<(), GpuError> {
        if t > self.capacity {
            return Err(GpuError::TooLong {
                tokens: t,
                capacity: self.capacity,
            });
        }
        Ok(())
    }

    async fn forward_from(
        &mut self,
        run: &[u32],
        dropped: usize,
        opts: &AttentionOptions,
        s: usize,
    ) -> Result<Trace, GpuError> {
        if let Some(e) = self.gpu.take_error() {
            return Err(e);
        }
        self.cached = None;
        let c = self.config.clone();
        let (p, d, h, dk, f, v, t) = (
            self.capacity,
            c.n_embd,
            c.n_head,
            c.d_k(),
            c.d_ff(),
            c.vocab_size,
            run.len(),
        );
        let n = t - s;
        let eps = c.layer_norm_epsilon;
        let rows_of = |i: usize| self.rows[i].1;
        let mut plan = Plan {
            steps: Vec::new(),
            params: Vec::new(),
        };
        let lnp = |row0: usize| layernorm::Params {
            row0: row0 as u32,
            d: d as u32,
            eps,
            _pad: 0,
        };
        let lin = |k: usize, nn: usize, act: u32| linear::Params {
            row0: s as u32,
            row1: t as u32,
            k: k as u32,
            n: nn as u32,
            w_transposed: 0,
            has_bias: 1,
            act,
            _pad: 0,
        };
        let (s32, t32, p32, d32, dk32) = (s as u32, t as u32, p as u32, d as u32, dk as u32);

        plan.push(
            embed::NAME,
            &self.embed_bind,
            embed::Params {
                row0: s32,
                row1: t32,
                d: d32,
                scale: c.embedding_scale(),
            },
            [div(n * d, embed::WG[0]), 1, 1],
        );
        let act = linear::act(c.activation_function);
        for (li, b) in self.layer_binds.iter().enumerate() {
            if let Some(bg) = &b.ln_pre {
                plan.push(layernorm::NAME, bg, lnp(s), [n as u32, 1, 1]);
            }
            // Q, K, V = X·W_Q, X·W_K, X·W_V (fused), then per head
            let (k, g) = linear_kernel(n, 3 * d);
            plan.push(k, &b.qkv, lin(d, 3 * d, linear::ACT_NONE), g);
            plan.push(
                split_heads::NAME,
                &b.split,
                split_heads::Params {
                    row0: s32,
                    row1: t32,
                    d: d32,
                    dk: dk32,
                    positions: p32,
                    ..Default::default()
                },
                [div(n * d, split_heads::WG[0]), 1, 1],
            );
            // QKᵀ, ÷√d_k, causal mask in one kernel, over two regions: new queries × all keys,
            // and old queries × new keys (empty in a full forward: not dispatched)
            for (r0, r1, c0, c1) in [(s, t, 0, t), (0, s, s, t)] {
                plan.push(
                    attn_scores::NAME,
                    &b.scores,
                    attn_scores::Params {
                        row0: r0 as u32,
                        row1: r1 as u32,
                        col0: c0 as u32,
                        col1: c1 as u32,
                        dk: dk32,
                        positions: p32,
                        scale: opts.scale_factor(dk),
                        causal: opts.causal_mask as u32,
                    },
                    [
                        div(c1 - c0, attn_scores::WG[0]),
                        div(r1 - r0, attn_scores::WG[1]),
                        h as u32,
                    ],
                );
            }
            plan.push(
                softmax_rows::NAME,
                &b.softmax,
                softmax_rows::Params {
                    row_base: 0,
                    row0: s32,
                    cols: t32,
                    row_stride: p32,
                    head_stride: (p * p) as u32,
                    tau: opts.temperature,
                    ..Default::default()
                },
                [t32, h as u32, 1],
            );
            // weights · V per head (a switched-off head gives 0), heads side by side
            let (ablate_lo, ablate_hi) = attn_v::ablation_mask(&opts.ablate, li);
            plan.push(
                attn_v::NAME,
                &b.attn_v,
                attn_v::Params {
                    row0: s32,
                    row1: t32,
                    keys: t32,
                    dk: dk32,
                    positions: p32,
                    d: d32,
                    ablate_lo,
                    ablate_hi,
                },
                [div(dk, attn_v::WG[0]), div(n, attn_v::WG[1]), h as u32],
            );
            let (k, g) = linear_kernel(n, d);
            plan.push(k, &b.proj, lin(d, d, linear::ACT_NONE), g);
            // Add & LayerNorm
            plan.push(add_layernorm::NAME, &b.add_ln_1, lnp(s), [n as u32, 1, 1]);
            // FFN: GELU(x·W₁ + b₁)·W₂ + b₂
            let (k, g) = linear_kernel(n, f);
            plan.push(k, &b.fc, lin(d, f, act), g);
            let (k, g) = linear_kernel(n, d);
            plan.push(k, &b.fc_proj, lin(f, d, linear::ACT_NONE), g);
            // Add & LayerNorm (pre-LN: the next block's first LayerNorm, or ln_f)
            plan.push(add_layernorm::NAME, &b.add_ln_2, lnp(s), [n as u32, 1, 1]);
        }
        if let Some(bg) = &self.ln_f_bind {
            plan.push(layernorm::NAME, bg, lnp(s), [n as u32, 1, 1]);
        }
        let (k, g) = linear_kernel(n, v);
        plan.push(
            k,
            &self.lm_head_bind,
            linear::Params {
                row0: s32,
                row1: t32,
                k: d32,
                n: v as u32,
                w_transposed: 1,
                has_bias: 0,
                act: linear::ACT_NONE,
                _pad: 0,
            },
            g,
        );
        plan.push(
            softmax_rows::NAME,
            &self.probs_bind,
            softmax_rows::Params {
                row_base: s32,
                row0: s32,
                cols: v as u32,
                row_stride: v as u32,
                head_stride: 0,
                tau: 1.0,
                ..Default::default()
            },
            [n as u32, 1, 1],
        );
        // compact each layer's four score matrices (all T rows) for the readback
        let scores_len = h * t * t; // one (H, T, T) matrix
        for (li, b) in self.layer_binds.iter().enumerate() {
            plan.push(
                pack_scores::NAME,
                &b.pack,
                pack_scores::Params {
                    t: t32,
                    positions: p32,
                    heads: h as u32,
                    dst_offset: (li * 4 * scores_len) as u32,
                },
                [div(t * t, pack_scores::WG[0]), h as u32, 4],
            );
        }
        let dispatches = plan.steps.len();
        if plan.steps.len() > self.slots {
            return Err(GpuError::TooLarge(format!(
                "{} dispatches exceed {} param slots",
                plan.steps.len(),
                self.slots
            )));
        }

        let scope = self
            .gpu
            .device
            .push_error_scope(wgpu::ErrorFilter::Validation);
        let mut tok = run.to_vec();
        tok.resize(p, 0);
        self.gpu
            .queue
            .write_buffer(&self.tokens, 0, bytemuck::cast_slice(&tok));
        self.gpu.queue.write_buffer(&self.params, 0, &plan.params);
        let mut enc = self
            .gpu
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("forward"),
            });
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("forward"),
                timestamp_writes: None,
            });
            for (i, step) in plan.steps.iter().enumerate() {
                pass.set_pipeline(&self.gpu.kernel(step.kernel).pipeline);
                pass.set_bind_group(0, step.bind, &[(i as u64 * SLOT) as u32]);
                pass.dispatch_workgroups(step.groups[0], step.groups[1], step.groups[2]);
            }
        }
        // one staging buffer: each distinct row-major buffer's first T rows, then the packed heads
        let order = Self::readback_rows(
            &self.layer_rows,
            self.embedding,
            self.ln_f,
            self.logits,
            self.probs,
        );
        let mut at = std::collections::HashMap::new();
        let mut off = 0u64;
        for &i in &order {
            if at.contains_key(&i) {
                continue;
            }
            let len = (t * rows_of(i) * 4) as u64;
            enc.copy_buffer_to_buffer(&self.rows[i].0, 0, &self.staging, off, len);
            at.insert(i, (off / 4) as usize);
            off += len;
        }
        // then each layer's q, k, v and head outputs, (H, P, Dk): each head's first T rows are
        // contiguous, one copy per head
        let heads_base = (off / 4) as usize;
        let dk_len = h * t * dk; // one (H, T, Dk) matrix
        for hb in &self.heads {
            for m in [&hb.q, &hb.k, &hb.v, &hb.head_out] {
                for hh in 0..h {
                    let len = (t * dk * 4) as u64;
                    enc.copy_buffer_to_buffer(m, (hh * p * dk * 4) as u64, &self.staging, off, len);
                    off += len;
                }
            }
        }
        // then the packed score matrices
        let scores_base = (off / 4) as usize;
        let packed_len = (self.heads.len() * 4 * scores_len * 4) as u64;
        enc.copy_buffer_to_buffer(&self.packed, 0, &self.staging, off, packed_len);
        off += packed_len;
        self.gpu.queue.submit([enc.finish()]);
        if let Some(e) = scope.pop().await {
            return Err(GpuError::Wgpu(e.to_string()));
        }
        let all = self.gpu.read(&self.staging, off).await?;
        if let Some(e) = self.gpu.take_error() {
            return Err(e);
        }

        let row = |i: usize| all[at[&i]..at[&i] + t * rows_of(i)].to_vec();
        let mut layers = Vec::with_capacity(c.n_layer);
        for (li, lr) in self.layer_rows.iter().enumerate() {
            // the m-th (H, T, Dk) matrix of this layer (q, k, v, head_out), and the m-th score
            // matrix (raw, scaled, masked, weights), in the order they were copied above
            let head_mat = |m: usize| {
                let o = heads_base + (li * 4 + m) * dk_len;
                all[o..o + dk_len].to_vec()
            };
            let score_mat = |m: usize| {
                let o = scores_base + (li * 4 + m) * scores_len;
                all[o..o + scores_len].to_vec()
            };
            layers.push(LayerTrace {
                input: row(lr.input),
                attn_in: row(lr.attn_in),
                q: head_mat(0),
                k: head_mat(1),
                v: head_mat(2),
                head_out: head_mat(3),
                scores: score_mat(0),
                scaled: score_mat(1),
                masked: score_mat(2),
                weights: score_mat(3),
                concat: row(lr.concat),
                attn_out: row(lr.attn_out),
                resid_attn: row(lr.resid_attn),
                ln_1: row(lr.ln_1),
                ffn_in: row(lr.ffn_in),
                ffn_hidden: row(lr.ffn_hidden),
                ffn_out: row(lr.ffn_out),
                resid_ffn: row(lr.resid_ffn),
                ln_2: row(lr.ln_2),
                output: row(lr.output),
            });
        }
        let trace = Trace {
            dims: Dims::new(&c, t),
            tokens: run.to_vec(),
            dropped,
            options: opts.clone(),
            embedding: row(self.embedding),
            layers,
            ln_f: self.ln_f.map(row),
            logits: row(self.logits),
            probs: row(self.probs),
        };
        self.cached = Some((run.to_vec(), opts.clone()));
        self.last_incremental = s > 0;
        self.last_dispatches = dispatches;
        Ok(trace)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            capacity(&bundled, 128 << 20, ACTIVATION_BUDGET),
            bundled.n_positions
        );
        let gpt2 = gpt2_small();
        let cap = capacity(&gpt2, 128 << 20, ACTIVATION_BUDGET);
        assert!((16..1024).contains(&cap) && cap.is_power_of_two(), "{cap}");
        // the largest single buffer (the packed heads) fits a 128 MiB binding
        let packed = 4 * 12 * 4 * 12 * cap * (64 + cap);
        assert!(packed <= 128 << 20, "{packed}");
        // a larger budget and binding limit give more positions, never more than the context
        assert!(capacity(&gpt2, 1 << 40, 1 << 40) == 1024);
        assert!(capacity(&gpt2, 1 << 40, 4 << 30) > cap);
        // tiny models stop at the context
        let mut tiny = gpt2;
        tiny.n_positions = 8;
        assert_eq!(capacity(&tiny, 1, 1), 8);
    }
}
