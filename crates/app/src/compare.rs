//! The numbers behind the softmax-comparison and weighted-sum views, computed from a head's
//! raw scores with the same CPU reference functions the model uses.

use std::rc::Rc;

use attnlab_model::cpu::{self, MASKED};
use attnlab_model::AttentionOptions;

/// How a head's scores go through softmax.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Variant {
    /// softmax(QKᵀ)
    Unscaled,
    /// softmax(QKᵀ / √d_k), the Transformer's
    #[default]
    Scaled,
    /// softmax(QKᵀ / √d_k / τ)
    Temperature,
}

impl Variant {
    pub const ALL: [Variant; 3] = [Variant::Unscaled, Variant::Scaled, Variant::Temperature];

    pub fn code(self) -> &'static str {
        match self {
            Variant::Unscaled => "unscaled",
            Variant::Scaled => "scaled",
            Variant::Temperature => "temperature",
        }
    }

    /// The model-wide options that compute attention this way.
    pub fn options(self, tau: f32, causal_mask: bool) -> AttentionOptions {
        AttentionOptions {
            scale: self != Variant::Unscaled,
            temperature: if self == Variant::Temperature {
                tau
            } else {
                1.0
            },
            causal_mask,
            ..AttentionOptions::default()
        }
    }
}

/// One head's weights under a variant, with each row's entropy (nats) and largest weight
/// (the weights shared, so the view and the next keystroke's comparison hold one copy).
#[derive(Clone, Debug, PartialEq)]
pub struct VariantWeights {
    pub weights: Rc<Vec<f32>>, // (T, T)
    pub entropy: Vec<f32>,     // (T)
    pub max: Vec<f32>,         // (T)
}

impl VariantWeights {
    pub fn mean_entropy(&self) -> f32 {
        if self.entropy.is_empty() {
            0.0
        } else {
            self.entropy.iter().sum::<f32>() / self.entropy.len() as f32
        }
    }
}

/// Runs raw scores (T, T) through ÷√d_k (unless unscaled), the causal mask (if on) and
/// softmax with τ (only for `Variant::Temperature`).
pub fn variant_weights(
    scores: &[f32],
    t: usize,
    d_k: usize,
    variant: Variant,
    tau: f32,
    causal_mask: bool,
) -> VariantWeights {
    variant_weights_after(scores, t, d_k, variant, tau, causal_mask, None)
}

/// An earlier result of `variant_weights` with the same variant, τ and mask, over `t`
/// tokens, and how many of its first rows to take (`rows_unchanged`).
pub struct Earlier<'a> {
    pub weights: &'a VariantWeights,
    pub t: usize,
    pub rows: usize,
}

/// How many first rows of an earlier result over scores `old` (old T, old T) a result over
/// `scores` (T, T) may take, with the causal mask on: while a row's unmasked scores (keys
/// 0..=i) are the earlier ones, bit for bit, and at least three masked keys follow the row at
/// both lengths (`cpu::softmax_rows` then sums its weights in the same lanes at either, so
/// the kept row is the one computed whole). The same for every variant: counted once.
pub fn rows_unchanged(scores: &[f32], t: usize, old: &[f32], old_t: usize) -> usize {
    let same = |i: usize| {
        let (a, b) = (
            &scores[i * t..i * t + i + 1],
            &old[i * old_t..i * old_t + i + 1],
        );
        a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
    };
    let most = old_t.min(t).saturating_sub(3);
    (0..most).take_while(|&i| same(i)).count()
}

/// `variant_weights`, taking `earlier.rows` first rows (weights, entropy and largest weight)
/// from `earlier` when the causal mask is on: a keystroke at the end of a long text then
/// computes its last rows only, not T × T.
pub fn variant_weights_after(
    scores: &[f32],
    t: usize,
    d_k: usize,
    variant: Variant,
    tau: f32,
    causal_mask: bool,
    earlier: Option<Earlier>,
) -> VariantWeights {
    let opts = variant.options(tau, causal_mask);
    // (never more rows than `rows_unchanged` would take)
    let kept = earlier.filter(|e| causal_mask && e.rows <= e.t.min(t).saturating_sub(3));
    let s = kept.as_ref().map_or(0, |e| e.rows);
    let mut weights = vec![0.0; scores.len()];
    let (mut entropy, mut max) = (Vec::with_capacity(t), Vec::with_capacity(t));
    if let Some(e) = &kept {
        for i in 0..s {
            weights[i * t..i * t + i + 1]
                .copy_from_slice(&e.weights.weights[i * e.t..i * e.t + i + 1]);
        }
        entropy.extend_from_slice(&e.weights.entropy[..s]);
        max.extend_from_slice(&e.weights.max[..s]);
    }
    let rows = s * t..scores.len();
    let mut scaled = vec![0.0; rows.len()];
    cpu::scale_scores(&scores[rows.clone()], opts.scale_factor(d_k), &mut scaled);
    if causal_mask {
        cpu::causal_mask(&mut scaled, t, s);
    }
    cpu::softmax_rows(&scaled, t, opts.temperature, &mut weights[rows.clone()]);
    for row in weights[rows].chunks(t.max(1)) {
        entropy.push(cpu::entropy(row));
        max.push(row.iter().copied().fold(0.0, f32::max));
    }
    VariantWeights {
        weights: Rc::new(weights),
        entropy,
        max,
    }
}

/// A number as the views print it: four decimals, "−∞" for a masked score, and scientific
/// notation where four decimals would hide it.
pub fn fmt_num(x: f32) -> String {
    if x == MASKED {
        "−∞".into()
    } else if !x.is_finite() {
        format!("{x}")
    } else if x != 0.0 && (x.abs() >= 1e5 || x.abs() < 5e-5) {
        format!("{x:.3e}").replace('-', "−")
    } else {
        format!("{x:.4}").replace('-', "−")
    }
}

/// "0.1000×V(나는) + 0.5000×V(커피를) + …": the weighted sum for one query row, keys in
/// order; with more than `limit` non-zero terms only the largest `limit` are written out.
pub fn formula(weights_row: &[f32], labels: &[String], limit: usize) -> String {
    let mut terms: Vec<usize> = (0..weights_row.len())
        .filter(|&j| weights_row[j] > 0.0)
        .collect();
    let elided = terms.len() > limit;
    if elided {
        terms.sort_by(|&a, &b| weights_row[b].total_cmp(&weights_row[a]).then(a.cmp(&b)));
        terms.truncate(limit);
        terms.sort_unstable();
    }
    let mut s = terms
        .iter()
        .map(|&j| {
            let label = labels.get(j).map(String::as_str).unwrap_or("?");
            format!("{:.4}×V({label})", weights_row[j])
        })
        .collect::<Vec<_>>()
        .join(" + ");
    if elided {
        s.push_str(" + …");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use attnlab_model::testing::random_model;
    use attnlab_model::{forward, Config, LnPlacement};

    /// A small random model's trace (`ln` placement) over a fixed input.
    pub(super) fn trace_with(ln: LnPlacement, opts: &AttentionOptions) -> attnlab_model::Trace {
        let config = Config {
            n_embd: 32,
            n_head: 4,
            n_layer: 2,
            n_positions: 16,
            vocab_size: 50,
            ln_placement: ln,
            scale_embedding: false,
            ..Config::bundled(50)
        };
        let model = random_model(&config, 7, 0.5);
        forward(&model, &[3, 1, 4, 1, 5, 9, 2, 6], opts).unwrap()
    }

    fn trace_for(opts: &AttentionOptions) -> attnlab_model::Trace {
        trace_with(LnPlacement::Post, opts)
    }

    #[test]
    fn each_variant_matches_the_model_run_that_way() {
        for (variant, tau) in [
            (Variant::Unscaled, 1.0),
            (Variant::Scaled, 1.0),
            (Variant::Temperature, 0.3),
            (Variant::Temperature, 4.0),
        ] {
            let trace = trace_for(&variant.options(tau, true));
            for l in 0..2 {
                for h in 0..4 {
                    let hv = trace.head(l, h);
                    let got = variant_weights(hv.scores, hv.t, hv.d_k, variant, tau, true);
                    assert_eq!(
                        got.weights.as_slice(),
                        hv.weights,
                        "{variant:?} τ={tau} head {l}.{h}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_lesson_scores_show_why_scaling_matters() {
        // one query row against four keys: [2, 4, 20, 3] at d_k = 64, mask off
        let mut scores = vec![0.0; 16];
        scores[..4].copy_from_slice(&[2.0, 4.0, 20.0, 3.0]);
        let un = variant_weights(&scores, 4, 64, Variant::Unscaled, 1.0, false);
        let sc = variant_weights(&scores, 4, 64, Variant::Scaled, 1.0, false);
        assert!(un.max[0] > 0.9999, "{}", un.max[0]);
        assert!(sc.max[0] < 0.8 && sc.entropy[0] > un.entropy[0] + 0.5);
        let hot = variant_weights(&scores, 4, 64, Variant::Temperature, 10.0, false);
        let cold = variant_weights(&scores, 4, 64, Variant::Temperature, 0.1, false);
        assert!(hot.entropy[0] > sc.entropy[0] && sc.entropy[0] > cold.entropy[0]);
    }

    #[test]
    fn rows_sum_to_one_and_masked_cells_are_zero() {
        let trace = trace_for(&AttentionOptions::default());
        let hv = trace.head(1, 2);
        let w = variant_weights(hv.scores, hv.t, hv.d_k, Variant::Temperature, 0.5, true);
        for i in 0..hv.t {
            let row = &w.weights[i * hv.t..(i + 1) * hv.t];
            assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-6);
            assert!(row[i + 1..].iter().all(|&x| x == 0.0));
        }
        assert_eq!(w.entropy[0], 0.0, "the first row attends only to itself");
    }

    /// Rows taken from an earlier result equal the rows computed whole, bit for bit, after
    /// text typed at the end (1, 5 and 9 rows), an edit in the middle, rows deleted (a
    /// shorter text), and a text that shares nothing; only the rows before the first changed
    /// one, with three masked keys after them at both lengths, are taken (seen through a mark
    /// put in the earlier weights); with the mask off nothing is taken.
    #[test]
    fn rows_taken_from_an_earlier_result_equal_rows_computed_whole() {
        const MARK: f32 = 42.0;
        let mut seed = 7u32;
        let mut next = move || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1 << 24) as f32 * 8.0 - 4.0
        };
        // scores of `t` rows: the rows before `same` as `old`'s (over `old_t`), the rest new
        let mut scores_like = |old: &[f32], old_t: usize, t: usize, same: usize| -> Vec<f32> {
            let mut s: Vec<f32> = (0..t * t).map(|_| next()).collect();
            for i in 0..same.min(old_t).min(t) {
                for j in 0..old_t.min(t) {
                    s[i * t + j] = old[i * old_t + j];
                }
            }
            s
        };
        let base_t = 40;
        let base = scores_like(&[], 0, base_t, 0);
        // (new length, rows shared with the one before, rows expected taken)
        let steps = [
            (41, 40, 37),
            (46, 41, 38),
            (55, 46, 43),
            (55, 20, 20),
            (30, 55, 27),
            (12, 0, 0),
        ];
        for variant in Variant::ALL {
            let (mut old, mut old_t) = (base.clone(), base_t);
            let mut before = variant_weights(&old, old_t, 64, variant, 0.7, true);
            for (n, &(t, same, taken)) in steps.iter().enumerate() {
                let what = format!("{variant:?}, step {n} ({old_t} → {t})");
                let scores = scores_like(&old, old_t, t, same);
                let whole = variant_weights(&scores, t, 64, variant, 0.7, true);
                let unchanged = rows_unchanged(&scores, t, &old, old_t);
                let earlier = |w| Earlier {
                    weights: w,
                    t: old_t,
                    rows: unchanged,
                };
                let grown = variant_weights_after(
                    &scores,
                    t,
                    64,
                    variant,
                    0.7,
                    true,
                    Some(earlier(&before)),
                );
                assert!(grown == whole, "{what}: taken rows ≠ rows computed whole");
                // which rows were taken: the mark is in each earlier row's first weight
                let mut marked = before.clone();
                for i in 0..old_t {
                    Rc::make_mut(&mut marked.weights)[i * old_t] = MARK;
                }
                let got = variant_weights_after(
                    &scores,
                    t,
                    64,
                    variant,
                    0.7,
                    true,
                    Some(earlier(&marked)),
                );
                let rows = (0..t).filter(|&i| got.weights[i * t] == MARK).count();
                assert_eq!(rows, taken, "{what}: rows taken");
                assert!(
                    (0..taken).all(|i| got.weights[i * t] == MARK),
                    "{what}: the first rows"
                );
                let open = variant_weights_after(
                    &scores,
                    t,
                    64,
                    variant,
                    0.7,
                    false,
                    Some(earlier(&marked)),
                );
                assert!(
                    open.weights.iter().all(|&w| w != MARK),
                    "{what}: mask off, nothing taken"
                );
                (old, old_t, before) = (scores, t, whole);
            }
        }
    }

    #[test]
    fn numbers_print_readably() {
        assert_eq!(fmt_num(0.24581), "0.2458");
        assert_eq!(fmt_num(-1.5), "−1.5000");
        assert_eq!(fmt_num(MASKED), "−∞");
        assert_eq!(fmt_num(0.0), "0.0000");
        assert_eq!(fmt_num(1e-7), "1.000e−7");
        assert_eq!(fmt_num(2.5e30), "2.500e30");
    }

    #[test]
    fn the_formula_lists_the_weighted_values() {
        let labels: Vec<String> = ["나는", "커피를", "마셨다"].map(String::from).to_vec();
        assert_eq!(
            formula(&[0.1, 0.5, 0.4], &labels, 8),
            "0.1000×V(나는) + 0.5000×V(커피를) + 0.4000×V(마셨다)"
        );
        assert_eq!(formula(&[1.0, 0.0, 0.0], &labels, 8), "1.0000×V(나는)");
        assert_eq!(
            formula(&[0.1, 0.5, 0.4], &labels, 2),
            "0.5000×V(커피를) + 0.4000×V(마셨다) + …"
        );
    }
}

/// One cell (i, j) of a head taken apart: how q_i · k_j is built and becomes a weight.
#[derive(Clone, Debug, PartialEq)]
pub struct DrillDown {
    /// (dimension, q_i[d], k_j[d], q_i[d]·k_j[d]), largest |product| first.
    pub products: Vec<(usize, f32, f32, f32)>,
    /// Σ_d q_i[d]·k_j[d] = QKᵀ[i, j]
    pub sum: f32,
    /// ÷√d_k (or ÷1 with scaling off)
    pub scaled: f32,
    /// ÷τ
    pub over_tau: f32,
    /// Hidden by the causal mask (weight 0).
    pub masked: bool,
    /// exp((x − row max)/τ) of this cell, and the sum of those over the row.
    pub exp: f64,
    pub row_sum: f64,
    /// exp / row sum
    pub weight: f32,
    /// weight × v_j (Dk)
    pub weighted_v: Vec<f32>,
}

/// Takes cell (i, j) of a head apart with the options the trace was computed with.
pub fn drill_down(
    hv: &attnlab_model::HeadView<'_>,
    opts: &AttentionOptions,
    i: usize,
    j: usize,
) -> DrillDown {
    let (t, dk) = (hv.t, hv.d_k);
    let q = &hv.q[i * dk..(i + 1) * dk];
    let k = &hv.k[j * dk..(j + 1) * dk];
    let mut products: Vec<(usize, f32, f32, f32)> =
        (0..dk).map(|d| (d, q[d], k[d], q[d] * k[d])).collect();
    let sum = products.iter().map(|p| p.3).sum::<f32>();
    products.sort_by(|a, b| b.3.abs().total_cmp(&a.3.abs()).then(a.0.cmp(&b.0)));
    let scaled = sum * opts.scale_factor(dk);
    let tau = opts.temperature;
    let row = &hv.masked[i * t..(i + 1) * t];
    let masked = row[j] == MASKED;
    let max = row
        .iter()
        .copied()
        .filter(|&x| x != MASKED)
        .fold(f32::MIN, f32::max);
    let e = |x: f32| {
        if x == MASKED {
            0.0
        } else {
            (((x - max) / tau) as f64).exp()
        }
    };
    let row_sum: f64 = row.iter().map(|&x| e(x)).sum();
    let exp = e(row[j]);
    let weight = hv.weights[i * t + j];
    let weighted_v = hv.v[j * dk..(j + 1) * dk]
        .iter()
        .map(|v| v * weight)
        .collect();
    DrillDown {
        products,
        sum,
        scaled,
        over_tau: scaled / tau,
        masked,
        exp,
        row_sum,
        weight,
        weighted_v,
    }
}

#[cfg(test)]
mod drill_tests {
    use super::tests::trace_with;
    use super::*;
    use attnlab_model::LnPlacement;

    #[test]
    fn a_cell_taken_apart_adds_up_to_the_trace() {
        for opts in [
            AttentionOptions::default(),
            AttentionOptions {
                temperature: 0.4,
                scale: false,
                ..Default::default()
            },
        ] {
            let tr = trace_with(LnPlacement::Pre, &opts);
            let hv = tr.head(1, 2);
            for (i, j) in [(0, 0), (4, 2), (6, 6), (2, 5)] {
                let dd = drill_down(&hv, &opts, i, j);
                let e = i * hv.t + j;
                assert!((dd.sum - hv.scores[e]).abs() <= 1e-5 + 1e-5 * hv.scores[e].abs());
                assert!((dd.scaled - hv.scaled[e]).abs() <= 1e-5 + 1e-5 * hv.scaled[e].abs());
                assert_eq!(dd.masked, j > i);
                let w = if dd.masked { 0.0 } else { dd.exp / dd.row_sum };
                assert!(
                    (w - hv.weights[e] as f64).abs() < 1e-6,
                    "({i},{j}) {w} vs {}",
                    hv.weights[e]
                );
                assert_eq!(dd.weight, hv.weights[e]);
                assert!(dd.products.windows(2).all(|p| p[0].3.abs() >= p[1].3.abs()));
                assert_eq!(dd.products.len(), hv.d_k);
            }
        }
    }
}
