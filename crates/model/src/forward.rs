//! The CPU reference forward pass: embed → blocks → (ln_f) → logits, recording a `Trace`.
//!
//! `forward_incremental` reuses a previous Trace for the tokens the new input shares with it
//! at the start: with the causal mask on, a row depends only on the tokens up to its own
//! position, so only the rows from the first changed token on (and the changed key columns
//! of the raw and scaled scores) are computed. Typing at the end, even when the last token
//! changes (BPE merges), and deleting at the end both stay incremental.

use crate::config::{Config, LnPlacement};
use crate::cpu::{self, MASKED};
use crate::error::{Error, Result};
use crate::layout::{BlockRow, TraceLayout};
use crate::trace::{AttentionOptions, Dims, LayerTrace, Trace};
use crate::weights::Model;

/// Checks the options and token ids, and keeps the last `n_positions` tokens.
/// Returns the tokens to run and how many were dropped.
pub fn prepare<'a>(
    c: &Config,
    tokens: &'a [u32],
    opts: &AttentionOptions,
) -> Result<(&'a [u32], usize)> {
    opts.validate(c)?;
    if tokens.is_empty() {
        return Err(Error::EmptyInput);
    }
    if let Some((position, &id)) = tokens
        .iter()
        .enumerate()
        .find(|(_, &id)| id as usize >= c.vocab_size)
    {
        return Err(Error::TokenOutOfRange {
            id,
            position,
            vocab: c.vocab_size,
        });
    }
    let dropped = tokens.len().saturating_sub(c.n_positions);
    Ok((&tokens[dropped..], dropped))
}

/// Runs the whole model on `tokens` and records every intermediate.
pub fn forward(model: &Model, tokens: &[u32], opts: &AttentionOptions) -> Result<Trace> {
    let (run, dropped) = prepare(&model.config, tokens, opts)?;
    Ok(forward_from(model, run, dropped, opts, None))
}

/// Like `forward`, but reuses the rows of `prev` that `tokens` shares with it at the start
/// (same options, causal mask on, nothing dropped); otherwise a full forward.
/// Returns the trace and whether the cache was used.
pub fn forward_incremental(
    model: &Model,
    prev: Option<&Trace>,
    tokens: &[u32],
    opts: &AttentionOptions,
) -> Result<(Trace, bool)> {
    let (run, dropped) = prepare(&model.config, tokens, opts)?;
    let reuse = prev
        .and_then(|p| reusable_prefix(&p.tokens, &p.options, run, dropped, opts).map(|s| (p, s)));
    Ok((
        forward_from(model, run, dropped, opts, reuse),
        reuse.is_some(),
    ))
}

/// How many rows of an earlier forward over `prev` (with `prev_opts`) are still valid rows
/// of a forward over `run`: those of the tokens both share at the start (at most all but
/// the last row of `run`, so at least one row is computed), when the options are the same,
/// the causal mask is on (later tokens cannot change earlier rows) and nothing is dropped
/// (positions are unchanged); `None` when no row can be reused.
pub fn reusable_prefix(
    prev: &[u32],
    prev_opts: &AttentionOptions,
    run: &[u32],
    dropped: usize,
    opts: &AttentionOptions,
) -> Option<usize> {
    if !(opts.causal_mask && dropped == 0 && prev_opts == opts) {
        return None;
    }
    let common = prev.iter().zip(run).take_while(|(a, b)| a == b).count();
    let s = common.min(run.len().saturating_sub(1));
    (s > 0).then_some(s)
}

/// (H, T, width) per-head rows re-laid-out from `old` (H, old_t, width) for `t` positions,
/// keeping each head's first `keep` rows.
fn reuse_heads(
    old: &[f32],
    h: usize,
    old_t: usize,
    keep: usize,
    t: usize,
    width: usize,
) -> Vec<f32> {
    let mut out = vec![0.0; h * t * width];
    for hh in 0..h {
        out[hh * t * width..][..keep * width]
            .copy_from_slice(&old[hh * old_t * width..][..keep * width]);
    }
    out
}

/// (H, T, T) matrices: the top-left `keep`×`keep` corner of each old (H, old_t, old_t)
/// matrix, the rest `fill`.
fn reuse_square(old: &[f32], h: usize, old_t: usize, keep: usize, t: usize, fill: f32) -> Vec<f32> {
    let mut out = vec![fill; h * t * t];
    for hh in 0..h {
        for i in 0..keep {
            out[(hh * t + i) * t..][..keep]
                .copy_from_slice(&old[(hh * old_t + i) * old_t..][..keep]);
        }
    }
    out
}

/// A row-major (T, W) buffer keeping the first `keep` rows of `old`.
fn reuse_rows(old: &[f32], keep: usize, t: usize, width: usize) -> Vec<f32> {
    let mut out = vec![0.0; t * width];
    out[..keep * width].copy_from_slice(&old[..keep * width]);
    out
}

/// The forward pass over rows `s..T`, reusing rows `..s` of `prev` when given as
/// `Some((prev, s))` (s = 0 without one).
fn forward_from(
    model: &Model,
    tokens: &[u32],
    dropped: usize,
    opts: &AttentionOptions,
    reuse: Option<(&Trace, usize)>,
) -> Trace {
    let c = &model.config;
    let w = &model.weights;
    let (t, d, h, dk, f, v) = (
        tokens.len(),
        c.n_embd,
        c.n_head,
        c.d_k(),
        c.d_ff(),
        c.vocab_size,
    );
    let (prev, s) = (reuse.map(|(p, _)| p), reuse.map_or(0, |(_, s)| s)); // s: first new row
    let old_t = prev.map_or(0, |p| p.dims.t);
    let n = t - s; // new rows
    let eps = c.layer_norm_epsilon;
    let scale = opts.scale_factor(dk);
    let post = c.ln_placement == LnPlacement::Post;
    let layout = TraceLayout::new(c);

    // embed: token (× √d_model with scale_embedding) + position, new rows only
    let mut embedding =
        prev.map_or_else(|| vec![0.0; t * d], |p| reuse_rows(&p.embedding, s, t, d));
    cpu::embed(
        &w.wte,
        &w.wpe,
        &tokens[s..],
        s,
        d,
        c.embedding_scale(),
        &mut embedding[s * d..],
    );

    let mut layers = Vec::with_capacity(c.n_layer);
    let mut qkv = vec![0.0; n * 3 * d]; // (n, 3D) scratch
    let mut tmp = vec![0.0; s * n]; // (s, n) scratch: old queries × new keys
    for (li, lw) in w.layers.iter().enumerate() {
        let pl = prev.map(|p| &p.layers[li]);
        let grow = |f: fn(&LayerTrace) -> &Vec<f32>, width: usize| {
            pl.map_or_else(|| vec![0.0; t * width], |p| reuse_rows(f(p), s, t, width))
        };
        // the residual stream entering the block: the previous block's output
        let input = layers
            .last()
            .map_or(&embedding, |l: &LayerTrace| &l.output)
            .clone();
        // what attention reads: LN(input) (pre-LN), or the input itself (post-LN: attn_in
        // repeats it, filled in at the end of the block from the layout)
        let mut attn_in = grow(|l| &l.attn_in, d);
        if layout.same_as(BlockRow::AttnIn).is_none() {
            cpu::layernorm(
                &input[s * d..],
                &lw.ln_1_g,
                &lw.ln_1_b,
                d,
                eps,
                &mut attn_in[s * d..],
            );
        }
        let x_attn = match layout.stored(BlockRow::AttnIn) {
            BlockRow::Input => &input,
            _ => &attn_in,
        };

        // Q, K, V = X·W_Q, X·W_K, X·W_V (one fused c_attn matmul), split into heads
        cpu::linear(
            &x_attn[s * d..],
            &lw.c_attn_w,
            &lw.c_attn_b,
            n,
            d,
            3 * d,
            &mut qkv,
        );
        let heads = |p: Option<&Vec<f32>>| {
            p.map_or_else(
                || vec![0.0; h * t * dk],
                |old| reuse_heads(old, h, old_t, s, t, dk),
            )
        };
        let (mut q, mut k, mut vv) = (
            heads(pl.map(|l| &l.q)),
            heads(pl.map(|l| &l.k)),
            heads(pl.map(|l| &l.v)),
        );
        for r in 0..n {
            let row = &qkv[r * 3 * d..][..3 * d];
            for hh in 0..h {
                let dst = (hh * t + s + r) * dk..(hh * t + s + r + 1) * dk;
                q[dst.clone()].copy_from_slice(&row[hh * dk..][..dk]);
                k[dst.clone()].copy_from_slice(&row[d + hh * dk..][..dk]);
                vv[dst].copy_from_slice(&row[2 * d + hh * dk..][..dk]);
            }
        }

        let square = |p: Option<&Vec<f32>>, fill: f32| {
            p.map_or_else(
                || vec![fill; h * t * t],
                |old| reuse_square(old, h, old_t, s, t, fill),
            )
        };
        let mut scores = square(pl.map(|l| &l.scores), 0.0);
        let mut scaled = square(pl.map(|l| &l.scaled), 0.0);
        let mut masked = square(pl.map(|l| &l.masked), MASKED);
        let mut weights = square(pl.map(|l| &l.weights), 0.0);
        let mut head_out = heads(pl.map(|l| &l.head_out));
        for hh in 0..h {
            let qh = &q[hh * t * dk..][..t * dk];
            let kh = &k[hh * t * dk..][..t * dk];
            let vh = &vv[hh * t * dk..][..t * dk];
            let sc = &mut scores[hh * t * t..][..t * t];
            let scd = &mut scaled[hh * t * t..][..t * t];
            let m = &mut masked[hh * t * t..][..t * t];
            // new query rows against every key: QKᵀ, ÷√d_k (or ÷1), causal mask
            cpu::attn_scores(
                &qh[s * dk..],
                kh,
                (n, t, dk),
                scale,
                opts.causal_mask.then_some(s),
                &mut sc[s * t..],
                &mut scd[s * t..],
                &mut m[s * t..],
            );
            // …and old query rows against the new keys (the upper triangle the UI shows; their
            // masked entries keep the MASKED fill of the future)
            if s > 0 {
                let blk = &mut tmp[..];
                cpu::matmul_into(&qh[..s * dk], &kh[s * dk..], s, dk, n, true, blk, 0.0);
                for i in 0..s {
                    sc[i * t + s..][..n].copy_from_slice(&blk[i * n..][..n]);
                    cpu::scale_scores(&sc[i * t + s..][..n], scale, &mut scd[i * t + s..][..n]);
                }
            }
            // softmax(masked / τ) for the new rows
            let wt = &mut weights[hh * t * t..][..t * t];
            cpu::softmax_rows(&m[s * t..], t, opts.temperature, &mut wt[s * t..]);
            // weights · V; an ablated head contributes nothing
            let out = &mut head_out[hh * t * dk..][..t * dk];
            if opts.ablate.contains(&(li, hh)) {
                out[s * dk..].fill(0.0);
            } else {
                cpu::attn_v(&wt[s * t..], vh, n, t, dk, &mut out[s * dk..]);
            }
        }

        // concatenate heads, then W_O
        let mut concat = grow(|l| &l.concat, d);
        for r in s..t {
            for hh in 0..h {
                concat[r * d + hh * dk..][..dk]
                    .copy_from_slice(&head_out[(hh * t + r) * dk..][..dk]);
            }
        }
        let mut attn_out = grow(|l| &l.attn_out, d);
        cpu::linear(
            &concat[s * d..],
            &lw.c_proj_w,
            &lw.c_proj_b,
            n,
            d,
            d,
            &mut attn_out[s * d..],
        );
        let mut resid_attn = grow(|l| &l.resid_attn, d);
        cpu::residual_add(
            &input[s * d..],
            &attn_out[s * d..],
            &mut resid_attn[s * d..],
        );

        // Add & LayerNorm (post: ln_1, which the FFN reads) or the LayerNorm before the FFN
        // (pre: ffn_in, with ln_2's weights): either way into the field the FFN reads
        let mut ln_1 = grow(|l| &l.ln_1, d);
        let mut ffn_in = grow(|l| &l.ffn_in, d);
        let (g, b) = if post {
            (&lw.ln_1_g, &lw.ln_1_b)
        } else {
            (&lw.ln_2_g, &lw.ln_2_b)
        };
        let x_ffn = match layout.stored(BlockRow::FfnIn) {
            BlockRow::Ln1 => &mut ln_1,
            _ => &mut ffn_in,
        };
        cpu::layernorm(&resid_attn[s * d..], g, b, d, eps, &mut x_ffn[s * d..]);
        let x_ffn = &*x_ffn;
        let stream = if post { x_ffn } else { &resid_attn };

        // FFN: GELU(x·W1 + b1)·W2 + b2
        let mut ffn_hidden = grow(|l| &l.ffn_hidden, f);
        cpu::linear(
            &x_ffn[s * d..],
            &lw.fc_w,
            &lw.fc_b,
            n,
            d,
            f,
            &mut ffn_hidden[s * f..],
        );
        cpu::gelu(&mut ffn_hidden[s * f..], c.activation_function);
        let mut ffn_out = grow(|l| &l.ffn_out, d);
        cpu::linear(
            &ffn_hidden[s * f..],
            &lw.fc_proj_w,
            &lw.fc_proj_b,
            n,
            f,
            d,
            &mut ffn_out[s * d..],
        );
        let mut resid_ffn = grow(|l| &l.resid_ffn, d);
        cpu::residual_add(&stream[s * d..], &ffn_out[s * d..], &mut resid_ffn[s * d..]);
        let mut ln_2 = grow(|l| &l.ln_2, d);
        if layout.same_as(BlockRow::Ln2).is_none() {
            cpu::layernorm(
                &resid_ffn[s * d..],
                &lw.ln_2_g,
                &lw.ln_2_b,
                d,
                eps,
                &mut ln_2[s * d..],
            );
        }
        let output = grow(|l| &l.output, d);

        let mut layer = LayerTrace {
            input,
            attn_in,
            q,
            k,
            v: vv,
            scores,
            scaled,
            masked,
            weights,
            head_out,
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
        };
        // the fields that repeat another (attn_in, ffn_in, output post-LN; ln_1, ln_2,
        // output pre-LN): their new rows
        layout.fill_shared(&mut layer, s, c);
        layers.push(layer);
    }

    let x = layers.last().map_or(&embedding, |l| &l.output); // (T, D)
                                                             // final LayerNorm (GPT-2; post-LN models usually have none)
    let ln_f = w.ln_f.as_ref().map(|(g, b)| {
        let mut out = prev
            .and_then(|p| p.ln_f.as_ref())
            .map_or_else(|| vec![0.0; t * d], |o| reuse_rows(o, s, t, d));
        cpu::layernorm(&x[s * d..], g, b, d, eps, &mut out[s * d..]);
        out
    });
    let last = ln_f.as_ref().unwrap_or(x);

    // logits = h · wteᵀ (tied lm head), then softmax
    let mut logits = prev.map_or_else(|| vec![0.0; t * v], |p| reuse_rows(&p.logits, s, t, v));
    cpu::matmul_into(
        &last[s * d..],
        &w.wte,
        n,
        d,
        v,
        true,
        &mut logits[s * v..],
        0.0,
    );
    let mut probs = prev.map_or_else(|| vec![0.0; t * v], |p| reuse_rows(&p.probs, s, t, v));
    cpu::softmax_rows(&logits[s * v..], v, 1.0, &mut probs[s * v..]);

    Trace {
        dims: Dims::new(c, t),
        tokens: tokens.to_vec(),
        dropped,
        options: opts.clone(),
        embedding,
        layers,
        ln_f,
        logits,
        probs,
    }
}
