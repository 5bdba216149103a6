//! Every bind group of a forward, made once at set-up: which buffers each kernel of a block
//! reads and writes.

use attnlab_model::{AttentionOptions, Config, Field, LnPlacement};

use super::buffers::{Activations, HeadBuffers, Weights, PACKED};
use crate::context::Gpu;
use crate::error::GpuError;
use crate::step::{Bound, Heads, Step};
use crate::{
    add_layernorm, attn_fused, attn_pool, attn_scores, attn_softmax, attn_v, embed, layernorm,
    linear, pack_scores, softmax_rows, split_heads,
};

/// A block's bind groups, in the order of its dispatches.
pub(super) struct BlockBinds {
    /// pre-LN layer 0 only: LN(embedding); later layers' LN comes from the previous add_ln_2
    pub ln_pre: Option<Bound>,
    pub qkv: Bound,
    pub split: Bound,
    pub attn: AttentionBinds,
    pub proj: Bound,
    /// x + attention, then LN: ln_1 (post) or the FFN's input LN (pre)
    pub add_ln_1: Bound,
    pub fc: Bound,
    pub fc_proj: Bound,
    /// stream + FFN, then LN: ln_2 (post), or the next block's ln_1 or ln_f (pre)
    pub add_ln_2: Bound,
}

/// A block's attention on its per-head buffers, for both architectures, written per head and
/// side by side into `concat`: with the maps, QKᵀ with the scale and the mask, softmax,
/// weights · V, and the four score matrices packed for the readback; without them, one fused
/// kernel that writes no score.
pub(super) enum AttentionBinds {
    Maps {
        scores: Bound,
        softmax: Bound,
        attn_v: Bound,
        pack: Bound,
    },
    /// The fused attention, and the pooling of its weights for the heads grid.
    Fused { attn: Bound, pool: Bound },
}

impl AttentionBinds {
    /// The maps' binds when the engine keeps them (`packed`, their readback, is there), else
    /// the fused one and the pooling (into `pool`).
    pub fn new(
        gpu: &Gpu,
        params: &wgpu::Buffer,
        hb: &HeadBuffers,
        concat: &wgpu::Buffer,
        (packed, pool): (Option<&wgpu::Buffer>, Option<&wgpu::Buffer>),
    ) -> AttentionBinds {
        let Some(packed) = packed else {
            let pool = pool.expect("an engine without the maps has the pooled rows' buffer");
            return AttentionBinds::Fused {
                attn: attn_fused::bind(
                    gpu,
                    params,
                    attn_fused::Buffers {
                        q: hb.get(Field::Q),
                        k: hb.get(Field::K),
                        v: hb.get(Field::V),
                        head_out: hb.get(Field::HeadOut),
                        concat,
                    },
                ),
                pool: attn_pool::bind(
                    gpu,
                    params,
                    attn_pool::Buffers {
                        q: hb.get(Field::Q),
                        k: hb.get(Field::K),
                        out: pool,
                    },
                ),
            };
        };
        AttentionBinds::Maps {
            scores: attn_scores::bind(
                gpu,
                params,
                attn_scores::Buffers {
                    q: hb.get(Field::Q),
                    k: hb.get(Field::K),
                    raw: hb.get(Field::Scores),
                    scaled: hb.get(Field::Scaled),
                    masked: hb.get(Field::Masked),
                },
            ),
            softmax: attn_softmax::bind(
                gpu,
                params,
                attn_softmax::Buffers {
                    masked: hb.get(Field::Masked),
                    weights: hb.get(Field::Weights),
                },
            ),
            attn_v: attn_v::bind(
                gpu,
                params,
                attn_v::Buffers {
                    weights: hb.get(Field::Weights),
                    v: hb.get(Field::V),
                    head_out: hb.get(Field::HeadOut),
                    concat,
                },
            ),
            pack: pack_scores::bind(
                gpu,
                params,
                pack_scores::Buffers {
                    sources: PACKED.map(|f| hb.get(f)),
                    dst: packed,
                },
            ),
        }
    }

    /// Block `li`'s attention over `t` tokens whose first `s` rows are cached: new queries ×
    /// every key, the old queries × the new keys (their scores, with the maps), softmax(masked
    /// / τ), weights · V (a switched-off head gives 0) — or all of it fused.
    pub fn steps(
        &self,
        li: usize,
        heads: Heads,
        (s, t): (usize, usize),
        opts: &AttentionOptions,
    ) -> Result<Vec<Step<'_>>, GpuError> {
        let scale = opts.scale_factor(heads.dk);
        let mask = attn_v::ablation_mask(&opts.ablate, li);
        Ok(match self {
            AttentionBinds::Maps {
                scores,
                softmax,
                attn_v: av,
                ..
            } => vec![
                attn_scores::step(scores, s..t, 0..t, heads, scale, opts.causal_mask)?,
                attn_scores::step(scores, 0..s, s..t, heads, scale, opts.causal_mask)?,
                attn_softmax::step(softmax, s, t, heads, opts.temperature)?,
                attn_v::step(av, s..t, t, heads, mask)?,
            ],
            AttentionBinds::Fused { attn, .. } => {
                let softmax = attn_fused::Softmax {
                    scale,
                    tau: opts.temperature,
                    causal: opts.causal_mask,
                    ablate: mask,
                };
                vec![attn_fused::step(attn, s..t, t, heads, softmax)?]
            }
        })
    }

    /// The block's query rows `rows` of every head over `t` keys pooled (`attn_pool`) into
    /// the pooled rows' buffer; only without the maps.
    pub fn pool(
        &self,
        heads: Heads,
        rows: std::ops::Range<usize>,
        t: usize,
        pooling: attn_pool::Pooling,
        opts: &AttentionOptions,
    ) -> Result<Step<'_>, GpuError> {
        match self {
            AttentionBinds::Fused { pool, .. } => attn_pool::step(
                pool,
                rows,
                t,
                heads,
                pooling,
                (
                    opts.scale_factor(heads.dk),
                    opts.temperature,
                    opts.causal_mask,
                ),
            ),
            AttentionBinds::Maps { .. } => Err(GpuError::Shape(
                "an engine that keeps the maps pools none of its own".into(),
            )),
        }
    }

    /// Block `li`'s four score matrices (all `t` rows) packed for the readback, when kept.
    pub fn pack(&self, li: usize, heads: Heads, t: usize) -> Result<Option<Step<'_>>, GpuError> {
        match self {
            AttentionBinds::Maps { pack, .. } => {
                let at = li * pack_scores::packed_len(heads.count, t);
                Ok(Some(pack_scores::step(pack, t, heads, at)?))
            }
            AttentionBinds::Fused { .. } => Ok(None),
        }
    }
}

/// The bind groups of a whole forward.
pub(super) struct Binds {
    pub embed: Bound,
    pub blocks: Vec<BlockBinds>,
    /// post-LN's optional ln_f on its own (pre-LN's is the last block's add_ln_2)
    pub ln_f: Option<Bound>,
    pub lm_head: Bound,
    pub probs: Bound,
}

impl Binds {
    pub fn new(gpu: &Gpu, c: &Config, w: &Weights, a: &Activations) -> Result<Binds, GpuError> {
        let post = c.ln_placement == LnPlacement::Post;
        if !post && w.ln_f.is_none() {
            return Err(GpuError::Wgpu("a pre-LN model needs ln_f".into()));
        }
        let params = &a.params;
        let r = |i: usize| &a.rows[i].buffer;
        let embed = embed::bind(
            gpu,
            params,
            embed::Buffers {
                tokens: &a.tokens,
                wte: &w.wte,
                wpe: &w.wpe,
                out: r(a.embedding),
            },
        );
        let mut blocks = Vec::new();
        for (i, (bb, bw)) in a.blocks.iter().zip(&w.blocks).enumerate() {
            let f = |field: Field| r(bb.row(field));
            let qkv = r(bb.qkv.expect("a GPT-2 block has its fused QKV buffer"));
            let hb = &bb.heads;
            let lin = |x: &wgpu::Buffer, (wt, b): &(wgpu::Buffer, wgpu::Buffer), out| {
                linear::bind(gpu, params, linear::Buffers { x, w: wt, b, out })
            };
            // the LN after the attention residual: ln_1 (post) or the FFN's own (pre, ln_2's
            // weights); its output is the field the FFN reads
            let ln_after_attn = if post { &bw.ln_1 } else { &bw.ln_2 };
            // the LN after the FFN residual: ln_2 (post), or the next block's ln_1 or ln_f (pre)
            let (ln_after_ffn, after_ffn_out) = if post {
                (&bw.ln_2, f(Field::Ln2))
            } else if let (Some(next_w), Some(next_b)) = (w.blocks.get(i + 1), a.blocks.get(i + 1))
            {
                (&next_w.ln_1, r(next_b.row(Field::AttnIn)))
            } else {
                let ln_f = w.ln_f.as_ref().expect("checked above");
                (ln_f, r(a.ln_f.expect("with its weights")))
            };
            let stream = if post { Field::Ln1 } else { Field::ResidAttn };
            blocks.push(BlockBinds {
                ln_pre: (!post && i == 0).then(|| {
                    layernorm::bind(
                        gpu,
                        params,
                        layernorm::Buffers {
                            x: f(Field::Input),
                            g: &bw.ln_1.0,
                            b: &bw.ln_1.1,
                            out: f(Field::AttnIn),
                        },
                    )
                }),
                qkv: lin(f(Field::AttnIn), &bw.c_attn, qkv),
                split: split_heads::bind(
                    gpu,
                    params,
                    split_heads::Buffers {
                        qkv,
                        q: hb.get(Field::Q),
                        k: hb.get(Field::K),
                        v: hb.get(Field::V),
                    },
                ),
                attn: AttentionBinds::new(
                    gpu,
                    params,
                    hb,
                    f(Field::Concat),
                    (a.packed.as_ref(), a.pool.as_ref()),
                ),
                proj: lin(f(Field::Concat), &bw.c_proj, f(Field::AttnOut)),
                add_ln_1: add_layernorm::bind(
                    gpu,
                    params,
                    add_layernorm::Buffers {
                        a: f(Field::Input),
                        b: f(Field::AttnOut),
                        g: &ln_after_attn.0,
                        beta: &ln_after_attn.1,
                        sum: f(Field::ResidAttn),
                        out: f(Field::FfnIn),
                    },
                ),
                fc: lin(f(Field::FfnIn), &bw.fc, f(Field::FfnHidden)),
                fc_proj: lin(f(Field::FfnHidden), &bw.fc_proj, f(Field::FfnOut)),
                add_ln_2: add_layernorm::bind(
                    gpu,
                    params,
                    add_layernorm::Buffers {
                        a: f(stream),
                        b: f(Field::FfnOut),
                        g: &ln_after_ffn.0,
                        beta: &ln_after_ffn.1,
                        sum: f(Field::ResidFfn),
                        out: after_ffn_out,
                    },
                ),
            });
        }
        let last = a
            .blocks
            .last()
            .map_or(a.embedding, |b| b.row(Field::Output));
        let ln_f = match (&w.ln_f, a.ln_f) {
            (Some((g, b)), Some(out)) if post => Some(layernorm::bind(
                gpu,
                params,
                layernorm::Buffers {
                    x: r(last),
                    g,
                    b,
                    out: r(out),
                },
            )),
            _ => None,
        };
        let lm_in = a.ln_f.unwrap_or(last);
        let lm_head = linear::bind(
            gpu,
            params,
            linear::Buffers {
                x: r(lm_in),
                w: &w.wte,
                b: &w.no_bias,
                out: r(a.logits),
            },
        );
        let probs = softmax_rows::bind(
            gpu,
            params,
            softmax_rows::Buffers {
                x: r(a.logits),
                out: r(a.probs),
            },
        );
        Ok(Binds {
            embed,
            blocks,
            ln_f,
            lm_head,
            probs,
        })
    }
}
