//! Attention maps on demand: one head's four stages (QKᵀ, ÷√d_k, the mask, the softmax) for
//! a range of query rows, computed from a trace's queries and keys with the forward pass's
//! own kernels — so they equal, bit for bit, the maps a whole trace records. A trace that
//! kept no maps (`Keep::Streams`) costs O(layers · T · d_model); a map costs O(rows · T) when
//! a view asks for it.

use std::borrow::Cow;
use std::ops::Range;

use crate::cpu;
use crate::error::{Error, Result};
use crate::roles;
use crate::trace::{AttentionOptions, HeadMaps, LayerTrace, Thumbnails, Trace};

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
        if let Some(m) = self.held(layer, head) {
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
            thumbnails: None,
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
            let m = self.held(layer, head).ok_or_else(|| {
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

/// The smallest power of two that cuts `t` positions into at most `side` cells.
fn span_for(t: usize, side: usize) -> usize {
    let mut span = 1;
    while t.div_ceil(span) > side {
        span *= 2;
    }
    span
}

/// Sums adjacent pairs of `cells` in place (a missing partner counts as 0): the cells of a
/// row at twice the span. Pooling by repeated halving makes a row pooled at span 2s from its
/// cells at span s exactly what pooling its weights at 2s gives.
fn halve(cells: &mut [f32]) {
    let n = cells.len();
    for c in 0..n.div_ceil(2) {
        let b = if 2 * c + 1 < n { cells[2 * c + 1] } else { 0.0 };
        cells[c] = cells[2 * c] + b;
    }
    cells[n.div_ceil(2)..].fill(0.0);
}

/// A row of weights pooled at `span` into `side` cells by repeated halving from the weights
/// themselves (the cells past ⌈len / span⌉ are 0).
fn pool(weights: &[f32], span: usize, side: usize) -> Vec<f32> {
    let mut cells = weights.to_vec();
    let mut s = 1;
    while s < span {
        halve(&mut cells);
        s *= 2;
    }
    cells.resize(cells.len().max(side), 0.0);
    cells.truncate(side);
    cells
}

/// Every head's weights pooled by columns, row by row, at a power-of-two span: what the
/// heads grid of a long text is drawn from, kept beside the text's trace and brought up to
/// date with it (`update`) for the rows that changed only — a keystroke at the end costs one
/// row of every head, as in the forward. `thumbnails` pools the rows.
#[derive(Clone, Debug, Default)]
pub struct Pooled {
    side: usize,
    span: usize,
    /// The run and options the rows are of, and the model's layers × heads.
    tokens: Vec<u32>,
    options: Option<AttentionOptions>,
    shape: (usize, usize),
    /// `rows[hd][i · side + c]`, hd = layer · n_head + head: each head's rows one after
    /// another (a text grown or cut moves none of them); the cells past ⌈T / span⌉ are 0.
    rows: Vec<Vec<f32>>,
    /// `bands[hd][r · side + c]`: each whole band of `span` rows summed (in order, in f64),
    /// so a keystroke sums the last band's rows only. A band's cells past the columns it had
    /// are 0, as a later key's weight from an earlier query is under the causal mask.
    bands: Vec<Vec<f64>>,
    /// `sums[hd][i]`: the head's text-role terms (`roles::row_terms`) of rows 1..=i summed in
    /// order (row 0's are 0: it is not counted), kept with the rows — so a keystroke adds one
    /// row's terms and the roles read the last sums, as `roles::head_scores` adds them.
    sums: Vec<Vec<[f64; 5]>>,
}

impl Pooled {
    /// Nothing pooled yet; thumbnails of at most `side` × `side` cells.
    pub fn new(side: usize) -> Pooled {
        Pooled {
            side,
            span: 1,
            ..Pooled::default()
        }
    }

    /// Brings the rows up to `trace`: those of the rows it shares with the run they are of
    /// (the same tokens from the start, the same options, a causal mask: a row sees only
    /// the keys before it) stay; the others are pooled from its maps (computed from q and k
    /// when it kept none, `head_rows`).
    pub fn update(&mut self, trace: &Trace) -> Result<()> {
        let d = trace.dims;
        let (t, side) = (d.t, self.side);
        if side == 0 {
            return Err(Error::Options("a thumbnail needs at least one cell".into()));
        }
        let heads = d.n_layer * d.n_head;
        let same = self.options.as_ref() == Some(&trace.options)
            && self.shape == (d.n_layer, d.n_head)
            && trace.options.causal_mask;
        let keep = if same {
            let common = self.tokens.iter().zip(&trace.tokens);
            common.take_while(|(a, b)| a == b).count()
        } else {
            0
        };
        // a fresh run pools at the span it needs; an edited one at least at the span it had
        let span = if keep == 0 {
            span_for(t, side)
        } else {
            span_for(t, side).max(self.span)
        };
        // the whole bands still summed: those inside the kept rows, at the same span
        let whole = if span == self.span { keep / span } else { 0 };
        let mut bands = std::mem::take(&mut self.bands);
        bands.resize_with(heads, Vec::new);
        let mut rows = std::mem::take(&mut self.rows);
        rows.resize_with(heads, Vec::new);
        let mut sums = std::mem::take(&mut self.sums);
        sums.resize_with(heads, Vec::new);
        for r in sums.iter_mut() {
            r.truncate(keep);
        }
        let causal = trace.options.causal_mask;
        for r in rows.iter_mut() {
            r.truncate(keep * side);
            if span > self.span {
                for row in r.chunks_exact_mut(side) {
                    let mut s = self.span;
                    while s < span {
                        halve(row);
                        s *= 2;
                    }
                }
            }
        }
        if keep < t {
            for l in 0..d.n_layer {
                for h in 0..d.n_head {
                    let band = trace.head_rows(l, h, keep..t)?;
                    let hd = l * d.n_head + h;
                    let (r, sums) = (&mut rows[hd], &mut sums[hd]);
                    for (i, w) in (keep..).zip(band.weights.chunks_exact(t)) {
                        r.extend(pool(w, span, side));
                        let mut sum = sums.last().copied().unwrap_or_default();
                        if i > 0 {
                            for (s, x) in sum.iter_mut().zip(roles::row_terms(w, i, causal)) {
                                *s += x;
                            }
                        }
                        sums.push(sum);
                    }
                }
            }
        }
        for (b, r) in bands.iter_mut().zip(&rows) {
            b.truncate(whole * side);
            for band in whole..t / span {
                b.extend(band_sum(r, band * span..(band + 1) * span, side));
            }
        }
        *self = Pooled {
            side,
            span,
            tokens: trace.tokens.clone(),
            options: Some(trace.options.clone()),
            shape: (d.n_layer, d.n_head),
            rows,
            bands,
            sums,
        };
        Ok(())
    }

    /// The rows pooled into cells: each cell the mean over its rows (in order, in f64).
    pub fn thumbnails(&self) -> Thumbnails {
        let (t, span, side) = (self.tokens.len(), self.span, self.side);
        let cells = t.div_ceil(span);
        let heads = self.shape.0 * self.shape.1;
        let mut weights = vec![0f32; heads * cells * cells];
        for (hd, (rows, bands)) in self.rows.iter().zip(&self.bands).enumerate().take(heads) {
            let thumb = &mut weights[hd * cells * cells..][..cells * cells];
            for (r, out) in thumb.chunks_exact_mut(cells).enumerate() {
                let band = r * span..((r + 1) * span).min(t);
                let n = band.len() as f64;
                // a whole band's sums were kept; the last, partial one is summed now
                let partial;
                let sums = match bands.get(r * side..(r + 1) * side) {
                    Some(s) => s,
                    None => {
                        partial = band_sum(rows, band, side);
                        &partial
                    }
                };
                for (o, s) in out.iter_mut().zip(sums) {
                    *o = (s / n) as f32;
                }
            }
        }
        // the text roles: the last row's running sums
        let mut text_roles = Vec::with_capacity(heads * roles::TEXT_ROLES.len());
        for sums in self.sums.iter().take(heads) {
            let scores = roles::text_scores_of(sums.last().copied().unwrap_or_default(), t);
            text_roles.extend(roles::TEXT_ROLES.into_iter().map(|r| scores.get(r)));
        }
        Thumbnails {
            n_layer: self.shape.0,
            n_head: self.shape.1,
            span,
            cells,
            weights,
            roles: text_roles,
        }
    }
}

/// The rows `band` of one head's pooled rows (`side` cells each) summed cell by cell, in
/// order, in f64.
fn band_sum(rows: &[f32], band: Range<usize>, side: usize) -> Vec<f64> {
    let mut sums = vec![0f64; side];
    for i in band {
        for (s, &x) in sums.iter_mut().zip(&rows[i * side..][..side]) {
            *s += x as f64;
        }
    }
    sums
}

impl Trace {
    /// Every head's weights pooled to at most `side` × `side` cells (`Thumbnails`).
    pub fn thumbnails(&self, side: usize) -> Result<Thumbnails> {
        let mut pooled = Pooled::new(side);
        pooled.update(self)?;
        Ok(pooled.thumbnails())
    }
}
