//! The logit lens: the residual stream at one position after the embedding and after each
//! block, put through the model's own output head (the tied embedding), as next-token
//! probabilities — how the prediction forms layer by layer.
//!
//! Pre-LN models (GPT-2) normalise only at the end, so every stage goes through the final
//! LayerNorm `ln_f` first, as the last block's output does. A post-LN block's output is already
//! normalised (its last step is a LayerNorm), so block outputs go to the head as they are
//! (through `ln_f` too if the model has one); the embedding stage is then raw, and says so.

use serde::{Deserialize, Serialize};

use crate::cpu;
use crate::error::{Error, Result};
use crate::trace::{top_k_of as top_k, Trace};
use crate::weights::Model;

/// How the stages reach the output head.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Normalised {
    /// Every stage through the final LayerNorm, as the model's own last stage.
    FinalLayerNorm,
    /// Post-LN without `ln_f`: block outputs are LayerNorm outputs already; the embedding is
    /// not normalised.
    BlockOutputs,
    /// Every stage through the final RMSNorm (the Llama family), as the model's own last stage.
    FinalRmsNorm,
}

/// One stage of the residual stream: the embedding (`layer` None) or a block's output.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stage {
    pub layer: Option<usize>,
    /// The `k` most likely tokens at this stage, most likely first (ties by id).
    pub top: Vec<(u32, f32)>,
    /// The final prediction's probability and rank (0 = first) at this stage.
    pub target_prob: f32,
    pub target_rank: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Lens {
    /// The position (a row of the trace) looked at.
    pub position: usize,
    pub normalised: Normalised,
    /// The model's final prediction at `position` (its most likely token).
    pub target: u32,
    /// The embedding, then each block.
    pub stages: Vec<Stage>,
}

/// Whether `trace` keeps the residual stream the lens reads (a slim one does not).
pub fn has_rows(trace: &Trace) -> bool {
    let n = trace.dims.t * trace.dims.d_model;
    trace.embedding.len() >= n && trace.layers.iter().all(|l| l.output.len() >= n)
}

/// The residual stream at `position` after the embedding and after each block, one row of
/// `d_model` after another ((stages × d_model), the embedding first): what the lens reads.
pub fn stage_rows(trace: &Trace, position: usize) -> Result<Vec<f32>> {
    let d = trace.dims;
    if position >= d.t {
        return Err(Error::Options(format!(
            "position {position} is past the text's last token ({})",
            d.t.saturating_sub(1)
        )));
    }
    let dm = d.d_model;
    if !has_rows(trace) {
        return Err(Error::Options(
            "the trace keeps no residual stream (a slim trace: a few heads' maps only)".into(),
        ));
    }
    let row = |x: &[f32]| x[position * dm..(position + 1) * dm].to_vec();
    let mut out = row(&trace.embedding);
    for l in &trace.layers {
        out.extend(row(&l.output));
    }
    Ok(out)
}

/// Each row of `rows` (`stage_rows`' layout) through the final LayerNorm (if the model has
/// one) and the output head: the next-token distribution of every stage, (stages × V).
pub fn head_probs(model: &Model, rows: &[f32]) -> Result<Vec<f32>> {
    let (dm, v) = (model.config.n_embd, model.config.vocab_size);
    if dm == 0 || !rows.len().is_multiple_of(dm) {
        return Err(Error::Options(format!(
            "the lens got {} numbers, not rows of {dm}",
            rows.len()
        )));
    }
    let eps = model.config.layer_norm_epsilon;
    let w = &model.weights;
    let mut out = vec![0.0; rows.len() / dm * v];
    let mut logits = vec![0.0; v];
    let mut h = vec![0.0; dm];
    for (x, probs) in rows.chunks(dm).zip(out.chunks_mut(v)) {
        let x = match &w.ln_f {
            Some((g, b)) => {
                cpu::layernorm(x, g, b, dm, eps, &mut h);
                &h[..]
            }
            None => x,
        };
        cpu::matmul_into(x, &w.wte, 1, dm, v, true, &mut logits, 0.0);
        cpu::softmax_rows(&logits, v, 1.0, probs);
    }
    Ok(out)
}

/// Every stage's full next-token distribution at `position` (stages × V): the embedding first,
/// then each block's output.
pub fn stage_probs(model: &Model, trace: &Trace, position: usize) -> Result<Vec<Vec<f32>>> {
    let v = trace.dims.vocab;
    let flat = head_probs(model, &stage_rows(trace, position)?)?;
    Ok(flat.chunks(v).map(<[f32]>::to_vec).collect())
}

/// Token `id`'s probability and rank (0 = first) at every stage of `probs` (`head_probs`'
/// layout, `v` per stage): the lens's "follow this token".
pub fn follow(probs: &[f32], v: usize, id: u32) -> Vec<(f32, usize)> {
    probs
        .chunks(v)
        .map(|p| match p.get(id as usize) {
            Some(&x) => (x, rank(p, id)),
            None => (0.0, p.len()),
        })
        .collect()
}

/// The rank of `id` in `p` (how many ids are more likely, ties before it by id).
fn rank(p: &[f32], id: u32) -> usize {
    let x = p[id as usize];
    p.iter()
        .enumerate()
        .filter(|&(i, &y)| y > x || (y == x && (i as u32) < id))
        .count()
}

/// The logit lens at `position` with the `k` most likely tokens per stage.
pub fn logit_lens(model: &Model, trace: &Trace, position: usize, k: usize) -> Result<Lens> {
    let probs = head_probs(model, &stage_rows(trace, position)?)?;
    let normalised = if model.weights.ln_f.is_some() {
        Normalised::FinalLayerNorm
    } else {
        Normalised::BlockOutputs
    };
    Ok(from_probs(trace, position, &probs, normalised, k))
}

/// The lens from every stage's distribution (`head_probs`' output, computed wherever the
/// model is: the CLI, or the page's CPU worker for a trace from either engine). The final
/// prediction is the trace's own most likely token at `position` — or, where the trace keeps
/// no prediction there (`Keep::Streams`), the last stage's, which is the same distribution.
pub fn from_probs(
    trace: &Trace,
    position: usize,
    probs: &[f32],
    normalised: Normalised,
    k: usize,
) -> Lens {
    let v = trace.dims.vocab;
    let own = trace
        .probs_row(position)
        .unwrap_or(&probs[probs.len().saturating_sub(v)..]);
    let target = top_k(own, 1)[0].0;
    let stages = probs
        .chunks(v)
        .enumerate()
        .map(|(i, p)| Stage {
            layer: i.checked_sub(1),
            top: top_k(p, k),
            target_prob: p[target as usize],
            target_rank: rank(p, target),
        })
        .collect();
    Lens {
        position,
        normalised,
        target,
        stages,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{random_model, tiny_config};
    use crate::{forward, AttentionOptions, Config, LnPlacement};

    #[test]
    fn the_last_stage_is_the_models_own_prediction() {
        for ln in [LnPlacement::Pre, LnPlacement::Post] {
            let cfg = Config {
                n_layer: 1,
                ..tiny_config(ln)
            };
            let model = random_model(&cfg, 4, 1.0);
            let tr = forward(&model, &[3, 1, 4, 1, 5], &AttentionOptions::default()).unwrap();
            for pos in 0..5 {
                let p = stage_probs(&model, &tr, pos).unwrap();
                assert_eq!(p.len(), 2, "the embedding and one block");
                let want = tr.probs_at(pos);
                for (a, b) in p[1].iter().zip(want) {
                    assert!((a - b).abs() <= 1e-6, "{ln:?} pos {pos}: {a} vs {b}");
                }
                let lens = logit_lens(&model, &tr, pos, 3).unwrap();
                assert_eq!(lens.stages[1].target_rank, 0);
                assert_eq!(lens.stages[1].top[0].0, lens.target);
                assert_eq!(lens.stages[0].layer, None);
                assert_eq!(lens.stages[1].layer, Some(0));
            }
            let lens = logit_lens(&model, &tr, 4, 3).unwrap();
            let expect = if ln == LnPlacement::Pre {
                Normalised::FinalLayerNorm
            } else {
                Normalised::BlockOutputs
            };
            assert_eq!(lens.normalised, expect);
        }
    }

    #[test]
    fn the_lens_from_rows_is_the_lens_from_the_trace_and_bad_rows_are_an_error() {
        let model = random_model(&tiny_config(LnPlacement::Post), 3, 1.0);
        let tr = forward(&model, &[2, 7, 1, 8], &AttentionOptions::default()).unwrap();
        let rows = stage_rows(&tr, 2).unwrap();
        assert_eq!(rows.len(), (tr.dims.n_layer + 1) * tr.dims.d_model);
        let probs = head_probs(&model, &rows).unwrap();
        let lens = from_probs(&tr, 2, &probs, Normalised::BlockOutputs, 4);
        assert_eq!(lens, logit_lens(&model, &tr, 2, 4).unwrap());
        let e = head_probs(&model, &rows[1..]).unwrap_err().to_string();
        assert!(e.contains("not rows of"), "{e}");
        assert!(stage_rows(&tr, 4).is_err());
        let followed = follow(&probs, tr.dims.vocab, lens.target);
        let want: Vec<(f32, usize)> = lens
            .stages
            .iter()
            .map(|s| (s.target_prob, s.target_rank))
            .collect();
        assert_eq!(followed, want);
    }

    #[test]
    fn ranks_and_top_k_agree_and_a_position_past_the_text_is_an_error() {
        let model = random_model(&tiny_config(LnPlacement::Pre), 2, 1.0);
        let tr = forward(&model, &[1, 2, 3], &AttentionOptions::default()).unwrap();
        let lens = logit_lens(&model, &tr, 2, 20).unwrap();
        assert_eq!(lens.stages.len(), 3);
        for s in &lens.stages {
            let at = s.top.iter().position(|&(id, _)| id == lens.target).unwrap();
            assert_eq!(at, s.target_rank);
            assert!(s.top.windows(2).all(|w| w[0].1 >= w[1].1));
        }
        let e = logit_lens(&model, &tr, 3, 5).unwrap_err().to_string();
        assert!(e.contains("position 3 is past"), "{e}");
    }
}
