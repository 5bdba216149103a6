//! Where a token's information comes from, across heads and layers, from a [`Trace`]:
//!
//! - **raw** attention: one head's weights as they are;
//! - **value-weighted** attention (after Kobayashi et al. 2020): weight × ‖v_j‖, the length of
//!   the value vector a key contributes, each row renormalised to sum to 1 (so with equal
//!   value norms it is the raw attention again);
//! - **rollout** (Abnar & Zuidema 2020), an approximation: per layer the heads' weights are
//!   averaged (every head, ablated ones too), the residual connection is added as the
//!   identity, `Â = ½·A + ½·I` (rows still sum to 1), and the layers are multiplied from the
//!   first: `R₀ = Â₀`, `R_l = Â_l · R_{l−1}`. Row q of `R_l` says how much each input token
//!   reaches token q after block l, if attention were the only path (it ignores the FFNs, the
//!   LayerNorms and what W_V·W_O do to each value).

use std::borrow::Cow;
use std::ops::Range;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::trace::Trace;

/// Which of the three the view shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    Raw,
    Value,
    Rollout,
}

impl Method {
    pub const ALL: [Method; 3] = [Method::Raw, Method::Value, Method::Rollout];

    pub fn code(self) -> &'static str {
        match self {
            Method::Raw => "raw",
            Method::Value => "value",
            Method::Rollout => "rollout",
        }
    }

    pub fn from_code(s: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|m| m.code() == s)
    }
}

/// One head's raw weights. (T, T)
pub fn raw(trace: &Trace, layer: usize, head: usize) -> Vec<f32> {
    trace.head_weights(layer, head).into_owned()
}

/// The length ‖v_j‖ of each value vector of one head. (T)
fn value_norms(trace: &Trace, layer: usize, head: usize) -> Vec<f32> {
    let (t, dk) = (trace.dims.t, trace.dims.d_k);
    // (a slim trace holds the head's values with its maps)
    let v = match trace.try_head(layer, head) {
        Some(h) => h.v,
        None => &trace.layers[layer].v[head * t * dk..(head + 1) * t * dk],
    };
    v.chunks(dk)
        .map(|v| v.iter().map(|x| x * x).sum::<f32>().sqrt())
        .collect()
}

/// A row of weights made value-weighted in place: w_j·‖v_j‖, renormalised.
fn weigh_by_values(row: &mut [f32], norms: &[f32]) {
    for (r, n) in row.iter_mut().zip(norms) {
        *r *= n;
    }
    let sum: f32 = row.iter().sum();
    if sum > 0.0 {
        row.iter_mut().for_each(|r| *r /= sum);
    }
}

/// One head's value-weighted attention: w_ij·‖v_j‖, rows renormalised. (T, T)
pub fn value_weighted(trace: &Trace, layer: usize, head: usize) -> Vec<f32> {
    let t = trace.dims.t;
    let norms = value_norms(trace, layer, head);
    let mut out = trace.head_weights(layer, head).into_owned();
    for row in out.chunks_mut(t.max(1)) {
        weigh_by_values(row, &norms);
    }
    out
}

/// Row `q` of one head's matrix by `method` (raw or value-weighted: the rollout has no
/// heads, and gives the raw row). Only that row's weights are computed when the trace kept
/// no maps (`Trace::head_rows`). (T)
pub fn head_row(
    trace: &Trace,
    layer: usize,
    head: usize,
    q: usize,
    method: Method,
) -> Result<Vec<f32>> {
    let mut row = trace.head_rows(layer, head, q..q + 1)?.weights;
    if method == Method::Value {
        weigh_by_values(&mut row, &value_norms(trace, layer, head));
    }
    Ok(row)
}

/// Rows `rows` of `Â_l = ½ · (mean over heads of the weights) + ½ · I` into `a`, (rows, T).
fn rollout_step(trace: &Trace, l: usize, rows: Range<usize>, a: &mut [f32]) -> Result<()> {
    let (t, n_head) = (trace.dims.t, trace.dims.n_head);
    a.fill(0.0);
    for h in 0..n_head {
        let w = match trace.try_head(l, h) {
            Some(v) => Cow::Borrowed(&v.weights[rows.start * t..rows.end * t]),
            None => Cow::Owned(trace.head_rows(l, h, rows.clone())?.weights),
        };
        for (x, w) in a.iter_mut().zip(w.iter()) {
            *x += w / n_head as f32;
        }
    }
    for (r, i) in rows.enumerate() {
        for (j, x) in a[r * t..(r + 1) * t].iter_mut().enumerate() {
            *x = 0.5 * *x + if i == j { 0.5 } else { 0.0 };
        }
    }
    Ok(())
}

/// Attention rollout after every layer: `R_l` for l = 0 … L−1, each (T, T).
pub fn rollout(trace: &Trace) -> Vec<Vec<f32>> {
    let d = trace.dims;
    let t = d.t;
    let mut out: Vec<Vec<f32>> = Vec::with_capacity(d.n_layer);
    for l in 0..d.n_layer {
        let mut a = vec![0.0f32; t * t];
        if let Err(e) = rollout_step(trace, l, 0..t, &mut a) {
            panic!("{e}");
        }
        let r = match out.last() {
            None => a,
            Some(prev) => {
                let mut r = vec![0.0f32; t * t];
                for i in 0..t {
                    for k in 0..t {
                        let x = a[i * t + k];
                        if x != 0.0 {
                            for j in 0..t {
                                r[i * t + j] += x * prev[k * t + j];
                            }
                        }
                    }
                }
                r
            }
        };
        out.push(r);
    }
    out
}

/// Row `q` of every layer's rollout (`rollout`'s output, for a text of `t` tokens), (L, T).
pub fn rollout_rows(rollout: &[Vec<f32>], t: usize, q: usize) -> Vec<Vec<f32>> {
    rollout
        .iter()
        .map(|r| r[q * t..(q + 1) * t].to_vec())
        .collect()
}

/// Row `q` of every layer's rollout without any layer's whole `R_l`: row q of `R_l` is
/// `e_q · Â_l · Â_{l−1} ⋯ Â_0`, so going down from the last layer each layer's `Â` (only the
/// rows that reach q: up to q with the causal mask) multiplies every row begun above it.
/// Holds one layer's `Â` and L rows, O(q·T + L·T) values, not rollout's L·T²; its work is
/// O(L·H·q·T·d_k + L²·q·T), not rollout's O(L·T³). (L, T)
fn rollout_strip(trace: &Trace, q: usize) -> Result<Vec<Vec<f32>>> {
    let (t, n_layer) = (trace.dims.t, trace.dims.n_layer);
    let n = if trace.options.causal_mask { q + 1 } else { t };
    let mut a = vec![0.0f32; n * t];
    // rows[i]: the layer n_layer − 1 − i's
    let mut rows: Vec<Vec<f32>> = Vec::with_capacity(n_layer);
    for l in (0..n_layer).rev() {
        rollout_step(trace, l, 0..n, &mut a)?;
        let mut e = vec![0.0f32; t];
        e[q] = 1.0;
        rows.push(e);
        for u in &mut rows {
            let mut next = vec![0.0f32; t];
            // (u is zero past n: with the mask, Â's row k reaches no key after k)
            for (x, a_k) in u[..n].iter().zip(a.chunks_exact(t)) {
                if *x != 0.0 {
                    for (y, w) in next.iter_mut().zip(a_k) {
                        *y += x * w;
                    }
                }
            }
            *u = next;
        }
    }
    rows.reverse();
    Ok(rows)
}

/// For the query `q`: how much each input token contributes after every layer, by `method`
/// (for raw and value-weighted: the heads of each layer averaged), (L, T). Computes only the
/// rows it reads when the trace kept no maps: the query's row of each head, or for the
/// rollout the rows that reach it, one layer at a time (`rollout_strip`).
pub fn strip(trace: &Trace, q: usize, method: Method) -> Result<Vec<Vec<f32>>> {
    let d = trace.dims;
    if q >= d.t {
        return Err(Error::Options(format!(
            "no query {q}: the text has {} positions",
            d.t
        )));
    }
    match method {
        Method::Rollout => rollout_strip(trace, q),
        Method::Raw | Method::Value => (0..d.n_layer)
            .map(|l| {
                let mut row = vec![0.0f32; d.t];
                for h in 0..d.n_head {
                    for (x, w) in row.iter_mut().zip(head_row(trace, l, h, q, method)?) {
                        *x += w / d.n_head as f32;
                    }
                }
                Ok(row)
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{random_model, tiny_config};
    use crate::{forward, AttentionOptions, LnPlacement};

    fn trace() -> Trace {
        let model = random_model(&tiny_config(LnPlacement::Post), 8, 1.5);
        forward(&model, &[2, 7, 1, 8, 2, 8], &AttentionOptions::default()).unwrap()
    }

    #[test]
    fn rollout_of_identity_attention_is_identity_and_rows_sum_to_one() {
        let mut tr = trace();
        let t = tr.dims.t;
        let identity: Vec<f32> = (0..t * t)
            .map(|e| if e / t == e % t { 1.0 } else { 0.0 })
            .collect();
        let real = rollout(&tr);
        for r in &real {
            for i in 0..t {
                let s: f32 = r[i * t..(i + 1) * t].iter().sum();
                assert!((s - 1.0).abs() < 1e-5, "row {i} sums to {s}");
                // causal: nothing comes from the future
                assert!(r[i * t + i + 1..(i + 1) * t].iter().all(|&x| x == 0.0));
            }
        }
        for l in &mut tr.layers {
            for h in 0..tr.dims.n_head {
                l.weights[h * t * t..(h + 1) * t * t].copy_from_slice(&identity);
            }
        }
        for r in rollout(&tr) {
            assert_eq!(r, identity);
        }
    }

    #[test]
    fn equal_value_norms_give_back_raw_attention() {
        let mut tr = trace();
        let dk = tr.dims.d_k;
        // every value vector of head 1 in layer 0 scaled to length 2
        let t = tr.dims.t;
        let v = &mut tr.layers[0].v[t * dk..2 * t * dk];
        for chunk in v.chunks_mut(dk) {
            let n = chunk.iter().map(|x| x * x).sum::<f32>().sqrt();
            chunk.iter_mut().for_each(|x| *x *= 2.0 / n);
        }
        let (r, vw) = (raw(&tr, 0, 1), value_weighted(&tr, 0, 1));
        for (a, b) in r.iter().zip(&vw) {
            assert!((a - b).abs() < 1e-6);
        }
        // unequal norms move weight towards the longer values, rows still sum to 1
        let vw0 = value_weighted(&tr, 0, 0);
        for i in 0..t {
            assert!((vw0[i * t..(i + 1) * t].iter().sum::<f32>() - 1.0).abs() < 1e-5);
        }
    }

    #[test]
    fn the_strip_has_a_row_per_layer_that_sums_to_one() {
        let tr = trace();
        for m in Method::ALL {
            let s = strip(&tr, 4, m).unwrap();
            assert_eq!(s.len(), tr.dims.n_layer);
            for row in &s {
                assert_eq!(row.len(), tr.dims.t);
                assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-5, "{m:?}");
            }
            assert_eq!(Method::from_code(m.code()), Some(m));
        }
        assert!(strip(&tr, tr.dims.t, Method::Raw).is_err());
    }

    /// The strip's rollout, row by row down the layers, is every layer's whole rollout's row
    /// (with the mask and without); its raw and value rows are each head's matrix's.
    #[test]
    fn the_strip_is_the_rows_of_the_whole_matrices() {
        let model = random_model(&tiny_config(LnPlacement::Pre), 8, 1.5);
        for causal_mask in [true, false] {
            let opts = AttentionOptions {
                causal_mask,
                ..AttentionOptions::default()
            };
            let tr = forward(&model, &[2, 7, 1, 8, 2, 8, 1, 8], &opts).unwrap();
            let (t, d) = (tr.dims.t, tr.dims);
            let whole = rollout(&tr);
            for q in 0..t {
                let rows = strip(&tr, q, Method::Rollout).unwrap();
                for (l, (a, b)) in rows.iter().zip(rollout_rows(&whole, t, q)).enumerate() {
                    for (j, (x, y)) in a.iter().zip(&b).enumerate() {
                        assert!(
                            (x - y).abs() < 1e-6,
                            "mask {causal_mask} q {q} L{l} key {j}: {x} vs {y}"
                        );
                    }
                }
                for (m, f) in [
                    (Method::Raw, raw as fn(&Trace, usize, usize) -> Vec<f32>),
                    (Method::Value, value_weighted),
                ] {
                    let s = strip(&tr, q, m).unwrap();
                    assert_eq!(s.len(), d.n_layer);
                    for (l, shown) in s.iter().enumerate() {
                        let mut mean = vec![0.0f32; t];
                        for h in 0..d.n_head {
                            let row = head_row(&tr, l, h, q, m).unwrap();
                            assert_eq!(
                                row,
                                f(&tr, l, h)[q * t..(q + 1) * t],
                                "{m:?} L{l}H{h} q {q}"
                            );
                            for (x, w) in mean.iter_mut().zip(&row) {
                                *x += w / d.n_head as f32;
                            }
                        }
                        assert_eq!(*shown, mean);
                    }
                }
            }
        }
    }
}
