//! `Inspect`: what the CLI's commands ask of a model, whatever its architecture — its
//! tokenizer (through `roles::Subject`), a traced run (incremental, for generation), and the
//! logit lens's way from the residual stream to next-token probabilities. The bundled GPT-2-layout models (`Bundle`) and
//! the Llama family (`LlamaBundle`) both give it.

use crate::earlier::Earlier;
use crate::error::Result;
use crate::lens::{self, Lens, Normalised};
use crate::llama::{rms_norm, LlamaBundle, LlamaModel};
use crate::roles::{AttentionMaps, HeadMaps, Subject};
use crate::sample::{generate_by, Generated, Sampling};
use crate::tokenizer::TokenInfo;
use crate::trace::{AttentionOptions, Keep, Trace};
use crate::{cpu, forward_watched, Bundle, Error, Model};

/// A model without its tokenizer, whatever its architecture: a traced run and the lens's way
/// to the output head. The page's CPU worker holds one (`Box<dyn Traced>`); `Inspect` adds
/// the tokenizer.
pub trait Traced {
    /// Runs `ids` and records what `keep` keeps, reusing the rows of `prev` the ids share
    /// with it at the start (when it kept at least as much: `Keep::covers`); says whether it did.
    fn trace_kept(
        &self,
        prev: Option<&Trace>,
        ids: &[u32],
        opts: &AttentionOptions,
        keep: Keep,
    ) -> Result<(Trace, bool)> {
        self.trace_watched(prev.map(Earlier::Borrowed), ids, opts, keep, &mut |_| {})
    }

    /// `trace_kept`, telling `layer_done` each block's index as it finishes (a long text's
    /// progress bar); an owned earlier trace gives its vectors up to the new one, so that the
    /// two are never held at once.
    fn trace_watched(
        &self,
        prev: Option<Earlier>,
        ids: &[u32],
        opts: &AttentionOptions,
        keep: Keep,
        layer_done: &mut dyn FnMut(usize),
    ) -> Result<(Trace, bool)>;

    /// `trace_kept` recording every intermediate.
    fn trace_incremental(
        &self,
        prev: Option<&Trace>,
        ids: &[u32],
        opts: &AttentionOptions,
    ) -> Result<(Trace, bool)> {
        self.trace_kept(prev, ids, opts, Keep::All)
    }

    /// How the lens reaches the output head.
    fn normalised(&self) -> Normalised;

    /// Each row of `rows` (`lens::stage_rows`' layout) through the final norm and the output
    /// head: every stage's next-token distribution, (stages × V).
    fn head_probs(&self, rows: &[f32]) -> Result<Vec<f32>>;

    /// Every head's attention weights of a run on `ids` and nothing else of it (what the
    /// head-role probe reads): here from a run that keeps no maps, each head's computed from
    /// its queries and keys.
    fn maps(&self, ids: &[u32], opts: &AttentionOptions) -> Result<HeadMaps> {
        let (trace, _) = self.trace_kept(None, ids, opts, Keep::Streams)?;
        let (n_layer, n_head, t) = trace.size();
        HeadMaps::within_budget(n_layer * n_head, t)?;
        let mut weights = Vec::with_capacity(n_layer * n_head * t * t);
        for l in 0..n_layer {
            for h in 0..n_head {
                weights.extend_from_slice(&trace.head_weights(l, h));
            }
        }
        Ok(HeadMaps {
            n_layer,
            n_head,
            t,
            causal: opts.causal_mask,
            weights,
        })
    }
}

pub trait Inspect: Subject {
    /// The model behind the tokenizer.
    fn traced(&self) -> &dyn Traced;

    /// Runs the ids (the last `context()` of them) and records every intermediate.
    fn trace_ids(&self, ids: &[u32], opts: &AttentionOptions) -> Result<Trace> {
        Ok(self.trace_incremental(None, ids, opts)?.0)
    }

    /// `trace_ids`, reusing the rows of `prev` the ids share with it at the start; says
    /// whether it did.
    fn trace_incremental(
        &self,
        prev: Option<&Trace>,
        ids: &[u32],
        opts: &AttentionOptions,
    ) -> Result<(Trace, bool)> {
        self.traced().trace_incremental(prev, ids, opts)
    }

    /// Continues `ids` by `steps` tokens chosen by `sampling` (`sample::generate_by`), each
    /// step's trace reusing the last one's rows; `on_step` sees each token as it comes.
    fn generate(
        &self,
        ids: &[u32],
        steps: usize,
        sampling: &Sampling,
        on_step: impl FnMut(u32),
    ) -> Result<Generated> {
        let opts = AttentionOptions::default();
        generate_by(
            self.context(),
            |prev, all| Ok(self.trace_incremental(prev, all, &opts)?.0),
            ids,
            steps,
            sampling,
            on_step,
        )
    }

    /// How the lens reaches the output head.
    fn normalised(&self) -> Normalised {
        self.traced().normalised()
    }

    /// Each row of `rows` through the final norm and the output head (`Traced::head_probs`).
    fn head_probs(&self, rows: &[f32]) -> Result<Vec<f32>> {
        self.traced().head_probs(rows)
    }

    /// Tokenizes `text` and traces it.
    fn trace(&self, text: &str, opts: &AttentionOptions) -> Result<(Vec<TokenInfo>, Trace)> {
        self.trace_text(text, opts, Keep::All)
    }

    /// Tokenizes `text` and traces it, keeping what `keep` keeps.
    fn trace_text(
        &self,
        text: &str,
        opts: &AttentionOptions,
        keep: Keep,
    ) -> Result<(Vec<TokenInfo>, Trace)> {
        let tokens = self.tokenizer().encode(text)?;
        let ids: Vec<u32> = tokens.iter().map(|t| t.id).collect();
        let trace = self.traced().trace_kept(None, &ids, opts, keep)?.0;
        Ok((tokens, trace))
    }

    /// The logit lens at `position` with the `k` most likely tokens per stage.
    fn lens(&self, trace: &Trace, position: usize, k: usize) -> Result<Lens> {
        let probs = self.head_probs(&lens::stage_rows(trace, position)?)?;
        Ok(lens::from_probs(
            trace,
            position,
            &probs,
            self.normalised(),
            k,
        ))
    }
}

impl Traced for Model {
    fn trace_watched(
        &self,
        prev: Option<Earlier>,
        ids: &[u32],
        opts: &AttentionOptions,
        keep: Keep,
        layer_done: &mut dyn FnMut(usize),
    ) -> Result<(Trace, bool)> {
        forward_watched(self, prev, ids, opts, keep, layer_done)
    }

    fn normalised(&self) -> Normalised {
        if self.weights.ln_f.is_some() {
            Normalised::FinalLayerNorm
        } else {
            Normalised::BlockOutputs
        }
    }

    fn head_probs(&self, rows: &[f32]) -> Result<Vec<f32>> {
        lens::head_probs(self, rows)
    }
}

impl Traced for LlamaModel {
    fn trace_watched(
        &self,
        prev: Option<Earlier>,
        ids: &[u32],
        opts: &AttentionOptions,
        keep: Keep,
        layer_done: &mut dyn FnMut(usize),
    ) -> Result<(Trace, bool)> {
        LlamaModel::trace_watched(self, prev, ids, opts, keep, layer_done)
    }

    fn maps(&self, ids: &[u32], opts: &AttentionOptions) -> Result<HeadMaps> {
        LlamaModel::maps(self, ids, opts)
    }

    fn normalised(&self) -> Normalised {
        Normalised::FinalRmsNorm
    }

    fn head_probs(&self, rows: &[f32]) -> Result<Vec<f32>> {
        let m = self;
        let (d, v) = (m.config.n_embd, m.config.vocab_size);
        if !rows.len().is_multiple_of(d) {
            return Err(Error::Options(format!(
                "the lens got {} numbers, not rows of {d}",
                rows.len()
            )));
        }
        let n = rows.len() / d;
        let mut normed = vec![0f32; rows.len()];
        rms_norm(rows, &m.norm, d, m.config.rms_eps, &mut normed);
        let mut logits = vec![0f32; n * v];
        m.head().matmul_t(&normed, n, &mut logits);
        let mut probs = vec![0f32; n * v];
        cpu::softmax_rows(&logits, v, 1.0, &mut probs);
        Ok(probs)
    }
}

impl Inspect for Bundle {
    fn traced(&self) -> &dyn Traced {
        &self.model
    }
}

impl Inspect for LlamaBundle {
    fn traced(&self) -> &dyn Traced {
        &self.model
    }
}
