//! The Llama family's forward pass: RMSNorm, RoPE, grouped-query attention, SwiGLU, a tied or
//! separate output head, on compact weights (`QMatrix`). One pass (`LlamaModel::pass`), two
//! uses: `logits_with` keeps only what it needs (and hands each head's weights to a visitor),
//! `trace` records every intermediate in a [`Trace`] — the contract the GPT-2 forward, the
//! views and the CLI share. The attention itself is the GPT-2 forward's: the same QKᵀ, scale,
//! mask, softmax(masked / τ) and weights · V (`cpu`), so every option means the same.

use super::ops::{add_bias, rms_norm, rope, rope_table, swiglu};
use super::LlamaModel;
use crate::config::LnPlacement;
use crate::cpu;
use crate::error::{Error, Result};
use crate::field::Dims;
use crate::roles::HeadMaps;
use crate::trace::{AttentionOptions, Field, LayerTrace, Trace};

/// One head's steps, each (T, Dk) or (T, T). `k` and `v` are those of the key/value head the
/// query head reads (grouped-query attention: `n_head / n_kv_head` heads share one).
pub(crate) struct HeadSteps<'a> {
    pub q: &'a [f32],
    pub k: &'a [f32],
    pub v: &'a [f32],
    pub scores: &'a [f32],
    pub scaled: &'a [f32],
    pub masked: &'a [f32],
    pub weights: &'a [f32],
    pub head_out: &'a [f32],
}

/// One block's row-major steps, (T, D) or (T, F).
pub(crate) struct BlockSteps<'a> {
    pub input: &'a [f32],
    pub attn_in: &'a [f32],
    pub concat: &'a [f32],
    pub attn_out: &'a [f32],
    pub resid_attn: &'a [f32],
    pub ffn_in: &'a [f32],
    pub ffn_hidden: &'a [f32],
    pub ffn_out: &'a [f32],
    pub resid_ffn: &'a [f32],
}

/// What a pass hands out as it goes.
pub(crate) trait Observer {
    fn embedding(&mut self, _x: &[f32]) {}
    fn head(&mut self, layer: usize, head: usize, steps: &HeadSteps);
    fn block(&mut self, _layer: usize, _steps: &BlockSteps) {}
    /// The final RMSNorm's output.
    fn last(&mut self, _normed: &[f32]) {}
}

/// Hands each head's weights to a function.
struct Visit<F>(F);

impl<F: FnMut(usize, usize, &[f32])> Observer for Visit<F> {
    fn head(&mut self, layer: usize, head: usize, steps: &HeadSteps) {
        (self.0)(layer, head, steps.weights)
    }
}

/// Records a `Trace`'s arrays.
struct Recorder {
    dims: Dims,
    embedding: Vec<f32>,
    layers: Vec<LayerTrace>,
    /// The block being run.
    block: LayerTrace,
    ln_f: Vec<f32>,
}

impl Recorder {
    fn new(dims: Dims) -> Recorder {
        Recorder {
            dims,
            embedding: Vec::new(),
            layers: Vec::with_capacity(dims.n_layer),
            block: Recorder::empty(&dims),
            ln_f: Vec::new(),
        }
    }

    /// A block's trace of `dims`, every field zero.
    fn empty(dims: &Dims) -> LayerTrace {
        let mut l = LayerTrace::default();
        for f in Field::ALL {
            *f.of_mut(&mut l) = vec![0.0; f.shape().len(dims)];
        }
        l
    }
}

impl Observer for Recorder {
    fn embedding(&mut self, x: &[f32]) {
        self.embedding = x.to_vec();
    }

    fn head(&mut self, _layer: usize, head: usize, s: &HeadSteps) {
        let l = &mut self.block;
        let (td, tt) = (s.q.len(), s.scores.len());
        for (field, values) in [
            (&mut l.q, s.q),
            (&mut l.k, s.k),
            (&mut l.v, s.v),
            (&mut l.head_out, s.head_out),
        ] {
            field[head * td..(head + 1) * td].copy_from_slice(values);
        }
        for (field, values) in [
            (&mut l.scores, s.scores),
            (&mut l.scaled, s.scaled),
            (&mut l.masked, s.masked),
            (&mut l.weights, s.weights),
        ] {
            field[head * tt..(head + 1) * tt].copy_from_slice(values);
        }
    }

    fn block(&mut self, _layer: usize, s: &BlockSteps) {
        let mut l = std::mem::replace(&mut self.block, Recorder::empty(&self.dims));
        // a pre-norm block: ln_1 is what attention reads, ln_2 what the FFN reads, and the
        // output the stream after the FFN's residual (as `TraceLayout` lays out pre-LN)
        for (field, values) in [
            (&mut l.input, s.input),
            (&mut l.attn_in, s.attn_in),
            (&mut l.concat, s.concat),
            (&mut l.attn_out, s.attn_out),
            (&mut l.resid_attn, s.resid_attn),
            (&mut l.ln_1, s.attn_in),
            (&mut l.ffn_in, s.ffn_in),
            (&mut l.ffn_hidden, s.ffn_hidden),
            (&mut l.ffn_out, s.ffn_out),
            (&mut l.resid_ffn, s.resid_ffn),
            (&mut l.ln_2, s.ffn_in),
            (&mut l.output, s.resid_ffn),
        ] {
            field.copy_from_slice(values);
        }
        self.layers.push(l);
    }

    fn last(&mut self, normed: &[f32]) {
        self.ln_f = normed.to_vec();
    }
}

impl LlamaModel {
    /// The sizes of a trace of `t` tokens.
    pub fn dims(&self, t: usize) -> Dims {
        let c = &self.config;
        Dims {
            t,
            d_model: c.n_embd,
            n_head: c.n_head,
            d_k: c.head_dim,
            d_ff: c.n_ff,
            n_layer: c.n_layer,
            vocab: c.vocab_size,
            ln_placement: LnPlacement::Pre,
        }
    }

    /// The next-token logits after every position of `ids`, (T × vocabulary).
    pub fn logits(&self, ids: &[u32]) -> Result<Vec<f32>> {
        self.logits_with(ids, &AttentionOptions::default(), |_, _, _| {})
    }

    /// `logits` with the attention options (scaling, τ, the causal mask, heads switched off),
    /// handing `visit(layer, head, weights)` every head's attention weights (T × T, row =
    /// query; zero above the diagonal with the mask on).
    pub fn logits_with(
        &self,
        ids: &[u32],
        opts: &AttentionOptions,
        visit: impl FnMut(usize, usize, &[f32]),
    ) -> Result<Vec<f32>> {
        if ids.len() > self.config.context {
            return Err(Error::Options(format!(
                "{} tokens; the model's context is {}",
                ids.len(),
                self.config.context
            )));
        }
        self.pass(ids, opts, &mut Visit(visit))
    }

    /// Every head's attention weights of a run on `ids`.
    pub fn maps(&self, ids: &[u32], opts: &AttentionOptions) -> Result<HeadMaps> {
        let c = &self.config;
        let n = ids.len() * ids.len();
        let mut weights = vec![0f32; c.n_layer * c.n_head * n];
        self.logits_with(ids, opts, |l, h, w| {
            let at = (l * c.n_head + h) * n;
            weights[at..at + n].copy_from_slice(w);
        })?;
        Ok(HeadMaps {
            n_layer: c.n_layer,
            n_head: c.n_head,
            t: ids.len(),
            causal: opts.causal_mask,
            weights,
        })
    }

    /// Runs `tokens` and records every intermediate. Tokens beyond the context drop from the
    /// start, as the GPT-2 forward (and the page) does.
    pub fn trace(&self, tokens: &[u32], opts: &AttentionOptions) -> Result<Trace> {
        let dropped = tokens.len().saturating_sub(self.config.context);
        let ids = &tokens[dropped..];
        let dims = self.dims(ids.len());
        let mut rec = Recorder::new(dims);
        let logits = self.pass(ids, opts, &mut rec)?;
        let v = dims.vocab;
        let mut probs = vec![0f32; logits.len()];
        cpu::softmax_rows(&logits, v, 1.0, &mut probs);
        Ok(Trace {
            dims,
            tokens: ids.to_vec(),
            dropped,
            options: opts.clone(),
            embedding: rec.embedding,
            layers: rec.layers,
            ln_f: Some(rec.ln_f),
            logits,
            probs,
        })
    }

    /// The forward pass over `ids` (at most the context), telling `obs` each step.
    pub(crate) fn pass(
        &self,
        ids: &[u32],
        opts: &AttentionOptions,
        obs: &mut impl Observer,
    ) -> Result<Vec<f32>> {
        let c = &self.config;
        let (t, d, hd, f) = (ids.len(), c.n_embd, c.head_dim, c.n_ff);
        if t == 0 {
            return Err(Error::EmptyInput);
        }
        opts.validate_for(c.n_layer, c.n_head)?;
        let mut x = vec![0f32; t * d];
        for (p, &id) in ids.iter().enumerate() {
            if id as usize >= c.vocab_size {
                return Err(Error::TokenOutOfRange {
                    id,
                    position: p,
                    vocab: c.vocab_size,
                });
            }
            self.embed
                .rows_into(id as usize, &mut x[p * d..(p + 1) * d]);
        }
        obs.embedding(&x);
        let (q_w, kv_w) = (c.n_head * hd, c.n_kv_head * hd);
        let rows = |w: usize| vec![0f32; t * w];
        let (mut attn_in, mut attn_out, mut resid_attn) = (rows(d), rows(d), rows(d));
        let (mut ffn_in, mut ffn_out, mut resid_ffn) = (rows(d), rows(d), rows(d));
        let (mut q, mut k, mut v) = (rows(q_w), rows(kv_w), rows(kv_w));
        let (mut qh, mut kh, mut vh, mut head_out) = (rows(hd), rows(hd), rows(hd), rows(hd));
        let (mut scores, mut scaled, mut masked, mut weights) =
            (rows(t), rows(t), rows(t), rows(t));
        let mut concat = rows(q_w);
        let (mut gate, mut up) = (rows(f), rows(f));
        if let Some(w) = c.sliding_window.filter(|&w| t > w) {
            return Err(Error::Options(format!(
                "{t} tokens; this model's attention slides over a window of {w}, which is not read yet"
            )));
        }
        let angles = rope_table(&c.inv_freq(), t);
        let group = c.n_head / c.n_kv_head;
        let scale = opts.scale_factor(hd);
        // one head's columns of a (T, width) matrix, as a (T, Dk) one
        let columns = |from: &[f32], width: usize, h: usize, to: &mut [f32]| {
            for (row, out) in from.chunks_exact(width).zip(to.chunks_exact_mut(hd)) {
                out.copy_from_slice(&row[h * hd..(h + 1) * hd]);
            }
        };
        for (l, layer) in self.layers.iter().enumerate() {
            rms_norm(&x, &layer.attn_norm, d, c.rms_eps, &mut attn_in);
            layer.q.matmul_t(&attn_in, t, &mut q);
            layer.k.matmul_t(&attn_in, t, &mut k);
            layer.v.matmul_t(&attn_in, t, &mut v);
            add_bias(&mut q, layer.bias.q.as_ref());
            add_bias(&mut k, layer.bias.k.as_ref());
            add_bias(&mut v, layer.bias.v.as_ref());
            rope(&mut q, c.n_head, hd, &angles, c.rope_pairs);
            rope(&mut k, c.n_kv_head, hd, &angles, c.rope_pairs);
            for head in 0..c.n_head {
                let kv = head / group;
                columns(&q, q_w, head, &mut qh);
                columns(&k, kv_w, kv, &mut kh);
                columns(&v, kv_w, kv, &mut vh);
                cpu::attn_scores(
                    &qh,
                    &kh,
                    (t, t, hd),
                    scale,
                    opts.causal_mask.then_some(0),
                    &mut scores,
                    &mut scaled,
                    &mut masked,
                );
                cpu::softmax_rows(&masked, t, opts.temperature, &mut weights);
                if opts.ablate.contains(&(l, head)) {
                    head_out.fill(0.0);
                } else {
                    cpu::attn_v(&weights, &vh, t, t, hd, &mut head_out);
                }
                for (row, out) in concat.chunks_exact_mut(q_w).zip(head_out.chunks_exact(hd)) {
                    row[head * hd..(head + 1) * hd].copy_from_slice(out);
                }
                obs.head(
                    l,
                    head,
                    &HeadSteps {
                        q: &qh,
                        k: &kh,
                        v: &vh,
                        scores: &scores,
                        scaled: &scaled,
                        masked: &masked,
                        weights: &weights,
                        head_out: &head_out,
                    },
                );
            }
            layer.o.matmul_t(&concat, t, &mut attn_out);
            add_bias(&mut attn_out, layer.bias.o.as_ref());
            cpu::residual_add(&x, &attn_out, &mut resid_attn);
            rms_norm(&resid_attn, &layer.ffn_norm, d, c.rms_eps, &mut ffn_in);
            layer.gate.matmul_t(&ffn_in, t, &mut gate);
            layer.up.matmul_t(&ffn_in, t, &mut up);
            swiglu(&mut gate, &up);
            layer.down.matmul_t(&gate, t, &mut ffn_out);
            cpu::residual_add(&resid_attn, &ffn_out, &mut resid_ffn);
            obs.block(
                l,
                &BlockSteps {
                    input: &x,
                    attn_in: &attn_in,
                    concat: &concat,
                    attn_out: &attn_out,
                    resid_attn: &resid_attn,
                    ffn_in: &ffn_in,
                    ffn_hidden: &gate,
                    ffn_out: &ffn_out,
                    resid_ffn: &resid_ffn,
                },
            );
            std::mem::swap(&mut x, &mut resid_ffn);
        }
        rms_norm(&x, &self.norm, d, c.rms_eps, &mut attn_in);
        obs.last(&attn_in);
        let mut logits = vec![0f32; t * c.vocab_size];
        self.output
            .as_ref()
            .unwrap_or(&self.embed)
            .matmul_t(&attn_in, t, &mut logits);
        Ok(logits)
    }
}
