//! The Llama family's forward pass: RMSNorm, RoPE, grouped-query attention, SwiGLU, a tied or
//! separate output head, on compact weights (`QMatrix`). One pass (`LlamaModel::pass`), two
//! uses: `logits_with` keeps only what it needs (and hands each head's weights to a visitor),
//! `trace` records every intermediate in a [`Trace`] — the contract the GPT-2 forward, the
//! views and the CLI share — and `trace_incremental` reuses the rows an earlier trace shares
//! with the new input (its keys and values are the key/value cache). The attention itself is
//! the GPT-2 forward's: the same QKᵀ, scale, mask, softmax(masked / τ) and weights · V (`cpu`),
//! so every option means the same.

use super::ops::{add_bias, rms_norm, rope, rope_table, swiglu};
use super::LlamaModel;
use crate::cpu::{self, MASKED};
use crate::earlier::{grow_rows, Earlier, Stream};
use crate::error::{Error, Result};
use crate::field::Dims;
use crate::forward::{grown, predicted_rows, predictions, reused};
use crate::roles::HeadMaps;
use crate::trace::{AttentionOptions, Field, Keep, LayerTrace, Trace};

/// One head's steps for the rows the pass computes (n = T − s of them, s rows reused): q,
/// head_out (n, Dk); k, v (T, Dk), those of the key/value head the query head reads
/// (grouped-query attention: `n_head / n_kv_head` heads share one); the scores (n, T).
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

/// One block's row-major steps for the rows the pass computes, (n, D) or (n, F).
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
    /// The keys and values of the block being run, per query head (H, T, Dk), whose first
    /// rows an incremental pass reuses (the recorder holds them, grown from the earlier trace).
    fn reused_kv(&self) -> Option<(&[f32], &[f32])> {
        None
    }
}

/// Hands each head's weights to a function.
struct Visit<F>(F);

/// Another observer, told too of each block's end (a long text's progress).
struct Watched<'o, O> {
    inner: &'o mut O,
    layer_done: &'o mut dyn FnMut(usize),
}

impl<O: Observer> Observer for Watched<'_, O> {
    fn embedding(&mut self, x: &[f32]) {
        self.inner.embedding(x)
    }
    fn head(&mut self, layer: usize, head: usize, steps: &HeadSteps) {
        self.inner.head(layer, head, steps)
    }
    fn block(&mut self, layer: usize, steps: &BlockSteps) {
        self.inner.block(layer, steps);
        (self.layer_done)(layer)
    }
    fn last(&mut self, normed: &[f32]) {
        self.inner.last(normed)
    }
    fn reused_kv(&self) -> Option<(&[f32], &[f32])> {
        self.inner.reused_kv()
    }
}

impl<F: FnMut(usize, usize, &[f32])> Observer for Visit<F> {
    fn head(&mut self, layer: usize, head: usize, steps: &HeadSteps) {
        (self.0)(layer, head, steps.weights)
    }
}

/// Records a `Trace`'s arrays: rows `s..` from the pass, rows `..s` from an earlier trace;
/// only the fields `keep` keeps.
struct Recorder<'a> {
    dims: Dims,
    keep: Keep,
    /// The earlier trace and how many of its rows are reused.
    prev: Option<Earlier<'a>>,
    s: usize,
    /// √d_k's factor (or 1): the old queries against the new keys are scored here.
    scale: f32,
    embedding: Vec<f32>,
    layers: Vec<LayerTrace>,
    /// The block being run.
    block: LayerTrace,
    ln_f: Vec<f32>,
}

impl<'a> Recorder<'a> {
    fn new(
        dims: Dims,
        keep: Keep,
        mut prev: Option<Earlier<'a>>,
        s: usize,
        scale: f32,
    ) -> Recorder<'a> {
        let (t, d) = (dims.t, dims.d_model);
        let mut kept = |which| {
            prev.as_mut()
                .and_then(|p| p.rows(which))
                .map_or_else(|| vec![0.0; t * d], |x| grow_rows(x, s, t, d))
        };
        let (embedding, ln_f) = (kept(Stream::Embedding), kept(Stream::FinalNorm));
        let mut r = Recorder {
            dims,
            keep,
            prev,
            s,
            scale,
            embedding,
            layers: Vec::with_capacity(dims.n_layer),
            block: LayerTrace::default(),
            ln_f,
        };
        r.block = r.start(0);
        r
    }

    /// Block `l`'s trace with the reused rows in place, the rest zero (`MASKED` in the masked
    /// scores): the earlier trace's block `l` is given up to it when owned.
    fn start(&mut self, l: usize) -> LayerTrace {
        let (t, d, s) = (self.dims.t, self.dims.d_model, self.s);
        let old_t = self.prev.as_ref().map_or(0, |p| p.trace().dims.t);
        let mut prev = self.prev.as_mut().and_then(|p| p.layer(l));
        let keep = self.keep;
        // (the pass reads its input from its own rows: the trace's is for the views)
        let input = match prev.as_mut() {
            _ if !keep.keeps(Field::Input) => Vec::new(),
            None => vec![0.0; t * d],
            Some(pl) => grow_rows(pl.field(Field::Input), s, t, d),
        };
        grown(input, prev, &self.dims, (old_t, s), |f| keep.keeps(f))
    }
}

impl Observer for Recorder<'_> {
    fn embedding(&mut self, x: &[f32]) {
        let d = self.dims.d_model;
        self.embedding[self.s * d..].copy_from_slice(x);
    }

    fn head(&mut self, _layer: usize, head: usize, st: &HeadSteps) {
        let (t, dk, s) = (self.dims.t, self.dims.d_k, self.s);
        let l = &mut self.block;
        let (hd, hs) = (head * t * dk, head * t * t);
        l.q[hd + s * dk..hd + t * dk].copy_from_slice(st.q);
        // the reused rows of k and v are in place already (the pass read them from here)
        l.k[hd + s * dk..hd + t * dk].copy_from_slice(&st.k[s * dk..]);
        l.v[hd + s * dk..hd + t * dk].copy_from_slice(&st.v[s * dk..]);
        l.head_out[hd + s * dk..hd + t * dk].copy_from_slice(st.head_out);
        if l.weights.is_empty() {
            return;
        }
        for (field, values) in [
            (&mut l.scores, st.scores),
            (&mut l.scaled, st.scaled),
            (&mut l.masked, st.masked),
            (&mut l.weights, st.weights),
        ] {
            field[hs + s * t..hs + t * t].copy_from_slice(values);
        }
        // the reused queries against the new keys: the upper corner the views show (their
        // masked entries stay MASKED and their weights 0, as the causal mask has them)
        for i in 0..s {
            let qi = &l.q[hd + i * dk..hd + (i + 1) * dk];
            for j in s..t {
                let kj = &st.k[j * dk..(j + 1) * dk];
                let raw: f32 = qi.iter().zip(kj).map(|(a, b)| a * b).sum();
                l.scores[hs + i * t + j] = raw;
                l.scaled[hs + i * t + j] = raw * self.scale;
                l.masked[hs + i * t + j] = MASKED;
            }
        }
    }

    fn block(&mut self, layer: usize, st: &BlockSteps) {
        let next = if layer + 1 < self.dims.n_layer {
            self.start(layer + 1)
        } else {
            LayerTrace::default()
        };
        let mut l = std::mem::replace(&mut self.block, next);
        let s = self.s;
        // a pre-norm block: ln_1 is what attention reads, ln_2 what the FFN reads, and the
        // output the stream after the FFN's residual (as `TraceLayout` lays out pre-LN)
        for (field, values) in [
            (&mut l.input, st.input),
            (&mut l.attn_in, st.attn_in),
            (&mut l.concat, st.concat),
            (&mut l.attn_out, st.attn_out),
            (&mut l.resid_attn, st.resid_attn),
            (&mut l.ln_1, st.attn_in),
            (&mut l.ffn_in, st.ffn_in),
            (&mut l.ffn_hidden, st.ffn_hidden),
            (&mut l.ffn_out, st.ffn_out),
            (&mut l.resid_ffn, st.resid_ffn),
            (&mut l.ln_2, st.ffn_in),
            (&mut l.output, st.resid_ffn),
        ] {
            if !field.is_empty() {
                let width = values.len() / (self.dims.t - s);
                field[s * width..].copy_from_slice(values);
            }
        }
        self.layers.push(l);
    }

    fn last(&mut self, normed: &[f32]) {
        let d = self.dims.d_model;
        self.ln_f[self.s * d..].copy_from_slice(normed);
    }

    fn reused_kv(&self) -> Option<(&[f32], &[f32])> {
        Some((&self.block.k, &self.block.v))
    }
}

impl LlamaModel {
    /// The sizes of a trace of `t` tokens.
    pub fn dims(&self, t: usize) -> Dims {
        self.config.dims(t)
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
        self.visit(ids, opts, visit, true)
    }

    /// A run on `ids` handing every head's weights to `visit`; returns the logits after
    /// every position (`every`) or after the last one.
    fn visit(
        &self,
        ids: &[u32],
        opts: &AttentionOptions,
        visit: impl FnMut(usize, usize, &[f32]),
        every: bool,
    ) -> Result<Vec<f32>> {
        if ids.len() > self.config.context {
            return Err(Error::Options(format!(
                "{} tokens; the model's context is {}",
                ids.len(),
                self.config.context
            )));
        }
        self.pass(ids, opts, &mut Visit(visit), 0, every)
    }

    /// Every head's attention weights of a run on `ids`, and nothing else of it (its logits
    /// after the last position only, not kept): layers × heads × T² values.
    pub fn maps(&self, ids: &[u32], opts: &AttentionOptions) -> Result<HeadMaps> {
        let c = &self.config;
        let n = ids.len() * ids.len();
        HeadMaps::within_budget(c.n_layer * c.n_head, ids.len())?;
        let mut weights = vec![0f32; c.n_layer * c.n_head * n];
        self.visit(
            ids,
            opts,
            |l, h, w| {
                let at = (l * c.n_head + h) * n;
                weights[at..at + n].copy_from_slice(w);
            },
            false,
        )?;
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
        Ok(self.trace_incremental(None, tokens, opts)?.0)
    }

    /// Like `trace`, but reuses the rows of `prev` that `tokens` shares with it at the start
    /// (same options, causal mask on, nothing dropped; `forward::reusable_prefix`): their keys
    /// and values are the key/value cache, and only the new rows are computed. Returns the
    /// trace and whether `prev` was used.
    pub fn trace_incremental(
        &self,
        prev: Option<&Trace>,
        tokens: &[u32],
        opts: &AttentionOptions,
    ) -> Result<(Trace, bool)> {
        self.trace_kept(prev, tokens, opts, Keep::All)
    }

    /// `trace_incremental` keeping only what `keep` says (`Keep::Streams`: no maps, which
    /// `Trace::head_rows` computes when asked); `prev` is reused if it kept at least as much. A
    /// trace larger than `TRACE_BUDGET` is refused with the size it would need.
    pub fn trace_kept(
        &self,
        prev: Option<&Trace>,
        tokens: &[u32],
        opts: &AttentionOptions,
        keep: Keep,
    ) -> Result<(Trace, bool)> {
        self.trace_watched(prev.map(Earlier::Borrowed), tokens, opts, keep, &mut |_| {})
    }

    /// `trace_kept`, telling `layer_done` each block's index as it finishes; an owned earlier
    /// trace gives its vectors up to the new one (or is dropped first when none can be
    /// reused).
    pub fn trace_watched(
        &self,
        prev: Option<Earlier>,
        tokens: &[u32],
        opts: &AttentionOptions,
        keep: Keep,
        layer_done: &mut dyn FnMut(usize),
    ) -> Result<(Trace, bool)> {
        let dropped = tokens.len().saturating_sub(self.config.context);
        let ids = &tokens[dropped..];
        let dims = self.dims(ids.len());
        keep.within_budget(&dims)?;
        let fits = |tr: &Trace| tr.dims == self.dims(tr.dims.t) && tr.kept().covers(keep);
        let (prev, s) = reused(prev, fits, (ids, dropped), opts);
        let reused = prev.is_some();
        let scale = opts.scale_factor(dims.d_k);
        let mut rec = Recorder::new(dims, keep, prev, s, scale);
        let every = keep.every_prediction();
        let mut watched = Watched {
            inner: &mut rec,
            layer_done,
        };
        let new_logits = self.pass(ids, opts, &mut watched, s, every)?;
        let (logits, probs) = predictions(
            rec.prev.as_mut(),
            (s, ids.len()),
            dims.vocab,
            new_logits,
            every,
        );
        let trace = Trace {
            dims,
            tokens: ids.to_vec(),
            dropped,
            options: opts.clone(),
            embedding: rec.embedding,
            layers: rec.layers,
            ln_f: Some(rec.ln_f),
            logits,
            probs,
            heads: Vec::new(),
            thumbnails: None,
        };
        Ok((trace, reused))
    }

    /// The forward pass over `ids` (at most the context), telling `obs` each step: rows `s..`
    /// of it, the first `s` rows' keys and values read from the observer (`reused_kv`: an
    /// earlier trace's, grown into the block it records). Returns the logits of the rows
    /// computed (`every`), or of the last one only.
    pub(crate) fn pass(
        &self,
        ids: &[u32],
        opts: &AttentionOptions,
        obs: &mut impl Observer,
        s: usize,
        every: bool,
    ) -> Result<Vec<f32>> {
        let c = &self.config;
        let (t, d, hd, f) = (ids.len(), c.n_embd, c.head_dim, c.n_ff);
        if t == 0 {
            return Err(Error::EmptyInput);
        }
        opts.validate_for(c.n_layer, c.n_head)?;
        if let Some(w) = c.sliding_window.filter(|&w| t > w) {
            return Err(Error::Options(format!(
                "{t} tokens; this model's attention slides over a window of {w}, which is not read yet"
            )));
        }
        let n = t - s;
        let mut x = vec![0f32; n * d];
        for (p, &id) in ids.iter().enumerate() {
            if id as usize >= c.vocab_size {
                return Err(Error::TokenOutOfRange {
                    id,
                    position: p,
                    vocab: c.vocab_size,
                });
            }
            if p >= s {
                self.embed
                    .rows_into(id as usize, &mut x[(p - s) * d..(p - s + 1) * d]);
            }
        }
        obs.embedding(&x);
        let (q_w, kv_w) = (c.n_head * hd, c.n_kv_head * hd);
        let rows = |w: usize| vec![0f32; n * w];
        let (mut attn_in, mut attn_out, mut resid_attn) = (rows(d), rows(d), rows(d));
        let (mut ffn_in, mut ffn_out, mut resid_ffn) = (rows(d), rows(d), rows(d));
        let (mut q, mut k, mut v) = (rows(q_w), vec![0f32; t * kv_w], vec![0f32; t * kv_w]);
        let (mut qh, mut head_out) = (rows(hd), rows(hd));
        let (mut kh, mut vh) = (vec![0f32; t * hd], vec![0f32; t * hd]);
        let (mut scores, mut scaled, mut masked, mut weights) =
            (rows(t), rows(t), rows(t), rows(t));
        let mut concat = rows(q_w);
        let (mut gate, mut up) = (rows(f), rows(f));
        let group = c.n_head / c.n_kv_head;
        let scale = opts.scale_factor(hd);
        // the rotation at every position; the new rows are at positions s..
        let angles = rope_table(&c.inv_freq(), t);
        // one head's columns of a (rows, width) matrix, as a (rows, Dk) one
        let columns = |from: &[f32], width: usize, h: usize, to: &mut [f32]| {
            for (row, out) in from.chunks_exact(width).zip(to.chunks_exact_mut(hd)) {
                out.copy_from_slice(&row[h * hd..(h + 1) * hd]);
            }
        };
        for (l, layer) in self.layers.iter().enumerate() {
            rms_norm(&x, &layer.attn_norm, d, c.rms_eps, &mut attn_in);
            layer.q.matmul_t(&attn_in, n, &mut q);
            // keys and values of every position: the reused rows' from the earlier trace
            // (each key/value head as the first query head of its group holds it)
            let (k_new, v_new) = (&mut k[s * kv_w..], &mut v[s * kv_w..]);
            layer.k.matmul_t(&attn_in, n, k_new);
            layer.v.matmul_t(&attn_in, n, v_new);
            add_bias(&mut q, layer.bias.q.as_ref());
            add_bias(k_new, layer.bias.k.as_ref());
            add_bias(v_new, layer.bias.v.as_ref());
            rope(&mut q, c.n_head, hd, &angles[s * hd..], c.rope_pairs);
            rope(k_new, c.n_kv_head, hd, &angles[s * hd..], c.rope_pairs);
            if s > 0 {
                let (pk, pv) = obs
                    .reused_kv()
                    .filter(|(pk, _)| pk.len() >= c.n_head * t * hd)
                    .ok_or(Error::Options(
                        "an incremental pass without the earlier keys and values".into(),
                    ))?;
                for g in 0..c.n_kv_head {
                    let from = g * group * t * hd;
                    for r in 0..s {
                        let at = r * kv_w + g * hd;
                        k[at..at + hd].copy_from_slice(&pk[from + r * hd..from + (r + 1) * hd]);
                        v[at..at + hd].copy_from_slice(&pv[from + r * hd..from + (r + 1) * hd]);
                    }
                }
            }
            for head in 0..c.n_head {
                let kv = head / group;
                columns(&q, q_w, head, &mut qh);
                // a key/value head's columns once for the query heads that share it
                if head % group == 0 {
                    columns(&k, kv_w, kv, &mut kh);
                    columns(&v, kv_w, kv, &mut vh);
                }
                cpu::attn_scores(
                    &qh,
                    &kh,
                    (n, t, hd),
                    scale,
                    opts.causal_mask.then_some(s),
                    &mut scores,
                    &mut scaled,
                    &mut masked,
                );
                cpu::softmax_rows(&masked, t, opts.temperature, &mut weights);
                if opts.ablate.contains(&(l, head)) {
                    head_out.fill(0.0);
                } else {
                    cpu::attn_v(&weights, &vh, n, t, hd, &mut head_out);
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
            layer.o.matmul_t(&concat, n, &mut attn_out);
            add_bias(&mut attn_out, layer.bias.o.as_ref());
            cpu::residual_add(&x, &attn_out, &mut resid_attn);
            rms_norm(&resid_attn, &layer.ffn_norm, d, c.rms_eps, &mut ffn_in);
            layer.gate.matmul_t(&ffn_in, n, &mut gate);
            layer.up.matmul_t(&ffn_in, n, &mut up);
            swiglu(&mut gate, &up);
            layer.down.matmul_t(&gate, n, &mut ffn_out);
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
        let rows = predicted_rows(t, s, every);
        let mut logits = vec![0f32; rows * c.vocab_size];
        self.head()
            .matmul_t(&attn_in[(n - rows) * d..], rows, &mut logits);
        Ok(logits)
    }
}
