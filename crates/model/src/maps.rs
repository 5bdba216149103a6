//! Attention maps on demand: one head's four stages (QKᵀ, ÷√d_k, the mask, the softmax) for
//! a range of query rows, computed from a trace's queries and keys with the forward pass's
//! own kernels — so they equal, bit for bit, the maps a whole trace records. A trace that
//! kept no maps (`Keep::Streams`) costs O(layers · T · d_model); a map costs O(rows · T) when
//! a view asks for it.

use std::ops::Range;

use crate::cpu;
use crate::error::{Error, Result};
use crate::trace::Trace;

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
    /// Head `head` of block `layer`, query rows `rows`: read from the trace when it kept the
    /// maps, otherwise computed from its q and k with its options.
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
}
