//! `Trace`: every intermediate of one forward pass — the contract between engine and UI.
//!
//! Storage is flat row-major `Vec<f32>`; each field documents its shape with
//! T = tokens run, D = d_model, H = heads, Dk = d_k = D/H, F = FFN width, V = vocab.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::error::{Error, Result};
use crate::field::{layer_fields, Dims, Shape};

/// The most bytes a trace (or the attention maps of one run) may take: 4 GiB natively, 1 GiB
/// in wasm32's 4 GiB address space. Past it a run is refused with the size it would need,
/// not left to exhaust the memory.
pub const TRACE_BUDGET: u64 = if usize::BITS > 32 { 4 << 30 } else { 1 << 30 };

/// How attention is computed. These act inside the forward pass, so they change every later
/// layer and the prediction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AttentionOptions {
    /// Divide QKᵀ by √d_k (true, the default) or by 1.
    pub scale: bool,
    /// Softmax temperature τ > 0: weights = softmax(masked / τ). 1 is the plain softmax.
    pub temperature: f32,
    /// Hide future keys (the decoder's causal mask).
    pub causal_mask: bool,
    /// Heads whose output is zeroed, as (layer, head), both from 0.
    pub ablate: BTreeSet<(usize, usize)>,
}

impl Default for AttentionOptions {
    fn default() -> Self {
        AttentionOptions {
            scale: true,
            temperature: 1.0,
            causal_mask: true,
            ablate: BTreeSet::new(),
        }
    }
}

impl AttentionOptions {
    /// Rejects τ ≤ 0, a non-finite τ and heads outside the model.
    pub fn validate(&self, config: &Config) -> Result<()> {
        self.validate_for(config.n_layer, config.n_head)
    }

    /// `validate` for a model of `n_layer` layers × `n_head` heads.
    pub fn validate_for(&self, n_layer: usize, n_head: usize) -> Result<()> {
        let tau = self.temperature;
        if !(tau.is_finite() && tau > 0.0) {
            return Err(Error::Options(format!(
                "temperature must be a positive finite number, got {tau}"
            )));
        }
        if let Some(&(l, h)) = self
            .ablate
            .iter()
            .find(|&&(l, h)| l >= n_layer || h >= n_head)
        {
            return Err(Error::Options(format!(
                "cannot ablate head {l}.{h}: the model has {n_layer} layers × {n_head} heads"
            )));
        }
        Ok(())
    }

    /// The factor QKᵀ is multiplied by: 1/√d_k, or 1 with scaling off.
    pub fn scale_factor(&self, d_k: usize) -> f32 {
        if self.scale {
            1.0 / (d_k as f32).sqrt()
        } else {
            1.0
        }
    }
}

layer_fields! {
    /// One block's intermediates, one row-major `Vec<f32>` per field (shapes in [`Field::shape`]).
    pub struct LayerTrace / pub enum Field {
        /// Block input X. (T, D)
        Input input: Rows(Model),
        /// What attention reads: ln_1(X) for pre-LN, X itself for post-LN. (T, D)
        AttnIn attn_in: Rows(Model),
        /// Queries per head. (H, T, Dk)
        Q q: Heads,
        /// Keys per head. (H, T, Dk)
        K k: Heads,
        /// Values per head. (H, T, Dk)
        V v: Heads,
        /// Raw scores QKᵀ, every (query, key) pair. (H, T, T)
        Scores scores: Square,
        /// Scaled scores QKᵀ/√d_k (or QKᵀ with scaling off). (H, T, T)
        Scaled scaled: Square,
        /// Scaled scores with future keys set to `cpu::MASKED` (when the mask is on). (H, T, T)
        Masked masked: Square,
        /// Attention weights softmax(masked/τ); rows sum to 1, masked entries are exactly 0. (H, T, T)
        Weights weights: Square,
        /// Head outputs weights·V (zero for an ablated head). (H, T, Dk)
        HeadOut head_out: Heads,
        /// Heads side by side. (T, D)
        Concat concat: Rows(Model),
        /// W_O projection of the concatenation. (T, D)
        AttnOut attn_out: Rows(Model),
        /// X + attention. (T, D)
        ResidAttn resid_attn: Rows(Model),
        /// ln_1 output: after the attention residual for post-LN (= attn_in for pre-LN). (T, D)
        Ln1 ln_1: Rows(Model),
        /// What the FFN reads: ln_2(resid_attn) for pre-LN, ln_1 for post-LN. (T, D)
        FfnIn ffn_in: Rows(Model),
        /// FFN hidden activations after GELU. (T, F)
        FfnHidden ffn_hidden: Rows(Ffn),
        /// FFN output. (T, D)
        FfnOut ffn_out: Rows(Model),
        /// FFN input's residual stream + FFN output. (T, D)
        ResidFfn resid_ffn: Rows(Model),
        /// ln_2 output: after the FFN residual for post-LN (= ffn_in for pre-LN). (T, D)
        Ln2 ln_2: Rows(Model),
        /// Block output (ln_2 for post-LN, resid_ffn for pre-LN). (T, D)
        Output output: Rows(Model),
    }
}

/// What a traced run keeps. Every head's four (T, T) maps are most of a whole trace (layers ×
/// heads × T² × 4 values) and are computed again from the kept queries and keys whenever a
/// view asks for them (`Trace::head_rows`), so a long text keeps only what grows with T.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Keep {
    /// Every field of every block.
    #[default]
    All,
    /// No maps: per block the heads' q, k, v and outputs and the block's output (the
    /// residual stream the lens reads; a block's input is the block before's output, or the
    /// embedding); every other field is left empty; and the next-token logits and
    /// probabilities after the last position only (one row each: another position's come
    /// from its last block output through the model's head, as the lens computes them).
    /// O(layers · T · d_model).
    Streams,
}

impl Keep {
    /// Whether a trace kept this way holds field `f` (an empty `Vec` when not).
    pub fn keeps(self, f: Field) -> bool {
        match self {
            Keep::All => true,
            Keep::Streams => f.shape() == Shape::Heads || f == Field::Output,
        }
    }

    /// Whether a trace kept this way holds everything one kept as `other` holds (so a run
    /// kept as `other` may reuse its rows): a whole trace covers both.
    pub fn covers(self, other: Keep) -> bool {
        self == Keep::All || self == other
    }

    /// Whether a trace kept this way holds the next-token logits and probabilities after
    /// every position (else after the last one only).
    pub fn every_prediction(self) -> bool {
        self == Keep::All
    }

    /// Bytes of a trace of `dims` kept this way: the kept fields of every block, the
    /// embedding and the final norm's rows, and the logits and probabilities kept.
    pub fn bytes(self, dims: &Dims) -> u64 {
        let per_block: u64 = Field::ALL
            .into_iter()
            .filter(|&f| self.keeps(f))
            .map(|f| f.shape().len(dims) as u64)
            .sum();
        let (t, d, v) = (dims.t as u64, dims.d_model as u64, dims.vocab as u64);
        let predictions = if self.every_prediction() { t } else { 1 };
        4 * (dims.n_layer as u64 * per_block + 2 * t * d + 2 * predictions * v)
    }

    /// Refuses a trace of `dims` kept this way that would take more than `TRACE_BUDGET`,
    /// saying how much it would need.
    pub fn within_budget(self, dims: &Dims) -> Result<()> {
        let bytes = self.bytes(dims);
        if bytes <= TRACE_BUDGET {
            return Ok(());
        }
        let what = match self {
            Keep::All => "with every head's maps",
            Keep::Streams => "even without the maps",
        };
        Err(Error::TooLarge(format!(
            "a trace of {} tokens through this model would take {:.1} GB {what}; more than {:.1} GB is refused{}",
            dims.t,
            bytes as f64 / 1e9,
            TRACE_BUDGET as f64 / 1e9,
            match self {
                Keep::All => " (one head's maps, `trace --layer L --head H`, are computed on their own)",
                Keep::Streams => "",
            }
        )))
    }
}

/// Everything one forward pass computed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    pub dims: Dims,
    /// The token ids that were run. (T)
    pub tokens: Vec<u32>,
    /// How many tokens at the start of the input were dropped to fit the context.
    pub dropped: usize,
    pub options: AttentionOptions,
    /// Token + position embedding. (T, D)
    pub embedding: Vec<f32>,
    pub layers: Vec<LayerTrace>,
    /// Final LayerNorm output, if the model has ln_f. (T, D)
    pub ln_f: Option<Vec<f32>>,
    /// Next-token logits after every position (tied lm head). (T, V) — or, in a trace cut
    /// down for display, only the last position's row (V): read it with `last_logits`.
    pub logits: Vec<f32>,
    /// Next-token probabilities, softmax of the logits. (T, V)
    pub probs: Vec<f32>,
    /// Some heads' maps and vectors, whole, in a trace whose blocks hold none (`Trace::slim`:
    /// what a page shows of a long text). Empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub heads: Vec<HeadMaps>,
    /// Every head's weights pooled small, in a slim trace whose maker had them (the heads
    /// grid of a long text: `Pooled`). None otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thumbnails: Option<Thumbnails>,
}

/// One head of a trace, whole and owned: its vectors and its four maps over every row. A
/// slim trace (`Trace::slim`) carries a few of these instead of its blocks' fields: what a
/// page shows of a text too long to hold every head's maps.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HeadMaps {
    pub layer: usize,
    pub head: usize,
    /// The head's queries, keys, values and output. (T, Dk) each
    pub q: Vec<f32>,
    pub k: Vec<f32>,
    pub v: Vec<f32>,
    pub head_out: Vec<f32>,
    /// Its four maps, as `LayerTrace`'s. (T, T) each
    pub scores: Vec<f32>,
    pub scaled: Vec<f32>,
    pub masked: Vec<f32>,
    pub weights: Vec<f32>,
}

impl HeadMaps {
    /// Borrowed as a trace's head is (`t` positions, `d_k` wide).
    pub fn view(&self, t: usize, d_k: usize) -> HeadView<'_> {
        HeadView {
            t,
            d_k,
            q: &self.q,
            k: &self.k,
            v: &self.v,
            scores: &self.scores,
            scaled: &self.scaled,
            masked: &self.masked,
            weights: &self.weights,
            head_out: &self.head_out,
        }
    }

    /// Every array, in the order a wire carries them: q, k, v, head_out, then the maps.
    pub fn arrays(&self) -> [&Vec<f32>; 8] {
        [
            &self.q,
            &self.k,
            &self.v,
            &self.head_out,
            &self.scores,
            &self.scaled,
            &self.masked,
            &self.weights,
        ]
    }

    /// `arrays`, to fill.
    pub fn arrays_mut(&mut self) -> [&mut Vec<f32>; 8] {
        [
            &mut self.q,
            &mut self.k,
            &mut self.v,
            &mut self.head_out,
            &mut self.scores,
            &mut self.scaled,
            &mut self.masked,
            &mut self.weights,
        ]
    }
}

/// Every head's attention weights pooled to at most `side` × `side` cells: the heads grid of
/// a long text, computed a band of rows at a time (never a whole map of every head).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Thumbnails {
    pub n_layer: usize,
    pub n_head: usize,
    /// Positions one cell covers on each side: the smallest power of two that makes at most
    /// `side` cells (1 when the text is no longer than `side`, and then every cell is one
    /// weight, exactly) — or, in thumbnails kept up to date as a text is edited (`Pooled`),
    /// a larger one the text needed before.
    pub span: usize,
    /// Cells on each side, ⌈T / span⌉ (the last row and column of cells may cover fewer
    /// positions).
    pub cells: usize,
    /// `weights[((layer · n_head + head) · cells + r) · cells + c]`: the mean, over the query
    /// rows of cell row r, of the weight those rows give to the keys of cell column c — so a
    /// row of cells still sums to 1, as a row of weights does.
    pub weights: Vec<f32>,
    /// Each head's five text roles read from the same rows (`roles::TEXT_ROLES`' order, `None`
    /// where the text is too short for one), `roles[(layer · n_head + head) · 5 + k]`: equal,
    /// bit for bit, to `roles::head_scores` on the whole map (`roles::pooled_scores` reads them).
    #[serde(default)]
    pub roles: Vec<Option<f32>>,
}

impl Thumbnails {
    /// Head `head` of block `layer`, (cells, cells).
    pub fn head(&self, layer: usize, head: usize) -> &[f32] {
        let n = self.cells * self.cells;
        let at = (layer * self.n_head + head) * n;
        &self.weights[at..at + n]
    }
}

/// The matrices of one head, borrowed from a Trace.
#[derive(Clone, Copy, Debug)]
pub struct HeadView<'a> {
    pub t: usize,
    pub d_k: usize,
    pub q: &'a [f32],        // (T, Dk)
    pub k: &'a [f32],        // (T, Dk)
    pub v: &'a [f32],        // (T, Dk)
    pub scores: &'a [f32],   // (T, T)
    pub scaled: &'a [f32],   // (T, T)
    pub masked: &'a [f32],   // (T, T)
    pub weights: &'a [f32],  // (T, T)
    pub head_out: &'a [f32], // (T, Dk)
}

impl Trace {
    /// What this trace kept: `Keep::Streams` when its blocks hold no maps.
    pub fn kept(&self) -> Keep {
        match self.layers.first() {
            Some(l) if l.weights.is_empty() => Keep::Streams,
            _ => Keep::All,
        }
    }

    /// Every array of the trace with a name ("embedding", "layer 0 q", …, "probs").
    pub fn fields(&self) -> Vec<(String, &[f32])> {
        let mut out = vec![("embedding".to_string(), &self.embedding[..])];
        for (l, layer) in self.layers.iter().enumerate() {
            out.extend(
                layer
                    .fields()
                    .into_iter()
                    .map(|(n, v)| (format!("layer {l} {n}"), v)),
            );
        }
        if let Some(x) = &self.ln_f {
            out.push(("ln_f".into(), x));
        }
        out.push(("logits".into(), &self.logits));
        out.push(("probs".into(), &self.probs));
        out
    }

    /// One head's matrices. Panics if `layer`/`head` are out of range, or if the trace holds
    /// no maps of that head (`Keep::Streams`: read them with `head_rows`; `try_head` asks).
    pub fn head(&self, layer: usize, head: usize) -> HeadView<'_> {
        self.try_head(layer, head).unwrap_or_else(|| {
            panic!(
                "the trace holds no maps of head {layer}.{head} ({} layers × {} heads, {:?})",
                self.dims.n_layer,
                self.dims.n_head,
                self.kept()
            )
        })
    }

    /// Whether the trace holds head `head` of block `layer`'s maps: every head's in a whole
    /// trace, those in `heads` in a slim one.
    pub fn has_head(&self, layer: usize, head: usize) -> bool {
        self.try_head(layer, head).is_some()
    }

    /// Head `head` of block `layer` among a slim trace's `heads`.
    pub(crate) fn held(&self, layer: usize, head: usize) -> Option<&HeadMaps> {
        self.heads
            .iter()
            .find(|m| (m.layer, m.head) == (layer, head))
    }

    /// One head's matrices, if the trace holds them (see `has_head`).
    pub fn try_head(&self, layer: usize, head: usize) -> Option<HeadView<'_>> {
        let Dims { t, d_k, .. } = self.dims;
        if layer >= self.dims.n_layer || head >= self.dims.n_head {
            return None;
        }
        let l = self.layers.get(layer)?;
        if l.weights.is_empty() {
            return self.held(layer, head).map(|m| m.view(t, d_k));
        }
        let (tt, td) = (
            head * t * t..(head + 1) * t * t,
            head * t * d_k..(head + 1) * t * d_k,
        );
        Some(HeadView {
            t,
            d_k,
            q: &l.q[td.clone()],
            k: &l.k[td.clone()],
            v: &l.v[td.clone()],
            scores: &l.scores[tt.clone()],
            scaled: &l.scaled[tt.clone()],
            masked: &l.masked[tt.clone()],
            weights: &l.weights[tt],
            head_out: &l.head_out[td],
        })
    }

    /// Next-token probabilities after `position`. (V) Panics where the trace holds none: past
    /// the text, or before its last position in a trace that keeps only that one
    /// (`Keep::Streams`; `probs_row` says).
    pub fn probs_at(&self, position: usize) -> &[f32] {
        self.probs_row(position).unwrap_or_else(|| {
            panic!(
                "the trace holds no next-token probabilities after position {position} of {}",
                self.dims.t
            )
        })
    }

    /// Next-token probabilities after `position`, if the trace holds them: every position's
    /// in a whole trace, the last one's in a trace kept as `Keep::Streams`.
    pub fn probs_row(&self, position: usize) -> Option<&[f32]> {
        let (v, t) = (self.dims.vocab, self.dims.t);
        if position >= t {
            return None;
        }
        let rows = self.probs.len() / v.max(1);
        let row = position.checked_sub(t.saturating_sub(rows))?;
        Some(&self.probs[row * v..(row + 1) * v])
    }

    /// Next-token logits after the last position (V): the last row of `logits`, whether it
    /// holds every position's or only that one.
    pub fn last_logits(&self) -> &[f32] {
        &self.logits[self.logits.len().saturating_sub(self.dims.vocab)..]
    }

    /// The `k` most likely next tokens after `position`, most likely first.
    pub fn top_k(&self, position: usize, k: usize) -> Vec<(u32, f32)> {
        top_k_of(self.probs_at(position), k)
    }
}

/// The `k` most likely ids of a distribution `p`, most likely first, ties by id.
pub fn top_k_of(p: &[f32], k: usize) -> Vec<(u32, f32)> {
    let mut ranked: Vec<(u32, f32)> = p.iter().enumerate().map(|(i, &x)| (i as u32, x)).collect();
    // most likely first, ties by id: a total order, so selecting the k best and sorting only
    // those gives exactly the full sort's first k (a 50 k vocabulary costs ~1 ms less)
    let order = |a: &(u32, f32), b: &(u32, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if k < ranked.len() {
        ranked.select_nth_unstable_by(k, order);
        ranked.truncate(k);
    }
    ranked.sort_by(order);
    ranked
}

#[cfg(test)]
mod tests {
    use crate::testing::{random_model, tiny_config};
    use crate::{forward, AttentionOptions, LnPlacement};

    #[test]
    fn the_last_logits_are_the_last_row_whether_or_not_the_others_are_kept() {
        let model = random_model(&tiny_config(LnPlacement::Post), 5, 0.5);
        let mut tr = forward(&model, &[1, 2, 3], &AttentionOptions::default()).unwrap();
        let v = tr.dims.vocab;
        let last = tr.logits[2 * v..].to_vec();
        assert_eq!(tr.last_logits(), &last[..]);
        tr.logits.drain(..2 * v);
        assert_eq!(tr.last_logits(), &last[..]);
    }

    #[test]
    fn top_k_equals_the_first_k_of_the_full_ranking_ties_included() {
        let model = random_model(&tiny_config(LnPlacement::Post), 5, 0.5);
        let mut tr = forward(&model, &[1, 2, 3], &AttentionOptions::default()).unwrap();
        // ties: the same probability at several ids
        let v = tr.dims.vocab;
        for i in [3, 7, 11] {
            tr.probs[2 * v + i] = 0.5;
        }
        let mut full: Vec<(u32, f32)> = tr
            .probs_at(2)
            .iter()
            .enumerate()
            .map(|(i, &p)| (i as u32, p))
            .collect();
        full.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        for k in [0, 1, 2, 3, 5, v - 1, v, v + 3] {
            assert_eq!(tr.top_k(2, k), full[..k.min(v)], "k = {k}");
        }
        assert_eq!(
            &tr.top_k(2, 3).iter().map(|x| x.0).collect::<Vec<_>>(),
            &[3, 7, 11]
        );
    }
}
