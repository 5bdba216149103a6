//! Attention maps on demand: one head's four stages (QKᵀ, ÷√d_k, the mask, the softmax) for
//! a range of query rows, computed from a trace's queries and keys with the forward pass's
//! own kernels — so they equal, bit for bit, the maps a whole trace records. A trace that
//! kept no maps (`Keep::Streams`) costs O(layers · T · d_model); a map costs O(rows · T) when
//! a view asks for it.

use std::borrow::Cow;
use std::ops::Range;

use crate::cpu;
use crate::error::{Error, Result};
use crate::field::Dims;
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
        let HeadVectors {
            q, k, v, head_out, ..
        } = self.head_vectors(layer, head)?;
        Ok(HeadMaps {
            layer,
            head,
            q,
            k,
            v,
            head_out,
            scores: rows.scores,
            scaled: rows.scaled,
            masked: rows.masked,
            weights: rows.weights,
        })
    }

    /// Head `head` of block `layer`'s queries, keys, values and output, each (T, d_k),
    /// without its maps.
    pub fn head_vectors(&self, layer: usize, head: usize) -> Result<HeadVectors> {
        let (t, dk) = (self.dims.t, self.dims.d_k);
        if let Some(m) = self.held(layer, head) {
            return Ok(HeadVectors {
                layer,
                head,
                q: m.q.clone(),
                k: m.k.clone(),
                v: m.v.clone(),
                head_out: m.head_out.clone(),
            });
        }
        let cells = head * t * dk..(head + 1) * t * dk;
        let l = self
            .layers
            .get(layer)
            .filter(|l| {
                head < self.dims.n_head
                    && [&l.q, &l.k, &l.v, &l.head_out]
                        .iter()
                        .all(|x| x.len() >= cells.end)
            })
            .ok_or_else(|| {
                Error::Options(format!(
                    "this trace holds no vectors of head {layer}.{head}"
                ))
            })?;
        let part = |x: &[f32]| x[cells.clone()].to_vec();
        Ok(HeadVectors {
            layer,
            head,
            q: part(&l.q),
            k: part(&l.k),
            v: part(&l.v),
            head_out: part(&l.head_out),
        })
    }

    /// What a page needs to show these heads of a long text, and no more: the tokens and
    /// options, the next-token logits and probabilities after the last position, and each
    /// head's `HeadMaps`; the blocks' fields, the embedding and the final norm's rows are
    /// left empty. Its `head` gives those heads exactly as this trace's would.
    pub fn slim(&self, heads: &[(usize, usize)]) -> Result<Trace> {
        self.slim_with(heads, |l, h| self.head_maps(l, h))
    }

    /// The slim trace of `heads` (each once), each head's maps from `maps`.
    fn slim_with(
        &self,
        heads: &[(usize, usize)],
        mut maps: impl FnMut(usize, usize) -> Result<HeadMaps>,
    ) -> Result<Trace> {
        let v = self.dims.vocab;
        let last = |x: &[f32]| x[x.len().saturating_sub(v)..].to_vec();
        let mut kept = Vec::new();
        for &(l, h) in heads {
            if !kept.iter().any(|m: &HeadMaps| (m.layer, m.head) == (l, h)) {
                kept.push(maps(l, h)?);
            }
        }
        let meta = (&self.tokens[..], self.dropped, &self.options);
        Ok(slim_trace(
            self.dims,
            meta,
            (last(&self.logits), last(&self.probs)),
            kept,
        ))
    }

    /// `slim(heads)` for a run that went on from an earlier one whose slim trace is `earlier`
    /// (this trace's forward reused that run's rows): a head `earlier` holds keeps the rows
    /// the two runs share, moved in place — their new keys' scores computed, masked, weight 0
    /// (the keys come after the query) — and only the rows after them are computed. A
    /// keystroke at the end of a long text thus computes the last few rows of the head, not
    /// all T × T. A row is kept only when at least three masked keys follow it at both
    /// lengths: `cpu::softmax_rows` then sums its weights in the same lanes at either, so the
    /// kept weights are the ones `slim` computes. Natively the maps equal `slim`'s bit for
    /// bit; in wasm a few new rows take another product kernel than T rows do, and round
    /// apart by an ulp.
    pub fn slim_after(&self, heads: &[(usize, usize)], mut earlier: Trace) -> Result<Trace> {
        let meta = (&self.tokens[..], self.dropped, &self.options);
        let shared = kept_rows(&earlier, &self.dims, meta);
        let e = earlier.dims;
        self.slim_with(heads, |l, h| {
            let at = earlier
                .heads
                .iter()
                .position(|m| (m.layer, m.head) == (l, h));
            match at {
                Some(i) if shared > 0 => {
                    let old = earlier.heads.swap_remove(i);
                    self.grown_maps(old, e.t, shared)
                }
                _ => self.head_maps(l, h),
            }
        })
    }

    /// `old`'s maps (over `old_t` positions) with its first `s` rows kept and laid out for
    /// this trace's length, their new keys computed, and the rows from `s` on computed.
    fn grown_maps(&self, old: HeadMaps, old_t: usize, s: usize) -> Result<HeadMaps> {
        let vectors = self.head_vectors(old.layer, old.head)?;
        let (t, dk) = (self.dims.t, self.dims.d_k);
        Ok(grow_maps(old, (old_t, s), vectors, (t, dk), &self.options))
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
        stages(
            &l.q[heads.clone()],
            &l.k[heads],
            dk,
            &self.options,
            &mut out,
        );
        Ok(out)
    }

    /// What a page needs to show `heads` of a long text whose forward ran elsewhere (the GPU
    /// engine, which read back only these heads' q, k, v and outputs): the trace `slim`
    /// gives, its maps computed here from q and k. `logits` and `probs`: the last
    /// position's. `earlier`: the slim trace of the run this one's forward went on from
    /// (it reused that run's rows), whose heads' shared rows are kept as `slim_after` keeps
    /// them (copied: the page still shows it); only the rows after them are computed.
    pub fn slim_from(
        dims: Dims,
        (tokens, dropped, options): (&[u32], usize, &AttentionOptions),
        (logits, probs): (Vec<f32>, Vec<f32>),
        heads: Vec<HeadVectors>,
        earlier: Option<&Trace>,
    ) -> Result<Trace> {
        let shared = earlier.map_or(0, |e| kept_rows(e, &dims, (tokens, dropped, options)));
        let (t, dk) = (dims.t, dims.d_k);
        let mut kept: Vec<HeadMaps> = Vec::new();
        for h in heads {
            if h.layer >= dims.n_layer || h.head >= dims.n_head {
                return Err(Error::Options(format!(
                    "no head {}.{}: the model has {} layers × {} heads",
                    h.layer, h.head, dims.n_layer, dims.n_head
                )));
            }
            if [&h.q, &h.k, &h.v, &h.head_out]
                .iter()
                .any(|x| x.len() != t * dk)
            {
                return Err(Error::Options(format!(
                    "head {}.{}: its vectors are not {t} × {dk}",
                    h.layer, h.head
                )));
            }
            if kept.iter().any(|m| (m.layer, m.head) == (h.layer, h.head)) {
                continue;
            }
            let old = earlier
                .filter(|_| shared > 0)
                .and_then(|e| Some((e.held(h.layer, h.head)?, e.dims.t)));
            if let Some((old, old_t)) = old {
                // copied with room for this length, so that growing moves it no more
                let copy = |m: &[f32]| {
                    let mut c = Vec::with_capacity(m.len().max(t * t));
                    c.extend_from_slice(m);
                    c
                };
                let old = HeadMaps {
                    scores: copy(&old.scores),
                    scaled: copy(&old.scaled),
                    masked: copy(&old.masked),
                    weights: copy(&old.weights),
                    ..HeadMaps::default()
                };
                let grown = grow_maps(old, (old_t, shared), h, (t, dk), options);
                kept.push(grown);
                continue;
            }
            let mut rows = HeadRows {
                layer: h.layer,
                head: h.head,
                rows: 0..t,
                t,
                scores: vec![0.0; t * t],
                scaled: vec![0.0; t * t],
                masked: vec![0.0; t * t],
                weights: vec![0.0; t * t],
            };
            stages(&h.q, &h.k, dk, options, &mut rows);
            kept.push(HeadMaps {
                layer: h.layer,
                head: h.head,
                q: h.q,
                k: h.k,
                v: h.v,
                head_out: h.head_out,
                scores: rows.scores,
                scaled: rows.scaled,
                masked: rows.masked,
                weights: rows.weights,
            });
        }
        Ok(slim_trace(
            dims,
            (tokens, dropped, options),
            (logits, probs),
            kept,
        ))
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

/// How many rows of `earlier`'s maps (a slim trace) a run over `tokens` (with `dropped` and
/// `options`) of `dims` keeps: the positions the two runs share at the start
/// (`forward::reusable_prefix`), less the rows without three masked keys after them at either
/// length (see `Trace::slim_after`); 0 for another model's trace.
fn kept_rows(
    earlier: &Trace,
    dims: &Dims,
    (tokens, dropped, options): (&[u32], usize, &AttentionOptions),
) -> usize {
    let e = earlier.dims;
    let same_shape = (e.n_layer, e.n_head, e.d_k) == (dims.n_layer, dims.n_head, dims.d_k);
    crate::forward::reusable_prefix(&earlier.tokens, &earlier.options, tokens, dropped, options)
        .filter(|_| same_shape && earlier.dropped == 0)
        .map_or(0, |s| s.min(e.t.min(dims.t).saturating_sub(3)))
}

/// `old`'s maps (over `old_t` positions) with their first `s` rows kept and laid out for `t`
/// positions, the kept rows' new keys computed (q·k and the scale; masked, weight 0), and the
/// rows from `s` on computed from the head's `vectors` (each (t, d_k)) with `options`.
fn grow_maps(
    old: HeadMaps,
    (old_t, s): (usize, usize),
    vectors: HeadVectors,
    (t, dk): (usize, usize),
    options: &AttentionOptions,
) -> HeadMaps {
    let HeadVectors {
        layer,
        head,
        q,
        k,
        v,
        head_out,
    } = vectors;
    let n = t - s;
    let mut rows = HeadRows {
        layer,
        head,
        rows: s..t,
        t,
        scores: vec![0.0; n * t],
        scaled: vec![0.0; n * t],
        masked: vec![0.0; n * t],
        weights: vec![0.0; n * t],
    };
    stages(&q, &k, dk, options, &mut rows);
    // the kept rows against the keys from s on: after every kept query, so masked
    let (mut raw, mut scaled) = (vec![0f32; s * n], vec![0f32; s * n]);
    cpu::qk_scores(&q[..s * dk], &k[s * dk..], s, n, dk, &mut raw);
    cpu::scale_scores(&raw, options.scale_factor(dk), &mut scaled);
    let grow = |mut map: Vec<f32>, after: Option<&[f32]>, fill: f32, new: &[f32]| {
        restride(&mut map, (old_t, t), s);
        for i in 0..s {
            let tail = &mut map[i * t + s..(i + 1) * t];
            match after {
                Some(x) => tail.copy_from_slice(&x[i * n..(i + 1) * n]),
                None => tail.fill(fill),
            }
        }
        map[s * t..].copy_from_slice(new);
        map
    };
    HeadMaps {
        layer,
        head,
        scores: grow(old.scores, Some(&raw), 0.0, &rows.scores),
        scaled: grow(old.scaled, Some(&scaled), 0.0, &rows.scaled),
        masked: grow(old.masked, None, cpu::MASKED, &rows.masked),
        weights: grow(old.weights, None, 0.0, &rows.weights),
        q,
        k,
        v,
        head_out,
    }
}

/// A slim trace: the run, its last position's prediction and `heads`, no block fields.
fn slim_trace(
    dims: Dims,
    (tokens, dropped, options): (&[u32], usize, &AttentionOptions),
    (logits, probs): (Vec<f32>, Vec<f32>),
    heads: Vec<HeadMaps>,
) -> Trace {
    Trace {
        dims,
        tokens: tokens.to_vec(),
        dropped,
        options: options.clone(),
        embedding: Vec::new(),
        layers: vec![LayerTrace::default(); dims.n_layer],
        ln_f: None,
        logits,
        probs,
        heads,
        thumbnails: None,
    }
}

/// A square map of `from` × `from` values made `to` × `to` in place, its top-left `rows` ×
/// `rows` block kept where it was in the matrix (the rest of the map is left to the caller).
fn restride(map: &mut Vec<f32>, (from, to): (usize, usize), rows: usize) {
    assert!(rows <= from.min(to) && map.len() == from * from);
    if to > from {
        // exactly: the map is kept beside the next one (the CPU worker's last result)
        map.reserve_exact(to * to - map.len());
        map.resize(to * to, 0.0);
    }
    crate::earlier::move_blocks(map, rows, (from, to), rows);
    map.truncate(to * to);
}

/// One head's vectors over every position, each (T, d_k): what `Trace::slim_from` computes
/// its maps from.
#[derive(Clone, Debug, PartialEq)]
pub struct HeadVectors {
    pub layer: usize,
    pub head: usize,
    pub q: Vec<f32>,
    pub k: Vec<f32>,
    pub v: Vec<f32>,
    pub head_out: Vec<f32>,
}

/// `out`'s four maps for its query rows, from one head's q and k (each (T, d_k)) with the
/// run's options — the forward's own kernels.
fn stages(q: &[f32], k: &[f32], dk: usize, o: &AttentionOptions, out: &mut HeadRows) {
    let (rows, t) = (out.rows.clone(), out.t);
    cpu::attn_scores(
        &q[rows.start * dk..rows.end * dk],
        k,
        (rows.len(), t, dk),
        o.scale_factor(dk),
        o.causal_mask.then_some(rows.start),
        &mut out.scores,
        &mut out.scaled,
        &mut out.masked,
    );
    cpu::softmax_rows(&out.masked, t, o.temperature, &mut out.weights);
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

    /// Which rows a run of `tokens` with `options` on a model of `shape` (layers, heads)
    /// has to pool, and at which span: the rows from the first it does not share with the
    /// run the kept rows are of (the same tokens from the start, the same options, a causal
    /// mask: a row sees only the keys before it), at the span `tokens` needs — or, for an
    /// edited run, at least the span the kept rows have.
    pub fn plan(
        &self,
        tokens: &[u32],
        options: &AttentionOptions,
        shape: (usize, usize),
    ) -> Result<(Range<usize>, usize)> {
        if self.side == 0 {
            return Err(Error::Options("a thumbnail needs at least one cell".into()));
        }
        let t = tokens.len();
        let same =
            self.options.as_ref() == Some(options) && self.shape == shape && options.causal_mask;
        let keep = if same {
            let common = self.tokens.iter().zip(tokens);
            common.take_while(|(a, b)| a == b).count()
        } else {
            0
        };
        let span = if keep == 0 {
            span_for(t, self.side)
        } else {
            span_for(t, self.side).max(self.span)
        };
        Ok((keep..t, span))
    }

    /// Brings the rows up to `trace`: those of the rows it shares with the run they are of
    /// stay (`plan`); the others are pooled from its maps (computed from q and k when it
    /// kept none, `head_rows`).
    pub fn update(&mut self, trace: &Trace) -> Result<()> {
        let d = trace.dims;
        let shape = (d.n_layer, d.n_head);
        let (rows, span) = self.plan(&trace.tokens, &trace.options, shape)?;
        let (t, side, causal) = (d.t, self.side, trace.options.causal_mask);
        self.grow(
            &trace.tokens,
            &trace.options,
            shape,
            (rows.start, span),
            |l, h, add| {
                let band = trace.head_rows(l, h, rows.clone())?;
                for (i, w) in rows.clone().zip(band.weights.chunks_exact(t)) {
                    // (row 0 is not counted)
                    let terms = if i > 0 {
                        roles::row_terms(w, i, causal)
                    } else {
                        [0.0; 5]
                    };
                    add(i, pool(w, span, side), terms);
                }
                Ok(())
            },
        )
    }

    /// Brings the rows up to a run of `tokens` with `options` on a model of `shape` whose
    /// rows `plan` asked for were pooled elsewhere (the GPU engine's `attn_pool`, at the span
    /// `plan` gave): `data` holds, head after head (layer · n_head + head), each asked row's
    /// `side` cells then its five role terms.
    pub fn update_pooled(
        &mut self,
        tokens: &[u32],
        options: &AttentionOptions,
        shape: (usize, usize),
        data: &[f32],
    ) -> Result<()> {
        let (rows, span) = self.plan(tokens, options, shape)?;
        let (n, side) = (rows.len(), self.side);
        let width = side + roles::TEXT_ROLES.len();
        let heads = shape.0 * shape.1;
        if data.len() != heads * n * width {
            return Err(Error::Options(format!(
                "pooled rows: {} values for {heads} heads × {n} rows × {width}",
                data.len()
            )));
        }
        self.grow(tokens, options, shape, (rows.start, span), |l, h, add| {
            let hd = l * shape.1 + h;
            for (i, r) in rows
                .clone()
                .zip(data[hd * n * width..][..n * width].chunks_exact(width))
            {
                add(
                    i,
                    r[..side].to_vec(),
                    std::array::from_fn(|k| r[side + k] as f64),
                );
            }
            Ok(())
        })
    }

    /// The common part of both updates: the rows from `keep` on replaced by those `source`
    /// gives (for each layer and head, each row's cells at `span` and its role terms, in
    /// order), the kept ones halved up to `span`, the band sums and running role sums brought
    /// up to date.
    fn grow(
        &mut self,
        tokens: &[u32],
        options: &AttentionOptions,
        shape: (usize, usize),
        (keep, span): (usize, usize),
        mut source: impl FnMut(usize, usize, &mut dyn FnMut(usize, Vec<f32>, [f64; 5])) -> Result<()>,
    ) -> Result<()> {
        let (t, side) = (tokens.len(), self.side);
        let heads = shape.0 * shape.1;
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
            for l in 0..shape.0 {
                for h in 0..shape.1 {
                    let hd = l * shape.1 + h;
                    let (r, sums) = (&mut rows[hd], &mut sums[hd]);
                    source(l, h, &mut |i, cells, terms| {
                        r.extend(cells);
                        let mut sum = sums.last().copied().unwrap_or_default();
                        if i > 0 {
                            for (s, x) in sum.iter_mut().zip(terms) {
                                *s += x;
                            }
                        }
                        sums.push(sum);
                    })?;
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
            tokens: tokens.to_vec(),
            options: Some(options.clone()),
            shape,
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

/// One (T, T) map of weights pooled to at most `side` × `side` cells exactly as `Pooled`
/// pools a head of a run (the same span, the same sums): (span, cells, the cells row by row).
/// For attention computed elsewhere (the Python package's `view`).
pub fn pool_map(weights: &[f32], t: usize, side: usize) -> (usize, usize, Vec<f32>) {
    let span = span_for(t, side);
    let cells = t.div_ceil(span);
    let rows: Vec<f32> = weights
        .chunks_exact(t)
        .flat_map(|w| pool(w, span, side))
        .collect();
    let mut out = Vec::with_capacity(cells * cells);
    for r in 0..cells {
        let band = r * span..((r + 1) * span).min(t);
        let n = band.len() as f64;
        let sums = band_sum(&rows, band, side);
        out.extend(sums[..cells].iter().map(|s| (s / n) as f32));
    }
    (span, cells, out)
}

impl Trace {
    /// Every head's weights pooled to at most `side` × `side` cells (`Thumbnails`).
    pub fn thumbnails(&self, side: usize) -> Result<Thumbnails> {
        let mut pooled = Pooled::new(side);
        pooled.update(self)?;
        Ok(pooled.thumbnails())
    }
}
