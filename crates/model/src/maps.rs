//! Attention maps on demand: one head's four stages (QKᵀ, ÷√d_k, the mask, the softmax) for
//! a range of query rows, computed from a trace's queries and keys with the forward pass's
//! own kernels — so they equal, bit for bit, the maps a whole trace records. A trace that
//! kept no maps (`Keep::Streams`) costs O(layers · T · d_model); a map costs O(rows · T) when
//! a view asks for it.

use std::borrow::Cow;
use std::ops::Range;

use crate::cpu;
use crate::error::{Error, Result};
use crate::trace::{HeadMaps, LayerTrace, Trace};

/// One head's maps for the query rows `rows` against every key: each (rows, T), row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct HeadRows {
    pub layer: usize,
    pub head: usize,
    /// The query positions, rows of the trace.
    pub rows: Range<usize>,
    /// Keys (columns).
    pub t: usize,
    /// q_i · k_j.
    pub scores: Vec<f32>,
    /// The scores × 1/√d_k (or × 1 with scaling off).
    pub scaled: Vec<f32>,
    /// The scaled scores with future keys `cpu::MASKED` (when the mask is on).
    pub masked: Vec<f32>,
    /// softmax(masked / τ); a row sums to 1, masked entries are exactly 0.
    pub weights: Vec<f32>,
}

impl HeadRows {
    /// Query row `i` (a position in `rows`) of `map`, one of this value's four maps.
    pub fn row<'a>(&self, map: &'a [f32], i: usize) -> &'a [f32] {
        let r = i - self.rows.start;
        &map[r * self.t..(r + 1) * self.t]
    }
}

impl Trace {
    /// Head `head` of block `layer`, whole: read from the trace, its maps computed from q and
    /// k when it kept none (`head_rows`).
    pub fn head_maps(&self, layer: usize, head: usize) -> Result<HeadMaps> {
        if let Some(m) = self
            .heads
            .iter()
            .find(|m| (m.layer, m.head) == (layer, head))
        {
            return Ok(m.clone());
        }
        let rows = self.head_rows(layer, head, 0..self.dims.t)?;
        let (t, dk) = (self.dims.t, self.dims.d_k);
        let l = &self.layers[layer];
        let part = |x: &[f32]| x[head * t * dk..(head + 1) * t * dk].to_vec();
        Ok(HeadMaps {
            layer,
            head,
            q: part(&l.q),
            k: part(&l.k),
            v: part(&l.v),
            head_out: part(&l.head_out),
            scores: rows.scores,
            scaled: rows.scaled,
            masked: rows.masked,
            weights: rows.weights,
        })
    }

    /// What a page needs to show these heads of a long text, and no more: the tokens and
    /// options, the next-token logits and probabilities after the last position, and each
    /// head's `HeadMaps`; the blocks' fields, the embedding and the final norm's rows are
    /// left empty. Its `head` gives those heads exactly as this trace's would.
    pub fn slim(&self, heads: &[(usize, usize)]) -> Result<Trace> {
        let v = self.dims.vocab;
        let last = |x: &[f32]| x[x.len().saturating_sub(v)..].to_vec();
        let mut kept = Vec::new();
        for &(l, h) in heads {
            if !kept.iter().any(|m: &HeadMaps| (m.layer, m.head) == (l, h)) {
                kept.push(self.head_maps(l, h)?);
            }
        }
        Ok(Trace {
            dims: self.dims,
            tokens: self.tokens.clone(),
            dropped: self.dropped,
            options: self.options.clone(),
            embedding: Vec::new(),
            layers: vec![LayerTrace::default(); self.dims.n_layer],
            ln_f: None,
            logits: last(&self.logits),
            probs: last(&self.probs),
            heads: kept,
        })
    }

    /// Head `head` of block `layer`, query rows `rows`: read from the trace when it kept the
    /// maps (or, in a slim trace, that head's), otherwise computed from its q and k with its
    /// options.
    pub fn head_rows(&self, layer: usize, head: usize, rows: Range<usize>) -> Result<HeadRows> {
        let d = self.dims;
        let (t, dk) = (d.t, d.d_k);
        if layer >= d.n_layer || head >= d.n_head {
            return Err(Error::Options(format!(
                "no head {layer}.{head}: the model has {} layers × {} heads",
                d.n_layer, d.n_head
            )));
        }
        if rows.start > rows.end || rows.end > t {
            return Err(Error::Options(format!(
                "rows {}..{} are not inside the text's {t} positions",
                rows.start, rows.end
            )));
        }
        let n = rows.len();
        let l = &self.layers[layer];
        if l.weights.is_empty() && l.q.is_empty() {
            // a slim trace: the head's maps are there whole, or nowhere
            let m = self
                .heads
                .iter()
                .find(|m| (m.layer, m.head) == (layer, head))
                .ok_or_else(|| {
                    Error::Options(format!("this trace holds no maps of head {layer}.{head}"))
                })?;
            let cells = rows.start * t..rows.end * t;
            return Ok(HeadRows {
                layer,
                head,
                rows: rows.clone(),
                t,
                scores: m.scores[cells.clone()].to_vec(),
                scaled: m.scaled[cells.clone()].to_vec(),
                masked: m.masked[cells.clone()].to_vec(),
                weights: m.weights[cells].to_vec(),
            });
        }
        let cells = (head * t + rows.start) * t..(head * t + rows.end) * t;
        let mut out = HeadRows {
            layer,
            head,
            rows: rows.clone(),
            t,
            scores: vec![0.0; n * t],
            scaled: vec![0.0; n * t],
            masked: vec![0.0; n * t],
            weights: vec![0.0; n * t],
        };
        if !l.weights.is_empty() {
            out.scores.copy_from_slice(&l.scores[cells.clone()]);
            out.scaled.copy_from_slice(&l.scaled[cells.clone()]);
            out.masked.copy_from_slice(&l.masked[cells.clone()]);
            out.weights.copy_from_slice(&l.weights[cells]);
            return Ok(out);
        }
        if n == 0 {
            return Ok(out);
        }
        let heads = head * t * dk..(head + 1) * t * dk;
        let (q, k) = (&l.q[heads.clone()], &l.k[heads]);
        let o = &self.options;
        cpu::attn_scores(
            &q[rows.start * dk..rows.end * dk],
            k,
            (n, t, dk),
            o.scale_factor(dk),
            o.causal_mask.then_some(rows.start),
            &mut out.scores,
            &mut out.scaled,
            &mut out.masked,
        );
        cpu::softmax_rows(&out.masked, t, o.temperature, &mut out.weights);
        Ok(out)
    }

    /// One head's (T, T) attention weights: borrowed when the trace kept the maps, computed
    /// otherwise. Panics if `layer`/`head` are out of range, as `head` does.
    pub fn head_weights(&self, layer: usize, head: usize) -> Cow<'_, [f32]> {
        if let Some(h) = self.try_head(layer, head) {
            return Cow::Borrowed(h.weights);
        }
        match self.head_rows(layer, head, 0..self.dims.t) {
            Ok(rows) => Cow::Owned(rows.weights),
            Err(e) => panic!("{e}"),
        }
    }
}

/// Every head's attention weights pooled to at most `side` × `side` cells: the heads grid of
/// a long text, computed a band of rows at a time (never a whole map of every head).
#[derive(Clone, Debug, PartialEq)]
pub struct Thumbnails {
    pub n_layer: usize,
    pub n_head: usize,
    /// Positions one cell covers on each side, ⌈T / side⌉: 1 when the text is no longer than
    /// `side`, and then every cell is one weight, exactly.
    pub span: usize,
    /// Cells on each side, ⌈T / span⌉ (the last row and column of cells may cover fewer
    /// positions).
    pub cells: usize,
    /// `weights[((layer · n_head + head) · cells + r) · cells + c]`: the mean, over the query
    /// rows of cell row r, of the weight those rows give to the keys of cell column c — so a
    /// row of cells still sums to 1, as a row of weights does.
    pub weights: Vec<f32>,
}

impl Thumbnails {
    /// Head `head` of block `layer`, (cells, cells).
    pub fn head(&self, layer: usize, head: usize) -> &[f32] {
        let n = self.cells * self.cells;
        let at = (layer * self.n_head + head) * n;
        &self.weights[at..at + n]
    }
}

impl Trace {
    /// Every head's weights pooled to at most `side` × `side` cells (`Thumbnails`).
    pub fn thumbnails(&self, side: usize) -> Result<Thumbnails> {
        let d = self.dims;
        let t = d.t;
        if side == 0 {
            return Err(Error::Options("a thumbnail needs at least one cell".into()));
        }
        let span = t.div_ceil(side).max(1);
        let cells = t.div_ceil(span);
        let mut weights = vec![0f32; d.n_layer * d.n_head * cells * cells];
        for l in 0..d.n_layer {
            for h in 0..d.n_head {
                let at = (l * d.n_head + h) * cells * cells;
                let thumb = &mut weights[at..at + cells * cells];
                for (r, out) in thumb.chunks_exact_mut(cells).enumerate() {
                    let rows = r * span..((r + 1) * span).min(t);
                    let n = rows.len() as f64;
                    let band = self.head_rows(l, h, rows)?;
                    let mut sums = vec![0f64; cells];
                    for row in band.weights.chunks_exact(t) {
                        for (j, &w) in row.iter().enumerate() {
                            sums[j / span] += w as f64;
                        }
                    }
                    for (o, s) in out.iter_mut().zip(sums) {
                        *o = (s / n) as f32;
                    }
                }
            }
        }
        Ok(Thumbnails {
            n_layer: d.n_layer,
            n_head: d.n_head,
            span,
            cells,
            weights,
        })
    }
}
