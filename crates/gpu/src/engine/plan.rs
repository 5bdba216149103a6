//! The plan of one forward: every dispatch, in order, as the lesson draws the model. Rows
//! `s..t` are new (all of them in a full forward; the typed tokens in an incremental one);
//! each step's kernel module checks the shapes and computes the grid.

use attnlab_model::{AttentionOptions, Config, Keep};

use super::binds::Binds;
use super::buffers::predicted;
use crate::error::GpuError;
use crate::linear::{Weight, ACT_NONE};
use crate::step::{Heads, Step};
use crate::{add_layernorm, embed, layernorm, linear, softmax_rows, split_heads};

/// The dispatches of a forward over `t` tokens whose first `s` rows are cached. Empty
/// regions (nothing old in a full forward) are left out. `tile_from`: see `linear::tile_from`.
pub(super) fn forward<'a>(
    b: &'a Binds,
    c: &Config,
    heads: Heads,
    (s, t): (usize, usize),
    opts: &AttentionOptions,
    (tile_from, keep): (usize, Keep),
) -> Result<Vec<Step<'a>>, GpuError> {
    let (d, f, v, eps) = (c.n_embd, c.d_ff(), c.vocab_size, c.layer_norm_epsilon);
    let new = || s..t;
    let gelu = linear::act(c.activation_function);
    let mut steps = Vec::new();

    // token (× √d_model) + position embedding
    steps.push(embed::step(&b.embed, new(), d, c.embedding_scale())?);
    for (li, blk) in b.blocks.iter().enumerate() {
        // pre-LN: the first block's LayerNorm (later ones come from the block before)
        if let Some(ln) = &blk.ln_pre {
            steps.push(layernorm::step(ln, new(), d, eps)?);
        }
        // Q, K, V = X·W_Q, X·W_K, X·W_V (one fused matrix), then split into heads
        steps.push(linear::step(
            &blk.qkv,
            new(),
            (d, 3 * d),
            Weight::WithBias,
            ACT_NONE,
            tile_from,
        )?);
        steps.push(split_heads::step(&blk.split, new(), heads)?);
        // QKᵀ, ÷√d_k, causal mask, softmax(masked / τ), weights · V per head (a switched-off
        // head gives 0), heads side by side
        steps.extend(blk.attn.steps(li, heads, (s, t), opts)?);
        // W_O
        steps.push(linear::step(
            &blk.proj,
            new(),
            (d, d),
            Weight::WithBias,
            ACT_NONE,
            tile_from,
        )?);
        // Add & LayerNorm
        steps.push(add_layernorm::step(&blk.add_ln_1, new(), d, eps)?);
        // FFN: GELU(x·W₁ + b₁)·W₂ + b₂
        steps.push(linear::step(
            &blk.fc,
            new(),
            (d, f),
            Weight::WithBias,
            gelu,
            tile_from,
        )?);
        steps.push(linear::step(
            &blk.fc_proj,
            new(),
            (f, d),
            Weight::WithBias,
            ACT_NONE,
            tile_from,
        )?);
        // Add & LayerNorm (pre-LN: the next block's first LayerNorm, or ln_f)
        steps.push(add_layernorm::step(&blk.add_ln_2, new(), d, eps)?);
    }
    if let Some(ln) = &b.ln_f {
        steps.push(layernorm::step(ln, new(), d, eps)?);
    }
    // logits = h · wteᵀ (the lm head tied to the token embedding), then softmax: the new
    // rows', or the last one's alone (into row 0) for a Trace that keeps no more
    let (rows, shift) = predicted(keep, (s, t));
    let out = rows.start - shift..rows.end - shift;
    steps.push(linear::step_shifted(
        &b.lm_head,
        rows,
        (d, v),
        Weight::TiedTransposed,
        ACT_NONE,
        tile_from,
        shift,
    )?);
    steps.push(softmax_rows::step_rows(&b.probs, out, v)?);
    // each layer's four score matrices (all T rows), compacted for the readback
    for (li, blk) in b.blocks.iter().enumerate() {
        steps.extend(blk.attn.pack(li, heads, t)?);
    }
    steps.retain(|s| !s.is_empty());
    Ok(steps)
}
