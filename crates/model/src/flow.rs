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

use serde::{Deserialize, Serialize};

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

/// One head's value-weighted attention: w_ij·‖v_j‖, rows renormalised. (T, T)
pub fn value_weighted(trace: &Trace, layer: usize, head: usize) -> Vec<f32> {
    let (t, dk) = (trace.dims.t, trace.dims.d_k);
    // (a slim trace holds the head's values with its maps)
    let v = match trace.try_head(layer, head) {
        Some(h) => h.v,
        None => &trace.layers[layer].v[head * t * dk..(head + 1) * t * dk],
    };
    let weights = trace.head_weights(layer, head);
    let norms: Vec<f32> = v
        .chunks(dk)
        .map(|v| v.iter().map(|x| x * x).sum::<f32>().sqrt())
        .collect();
    let mut out = vec![0.0; t * t];
    for i in 0..t {
        let row = &mut out[i * t..(i + 1) * t];
        for (j, r) in row.iter_mut().enumerate() {
            *r = weights[i * t + j] * norms[j];
        }
        let sum: f32 = row.iter().sum();
        if sum > 0.0 {
            row.iter_mut().for_each(|r| *r /= sum);
        }
    }
    out
}

/// Attention rollout after every layer: `R_l` for l = 0 … L−1, each (T, T).
pub fn rollout(trace: &Trace) -> Vec<Vec<f32>> {
    let d = trace.dims;
    let t = d.t;
    let mut out: Vec<Vec<f32>> = Vec::with_capacity(d.n_layer);
    for l in 0..d.n_layer {
        // Â = ½ · mean over heads + ½ · I
        let mut a = vec![0.0f32; t * t];
        for h in 0..d.n_head {
            for (x, w) in a.iter_mut().zip(trace.head_weights(l, h).iter()) {
                *x += w / d.n_head as f32;
            }
        }
        for i in 0..t {
            for j in 0..t {
                a[i * t + j] = 0.5 * a[i * t + j] + if i == j { 0.5 } else { 0.0 };
            }
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

/// For the query `q`: how much each input token contributes after every layer, by `method`
/// (for raw and value-weighted: the heads of each layer averaged), (L, T).
pub fn strip(trace: &Trace, q: usize, method: Method) -> Vec<Vec<f32>> {
    let d = trace.dims;
    let t = d.t;
    match method {
        Method::Rollout => rollout_rows(&rollout(trace), t, q),
        Method::Raw | Method::Value => (0..d.n_layer)
            .map(|l| {
                let mut row = vec![0.0f32; t];
                for h in 0..d.n_head {
                    let m = if method == Method::Raw {
                        raw(trace, l, h)
                    } else {
                        value_weighted(trace, l, h)
                    };
                    for (x, w) in row.iter_mut().zip(&m[q * t..(q + 1) * t]) {
                        *x += w / d.n_head as f32;
                    }
                }
                row
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
            let s = strip(&tr, 4, m);
            assert_eq!(s.len(), tr.dims.n_layer);
            for row in &s {
                assert_eq!(row.len(), tr.dims.t);
                assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-5, "{m:?}");
            }
            assert_eq!(Method::from_code(m.code()), Some(m));
        }
    }
}
