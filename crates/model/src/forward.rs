//! The CPU reference forward pass: embed → blocks → (ln_f) → logits, recording a `Trace`.
//!
//! `forward_incremental` reuses a previous Trace for the tokens the new input shares with it
//! at the start: with the causal mask on, a row depends only on the tokens up to its own
//! position, so only the rows from the first changed token on (and the changed key columns
//! of the raw and scaled scores) are computed. Typing at the end, even when the last token
//! changes (BPE merges), and deleting at the end both stay incremental.

use crate::config::{Config, LnPlacement};
use crate::cpu::{self, MASKED};
use crate::earlier::{grow_heads, grow_rows, grow_square, Earlier, Held, Stream};
use crate::error::{Error, Result};
use crate::field::{Dims, Shape};
use crate::layout::TraceLayout;
use crate::trace::{AttentionOptions, Field, Keep, LayerTrace, Trace};
use crate::weights::{LayerWeights, Model};

/// Checks the options and token ids, and keeps the last `n_positions` tokens.
/// Returns the tokens to run and how many were dropped.
pub fn prepare<'a>(
    c: &Config,
    tokens: &'a [u32],
    opts: &AttentionOptions,
) -> Result<(&'a [u32], usize)> {
    opts.validate(c)?;
    check_tokens(tokens, c.vocab_size)?;
    let dropped = tokens.len().saturating_sub(c.n_positions);
    Ok((&tokens[dropped..], dropped))
}

/// Refuses an empty input and a token id outside a vocabulary of `vocab` (naming its
/// position), for any architecture's forward.
pub fn check_tokens(tokens: &[u32], vocab: usize) -> Result<()> {
    if tokens.is_empty() {
        return Err(Error::EmptyInput);
    }
    match tokens.iter().position(|&id| id as usize >= vocab) {
        Some(position) => Err(Error::TokenOutOfRange {
            id: tokens[position],
            position,
            vocab,
        }),
        None => Ok(()),
    }
}

/// Runs the whole model on `tokens` and records every intermediate.
pub fn forward(model: &Model, tokens: &[u32], opts: &AttentionOptions) -> Result<Trace> {
    Ok(forward_kept(model, None, tokens, opts, Keep::All)?.0)
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
    forward_kept(model, prev, tokens, opts, Keep::All)
}

/// `forward_incremental` keeping only what `keep` says (`Keep::Streams`: no maps, which
/// `Trace::head_rows` computes when asked). An earlier trace is reused if it kept at least
/// as much (`Keep::covers`). A trace larger than `TRACE_BUDGET` is refused with the size it would need.
pub fn forward_kept(
    model: &Model,
    prev: Option<&Trace>,
    tokens: &[u32],
    opts: &AttentionOptions,
    keep: Keep,
) -> Result<(Trace, bool)> {
    forward_watched(
        model,
        prev.map(Earlier::Borrowed),
        tokens,
        opts,
        keep,
        &mut |_| {},
    )
}

/// `forward_kept`, telling `layer_done` each block's index as it finishes; an owned earlier
/// trace gives its vectors up to the new one (or is dropped first when none can be reused).
pub fn forward_watched(
    model: &Model,
    prev: Option<Earlier>,
    tokens: &[u32],
    opts: &AttentionOptions,
    keep: Keep,
    layer_done: &mut dyn FnMut(usize),
) -> Result<(Trace, bool)> {
    let (run, dropped) = prepare(&model.config, tokens, opts)?;
    keep.within_budget(&Dims::new(&model.config, run.len()))?;
    let (prev, s) = reused(prev, |p| p.kept().covers(keep), (run, dropped), opts);
    let reused = prev.is_some();
    Ok((
        forward_from(model, run, dropped, opts, (prev, s, keep), layer_done),
        reused,
    ))
}

/// The earlier trace a run over `run` (after `dropped` tokens) reuses, and how many of its
/// rows (`reusable_prefix`): `prev` when it `fits` the run and shares rows with it; else none
/// and 0 — an owned one dropped here, before the run allocates its own.
pub(crate) fn reused<'a>(
    prev: Option<Earlier<'a>>,
    fits: impl Fn(&Trace) -> bool,
    (run, dropped): (&[u32], usize),
    opts: &AttentionOptions,
) -> (Option<Earlier<'a>>, usize) {
    let s = prev.as_ref().and_then(|p| {
        let tr = p.trace();
        reusable_prefix(&tr.tokens, &tr.options, run, dropped, opts).filter(|_| fits(tr))
    });
    match s {
        Some(s) => (prev, s),
        None => (None, 0),
    }
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

/// A block's trace for `dims.t` positions with `input` (the stream entering it): of every
/// other field the first `s` rows (per head, the top-left s × s corner of a square field)
/// taken from `prev` — the same block of an earlier trace over `old_t` positions, where it
/// holds the field — and the rest zero (`MASKED` in the masked scores: the future's fill until
/// a row is computed). A field `wanted` refuses stays empty.
pub(crate) fn grown(
    input: Vec<f32>,
    mut prev: Option<Held<LayerTrace>>,
    dims: &Dims,
    (old_t, s): (usize, usize),
    wanted: impl Fn(Field) -> bool,
) -> LayerTrace {
    let (t, h, dk) = (dims.t, dims.n_head, dims.d_k);
    let mut l = LayerTrace {
        input,
        ..LayerTrace::default()
    };
    for f in Field::ALL
        .into_iter()
        .filter(|&f| f != Field::Input && wanted(f))
    {
        let fill = if f == Field::Masked { MASKED } else { 0.0 };
        let len = f.shape().len(dims);
        *f.of_mut(&mut l) = match (prev.as_mut().map(|p| p.field(f)), f.shape()) {
            (None, _) => vec![fill; len],
            (Some(p), _) if p.is_empty() => vec![fill; len],
            (Some(p), Shape::Rows(_)) => grow_rows(p, s, t, len / t),
            (Some(p), Shape::Heads) => grow_heads(p, (h, old_t), s, t, dk),
            (Some(p), Shape::Square) => grow_square(p, (h, old_t), s, t, fill),
        };
    }
    l
}

/// How many rows of logits a pass over `t` tokens with `s` reused computes: the new ones, or
/// the last alone (`every`: whether the trace keeps every position's prediction).
pub(crate) fn predicted_rows(t: usize, s: usize, every: bool) -> usize {
    if every {
        t - s
    } else {
        1
    }
}

/// A trace's next-token logits and probabilities: `new`, the logits of the rows a pass over
/// `t` tokens computed (`predicted_rows`), after the first `s` rows of `prev`'s when the
/// trace keeps every position's (`every`; an owned earlier trace's move and grow in place);
/// and their softmax.
pub(crate) fn predictions(
    prev: Option<&mut Earlier>,
    (s, t): (usize, usize),
    v: usize,
    new: Vec<f32>,
    every: bool,
) -> (Vec<f32>, Vec<f32>) {
    let n = new.len();
    let (logits, mut probs) = match prev.filter(|_| every) {
        // a fresh run's logits are the pass's own (no copy: at 1,000 tokens they are 200 MB)
        None => (new, vec![0.0; n]),
        Some(p) => {
            let mut rows = |which| {
                p.rows(which)
                    .map_or_else(|| vec![0.0; t * v], |x| grow_rows(x, s, t, v))
            };
            let mut all = rows(Stream::Logits);
            all[s * v..].copy_from_slice(&new);
            (all, rows(Stream::Probs))
        }
    };
    let from = logits.len() - n;
    cpu::softmax_rows(&logits[from..], v, 1.0, &mut probs[from..]);
    (logits, probs)
}

/// Scratch space of one pass, reused by every block.
struct Scratch {
    /// (n, 3D): the fused Q, K, V projection of the new rows.
    qkv: Vec<f32>,
    /// (s, n): the old queries against the new keys.
    old_new: Vec<f32>,
    /// A head's four maps for the new rows, (n, T) each, when the trace keeps none.
    maps: [Vec<f32>; 4],
}

/// The forward pass over rows `s..T`, reusing rows `..s` of `prev` when given (s = 0
/// without one).
fn forward_from(
    model: &Model,
    tokens: &[u32],
    dropped: usize,
    opts: &AttentionOptions,
    (mut prev, s, keep): (Option<Earlier>, usize, Keep),
    layer_done: &mut dyn FnMut(usize),
) -> Trace {
    let c = &model.config;
    let w = &model.weights;
    let (t, d, v) = (tokens.len(), c.n_embd, c.vocab_size);
    let dims = Dims::new(c, t);
    let old_t = prev.as_ref().map_or(0, |p| p.trace().dims.t);
    let n = t - s; // new rows

    // embed: token (× √d_model with scale_embedding) + position, new rows only
    let mut embedding = prev
        .as_mut()
        .and_then(|p| p.rows(Stream::Embedding))
        .map_or_else(|| vec![0.0; t * d], |p| grow_rows(p, s, t, d));
    cpu::embed(
        &w.wte,
        &w.wpe,
        &tokens[s..],
        s,
        d,
        c.embedding_scale(),
        &mut embedding[s * d..],
    );

    let mut layers: Vec<LayerTrace> = Vec::with_capacity(c.n_layer);
    let maps = keep.keeps(Field::Weights);
    let mut scratch = Scratch {
        qkv: vec![0.0; n * 3 * d],
        old_new: vec![0.0; s * n],
        maps: std::array::from_fn(|_| if maps { Vec::new() } else { vec![0.0; n * t] }),
    };
    for (li, lw) in w.layers.iter().enumerate() {
        // the residual stream entering the block: the previous block's output
        let input = layers.last().map_or(&embedding, |l| &l.output).clone();
        // the block is computed in place, so every row field is there while it runs; the
        // maps only when kept (else a head's go through `scratch.maps`)
        let earlier = prev.as_mut().and_then(|p| p.layer(li));
        let mut layer = grown(input, earlier, &dims, (old_t, s), |f| {
            maps || f.shape() != Shape::Square
        });
        block(c, lw, opts, li, &mut layer, s, &mut scratch);
        for f in Field::ALL.into_iter().filter(|&f| !keep.keeps(f)) {
            *f.of_mut(&mut layer) = Vec::new();
        }
        layers.push(layer);
        layer_done(li);
    }

    let x = layers.last().map_or(&embedding, |l| &l.output); // (T, D)
    let eps = c.layer_norm_epsilon;
    // final LayerNorm (GPT-2; post-LN models usually have none)
    let ln_f = w.ln_f.as_ref().map(|(g, b)| {
        let mut out = prev
            .as_mut()
            .and_then(|p| p.rows(Stream::FinalNorm))
            .map_or_else(|| vec![0.0; t * d], |o| grow_rows(o, s, t, d));
        cpu::layernorm(&x[s * d..], g, b, d, eps, &mut out[s * d..]);
        out
    });
    let last = ln_f.as_ref().unwrap_or(x);

    // logits = h · wteᵀ (tied lm head), then softmax: the new rows', or only the last
    // position's when the trace keeps no more
    let every = keep.every_prediction();
    let rows = predicted_rows(t, s, every);
    let mut new = vec![0.0; rows * v];
    cpu::matmul_into(
        &last[(t - rows) * d..],
        &w.wte,
        rows,
        d,
        v,
        true,
        &mut new,
        0.0,
    );
    let (logits, probs) = predictions(prev.as_mut(), (s, t), v, new, every);

    Trace {
        dims,
        tokens: tokens.to_vec(),
        dropped,
        options: opts.clone(),
        embedding,
        layers,
        ln_f,
        logits,
        probs,
        heads: Vec::new(),
        thumbnails: None,
    }
}

/// Rows `s..` of block `li`'s trace `l`, whose `input` and rows `..s` are already there:
/// attention (every head), the residual sums, the LayerNorms and the FFN.
fn block(
    c: &Config,
    lw: &LayerWeights,
    opts: &AttentionOptions,
    li: usize,
    l: &mut LayerTrace,
    s: usize,
    scratch: &mut Scratch,
) {
    let (d, h, dk, f) = (c.n_embd, c.n_head, c.d_k(), c.d_ff());
    let t = l.input.len() / d;
    let n = t - s;
    let eps = c.layer_norm_epsilon;
    let post = c.ln_placement == LnPlacement::Post;
    let layout = TraceLayout::new(c);

    // what attention reads: LN(input) (pre-LN), or the input itself (post-LN: attn_in
    // repeats it, filled in at the end of the block from the layout)
    if layout.same_as(Field::AttnIn).is_none() {
        cpu::layernorm(
            &l.input[s * d..],
            &lw.ln_1_g,
            &lw.ln_1_b,
            d,
            eps,
            &mut l.attn_in[s * d..],
        );
    }
    let x_attn = layout.stored(Field::AttnIn).of(l);

    // Q, K, V = X·W_Q, X·W_K, X·W_V (one fused c_attn matmul), split into heads
    let qkv = &mut scratch.qkv;
    cpu::linear(
        &x_attn[s * d..],
        &lw.c_attn_w,
        &lw.c_attn_b,
        n,
        d,
        3 * d,
        qkv,
    );
    for r in 0..n {
        let row = &qkv[r * 3 * d..][..3 * d];
        for hh in 0..h {
            let dst = (hh * t + s + r) * dk..(hh * t + s + r + 1) * dk;
            l.q[dst.clone()].copy_from_slice(&row[hh * dk..][..dk]);
            l.k[dst.clone()].copy_from_slice(&row[d + hh * dk..][..dk]);
            l.v[dst].copy_from_slice(&row[2 * d + hh * dk..][..dk]);
        }
    }
    for hh in 0..h {
        let ablated = opts.ablate.contains(&(li, hh));
        head(l, hh, (t, dk), s, opts, ablated, scratch);
    }

    // concatenate heads, then W_O
    for r in s..t {
        for hh in 0..h {
            l.concat[r * d + hh * dk..][..dk]
                .copy_from_slice(&l.head_out[(hh * t + r) * dk..][..dk]);
        }
    }
    cpu::linear(
        &l.concat[s * d..],
        &lw.c_proj_w,
        &lw.c_proj_b,
        n,
        d,
        d,
        &mut l.attn_out[s * d..],
    );
    cpu::residual_add(
        &l.input[s * d..],
        &l.attn_out[s * d..],
        &mut l.resid_attn[s * d..],
    );

    // Add & LayerNorm (post: ln_1, which the FFN reads) or the LayerNorm before the FFN
    // (pre: ffn_in, with ln_2's weights): either way into the field the FFN reads
    let (g, b) = if post {
        (&lw.ln_1_g, &lw.ln_1_b)
    } else {
        (&lw.ln_2_g, &lw.ln_2_b)
    };
    // the field the FFN reads: ln_1 (post-LN) or ffn_in (pre-LN), borrowed apart from the rest
    let LayerTrace {
        resid_attn,
        ln_1,
        ffn_in,
        ffn_hidden,
        ffn_out,
        resid_ffn,
        ..
    } = &mut *l;
    let x_ffn = match layout.stored(Field::FfnIn) {
        Field::Ln1 => ln_1,
        _ => ffn_in,
    };
    cpu::layernorm(&resid_attn[s * d..], g, b, d, eps, &mut x_ffn[s * d..]);

    // FFN: GELU(x·W1 + b1)·W2 + b2
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
    cpu::linear(
        &ffn_hidden[s * f..],
        &lw.fc_proj_w,
        &lw.fc_proj_b,
        n,
        f,
        d,
        &mut ffn_out[s * d..],
    );
    // the FFN's residual: added to the normalised stream (post-LN) or the stream itself
    let stream = if post { &*x_ffn } else { &*resid_attn };
    cpu::residual_add(&stream[s * d..], &ffn_out[s * d..], &mut resid_ffn[s * d..]);
    if layout.same_as(Field::Ln2).is_none() {
        cpu::layernorm(
            &l.resid_ffn[s * d..],
            &lw.ln_2_g,
            &lw.ln_2_b,
            d,
            eps,
            &mut l.ln_2[s * d..],
        );
    }
    // the fields that repeat another (attn_in, ffn_in, output post-LN; ln_1, ln_2,
    // output pre-LN): their new rows
    layout.fill_shared(l, s, c);
}

/// Rows `s..` of head `hh` in block trace `l` (T = `t` positions, d_k = `dk`): the new
/// queries against every key — QKᵀ, ÷√d_k (or ÷1), the causal mask, softmax(masked / τ),
/// weights · V (zero when `ablated`) — and, when the trace keeps the maps, the old queries
/// against the new keys (the upper triangle the page shows; their masked entries keep the
/// future's fill). Without the maps they go through `scratch.maps` and are not kept.
fn head(
    l: &mut LayerTrace,
    hh: usize,
    (t, dk): (usize, usize),
    s: usize,
    opts: &AttentionOptions,
    ablated: bool,
    scratch: &mut Scratch,
) {
    let n = t - s;
    let scale = opts.scale_factor(dk);
    let LayerTrace {
        q,
        k,
        v,
        scores,
        scaled,
        masked,
        weights,
        head_out,
        ..
    } = l;
    let qh = &q[hh * t * dk..][..t * dk];
    let kh = &k[hh * t * dk..][..t * dk];
    let vh = &v[hh * t * dk..][..t * dk];
    let kept = !weights.is_empty();
    // head hh's (T, T) maps in the trace, or the scratch's (n, T) ones; `new` is where the new
    // rows start in them
    let (maps, new) = if kept {
        let at = hh * t * t..(hh + 1) * t * t;
        let maps = [scores, scaled, masked, weights].map(|m| &mut m[at.clone()]);
        (maps, s * t)
    } else {
        (scratch.maps.each_mut().map(|m| &mut m[..]), 0)
    };
    let [sc, scd, m, wt] = maps;
    cpu::attn_scores(
        &qh[s * dk..],
        kh,
        (n, t, dk),
        scale,
        opts.causal_mask.then_some(s),
        &mut sc[new..],
        &mut scd[new..],
        &mut m[new..],
    );
    if kept && s > 0 {
        let old_new = &mut scratch.old_new;
        cpu::matmul_into(&qh[..s * dk], &kh[s * dk..], s, dk, n, true, old_new, 0.0);
        for i in 0..s {
            sc[i * t + s..][..n].copy_from_slice(&old_new[i * n..][..n]);
            cpu::scale_scores(&sc[i * t + s..][..n], scale, &mut scd[i * t + s..][..n]);
        }
    }
    cpu::softmax_rows(&m[new..], t, opts.temperature, &mut wt[new..]);
    let out = &mut head_out[hh * t * dk..][..t * dk];
    if ablated {
        out[s * dk..].fill(0.0);
    } else {
        cpu::attn_v(&wt[new..], vh, n, t, dk, &mut out[s * dk..]);
    }
}
