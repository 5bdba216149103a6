//! Choosing the next token to generate: greedy (argmax), or sampled with an **output
//! temperature** (applied to the final logits — not the attention temperature τ of
//! [`crate::AttentionOptions`]) and top-k / top-p, from a seed, so a run is reproducible on
//! any engine and platform.
//!
//! The draw of step `n` is `u ∈ [0, 1)` from ChaCha8 seeded with `seed` and `n`; the
//! candidates are ranked by probability (ties by id), cut to the top k, then to the smallest
//! prefix whose mass reaches p, renormalised, and `u` picks by the cumulative sum (in f64).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::trace::AttentionOptions;
use crate::weights::Model;
use crate::{forward_incremental, Trace};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sampling {
    /// Always the most likely token (the rest is ignored).
    pub greedy: bool,
    /// Output temperature T > 0: probabilities ∝ exp(logit / T).
    pub temperature: f32,
    /// Keep only the k most likely tokens (≥ 1).
    pub top_k: Option<usize>,
    /// Keep the smallest set of most likely tokens whose probability reaches p ∈ (0, 1].
    pub top_p: Option<f32>,
    pub seed: u64,
}

impl Default for Sampling {
    fn default() -> Self {
        Sampling {
            greedy: false,
            temperature: 1.0,
            top_k: None,
            top_p: None,
            seed: 0,
        }
    }
}

impl Sampling {
    pub fn validate(&self) -> Result<()> {
        if self.greedy {
            return Ok(());
        }
        let t = self.temperature;
        if !(t.is_finite() && t > 0.0) {
            return Err(Error::Options(format!(
                "the output temperature must be a positive finite number, got {t}"
            )));
        }
        if self.top_k == Some(0) {
            return Err(Error::Options("top-k must be at least 1".into()));
        }
        if let Some(p) = self.top_p {
            if !(p.is_finite() && p > 0.0 && p <= 1.0) {
                return Err(Error::Options(format!("top-p must be in (0, 1], got {p}")));
            }
        }
        Ok(())
    }

    /// The token to append after a position with these `logits`, at generation step `step`.
    pub fn choose(&self, logits: &[f32], step: usize) -> u32 {
        let argmax = || {
            logits
                .iter()
                .enumerate()
                .max_by(|a, b| a.1.total_cmp(b.1).then(b.0.cmp(&a.0)))
                .map_or(0, |(i, _)| i as u32)
        };
        if self.greedy || self.top_k == Some(1) {
            return argmax();
        }
        let t = self.temperature as f64;
        let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max) as f64;
        let mut ranked: Vec<(u32, f64)> = logits
            .iter()
            .enumerate()
            .map(|(i, &z)| (i as u32, ((z as f64 - max) / t).exp()))
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        if let Some(k) = self.top_k {
            ranked.truncate(k.max(1));
        }
        let total: f64 = ranked.iter().map(|x| x.1).sum();
        if !(total.is_finite() && total > 0.0) {
            return argmax();
        }
        if let Some(p) = self.top_p {
            let mut mass = 0.0;
            let keep = ranked
                .iter()
                .position(|x| {
                    mass += x.1 / total;
                    mass >= p as f64
                })
                .map_or(ranked.len(), |i| i + 1);
            ranked.truncate(keep);
        }
        let total: f64 = ranked.iter().map(|x| x.1).sum();
        let mut rng = ChaCha8Rng::seed_from_u64(
            self.seed ^ (step as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        );
        let u: f64 = rng.random::<f64>() * total;
        let mut acc = 0.0;
        for &(id, w) in &ranked {
            acc += w;
            if u < acc {
                return id;
            }
        }
        ranked.last().map_or_else(argmax, |x| x.0)
    }
}

/// What a generation did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Generated {
    /// The tokens appended, in order.
    pub ids: Vec<u32>,
    /// True when it stopped early because the text filled the context.
    pub hit_context: bool,
}

/// Appends up to `steps` tokens to `ids`, one forward per step (incremental: only the new
/// token's rows are computed), stopping when the text fills the model's context.
/// `on_step(token)` is called as each lands.
pub fn generate(
    model: &Model,
    ids: &[u32],
    steps: usize,
    sampling: &Sampling,
    opts: &AttentionOptions,
    on_step: impl FnMut(u32),
) -> Result<Generated> {
    generate_by(
        model.config.n_positions,
        |prev, all| Ok(forward_incremental(model, prev, all, opts)?.0),
        ids,
        steps,
        sampling,
        on_step,
    )
}

/// `generate` through any traced forward: `run(prev, ids)` traces `ids`, reusing the rows of
/// the previous step's trace `prev` where it can; `context` is the most tokens it reads.
pub fn generate_by(
    context: usize,
    mut run: impl FnMut(Option<&Trace>, &[u32]) -> Result<Trace>,
    ids: &[u32],
    steps: usize,
    sampling: &Sampling,
    mut on_step: impl FnMut(u32),
) -> Result<Generated> {
    sampling.validate()?;
    if ids.is_empty() {
        return Err(Error::Options(
            "generation needs at least one token to start from".into(),
        ));
    }
    let mut all = ids.to_vec();
    let mut out = Vec::new();
    let mut prev: Option<Trace> = None;
    for step in 0..steps {
        if all.len() >= context {
            return Ok(Generated {
                ids: out,
                hit_context: true,
            });
        }
        let tr = run(prev.as_ref(), &all)?;
        let v = tr.dims.vocab;
        let last = tr.dims.t - 1;
        let id = sampling.choose(&tr.logits[last * v..(last + 1) * v], step);
        on_step(id);
        all.push(id);
        out.push(id);
        prev = Some(tr);
    }
    Ok(Generated {
        ids: out,
        hit_context: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{random_model, tiny_config};
    use crate::{forward, LnPlacement};

    const LOGITS: [f32; 6] = [0.5, 2.0, -1.0, 1.9, 0.0, 2.0];

    #[test]
    fn greedy_takes_the_argmax_and_ties_go_to_the_lower_id() {
        let g = Sampling {
            greedy: true,
            ..Default::default()
        };
        assert_eq!(g.choose(&LOGITS, 0), 1);
        let k1 = Sampling {
            top_k: Some(1),
            seed: 9,
            ..Default::default()
        };
        assert_eq!(k1.choose(&LOGITS, 3), 1, "top-k = 1 is greedy");
        let cold = Sampling {
            temperature: 1e-4,
            seed: 5,
            ..Default::default()
        };
        let near = [0.5, 2.0, -1.0, 1.9, 0.0, 1.0];
        for step in 0..50 {
            assert_eq!(cold.choose(&near, step), 1, "T → 0 is greedy");
        }
    }

    #[test]
    fn a_seed_gives_the_same_draws_and_top_k_p_limit_them() {
        let s = Sampling {
            seed: 42,
            ..Default::default()
        };
        let a: Vec<u32> = (0..40).map(|i| s.choose(&LOGITS, i)).collect();
        let b: Vec<u32> = (0..40).map(|i| s.choose(&LOGITS, i)).collect();
        assert_eq!(a, b);
        let other: Vec<u32> = (0..40)
            .map(|i| {
                Sampling {
                    seed: 43,
                    ..s.clone()
                }
                .choose(&LOGITS, i)
            })
            .collect();
        assert_ne!(a, other);
        let k2 = Sampling {
            top_k: Some(2),
            ..s.clone()
        };
        assert!((0..200).all(|i| [1, 5].contains(&k2.choose(&LOGITS, i))));
        // p small: only the most likely token is left
        let p = Sampling {
            top_p: Some(0.01),
            ..s.clone()
        };
        assert!((0..200).all(|i| p.choose(&LOGITS, i) == 1));
        // without limits every token shows up over many draws
        let mut seen = [false; 6];
        (0..2000).for_each(|i| seen[s.choose(&LOGITS, i) as usize] = true);
        assert!(seen.iter().all(|&x| x), "{seen:?}");
    }

    /// How often each token is drawn over steps `0..n` of one seeded sampler.
    fn frequencies(s: &Sampling, logits: &[f32], n: usize) -> Vec<usize> {
        let mut counts = vec![0; logits.len()];
        for step in 0..n {
            counts[s.choose(logits, step) as usize] += 1;
        }
        counts
    }

    /// softmax(logits / t) in f64, written out here rather than taken from the sampler.
    fn softmax(logits: &[f64], t: f64) -> Vec<f64> {
        let e: Vec<f64> = logits.iter().map(|z| (z / t).exp()).collect();
        let sum: f64 = e.iter().sum();
        e.iter().map(|x| x / sum).collect()
    }

    /// Pearson's χ² of `counts` against the probabilities `p` (tokens with p = 0 must never
    /// be drawn), and whether it stays below the 0.999 quantile for its degrees of freedom,
    /// i.e. p-value > 0.001. Quantiles of χ² with 1…6 degrees of freedom at 0.999.
    fn chi_square_fits(counts: &[usize], p: &[f64]) -> (f64, bool) {
        const Q999: [f64; 7] = [f64::NAN, 10.828, 13.816, 16.266, 18.467, 20.515, 22.458];
        let n: usize = counts.iter().sum();
        let mut stat = 0.0;
        let mut cells = 0;
        for (&c, &pi) in counts.iter().zip(p) {
            if pi == 0.0 {
                assert_eq!(
                    c, 0,
                    "a token of probability 0 was drawn: {counts:?} vs {p:?}"
                );
                continue;
            }
            let e = pi * n as f64;
            assert!(e >= 5.0, "expected count {e} too small for χ²");
            stat += (c as f64 - e).powi(2) / e;
            cells += 1;
        }
        (stat, stat < Q999[cells - 1])
    }

    const DRAWS: usize = 40_000;

    #[test]
    fn draws_follow_softmax_of_the_logits_over_the_temperature() {
        let logits = [1.0f32, 0.0, -0.5, 2.0, 0.5, -1.0];
        let wide: Vec<f64> = logits.iter().map(|&z| z as f64).collect();
        for (t, seed) in [(0.5, 11), (1.0, 12), (2.0, 13)] {
            let s = Sampling {
                temperature: t,
                seed,
                ..Default::default()
            };
            let counts = frequencies(&s, &logits, DRAWS);
            let (stat, fits) = chi_square_fits(&counts, &softmax(&wide, t as f64));
            assert!(fits, "T = {t}: χ² = {stat:.2}, counts {counts:?}");
            // …and not the distribution of another temperature (the check can tell them apart)
            let other = if t == 1.0 { 2.0 } else { 1.0 };
            let (stat, fits) = chi_square_fits(&counts, &softmax(&wide, other));
            assert!(!fits, "T = {t} also fits T = {other}: χ² = {stat:.2}");
        }
    }

    #[test]
    fn top_k_renormalises_over_exactly_k_tokens() {
        // ids out of rank order, so the cut must follow the probabilities, not the ids
        let logits = [0.3f32, 1.5, -0.2, 1.1, 0.8, -1.0];
        for (k, t) in [(3, 1.0), (4, 2.0)] {
            let s = Sampling {
                top_k: Some(k),
                temperature: t,
                seed: 21,
                ..Default::default()
            };
            let counts = frequencies(&s, &logits, DRAWS);
            let mut ranked: Vec<usize> = (0..logits.len()).collect();
            ranked.sort_by(|&a, &b| logits[b].total_cmp(&logits[a]));
            let kept = &ranked[..k];
            // the tokens cut off as −∞: probability 0, the rest renormalised among themselves
            let cut: Vec<f64> = (0..logits.len())
                .map(|i| {
                    if kept.contains(&i) {
                        logits[i] as f64
                    } else {
                        f64::NEG_INFINITY
                    }
                })
                .collect();
            let p = softmax(&cut, t as f64);
            assert_eq!(p.iter().filter(|&&x| x > 0.0).count(), k);
            let drawn = counts.iter().filter(|&&c| c > 0).count();
            assert_eq!(drawn, k, "k = {k}: {counts:?}");
            let (stat, fits) = chi_square_fits(&counts, &p);
            assert!(
                fits,
                "k = {k}, T = {t}: χ² = {stat:.2}, {counts:?} vs {p:?}"
            );
        }
    }

    #[test]
    fn top_p_keeps_the_smallest_prefix_that_reaches_p() {
        // probabilities 0.2, 0.4, 0.1, 0.3 (ranked: ids 1, 3, 0, 2; cumulative 0.4, 0.7, 0.9, 1)
        let probs = [0.2f64, 0.4, 0.1, 0.3];
        let logits: Vec<f32> = probs.iter().map(|p| p.ln() as f32).collect();
        // (p, the ids kept): the cut falls inside the list, after it, or at its first token
        for (top_p, kept) in [
            (0.75, &[1usize, 3, 0][..]),
            (0.65, &[1, 3]),
            (0.95, &[1, 3, 0, 2]),
            (0.3, &[1]),
        ] {
            let s = Sampling {
                top_p: Some(top_p),
                seed: 31,
                ..Default::default()
            };
            let counts = frequencies(&s, &logits, DRAWS);
            let mass: f64 = kept.iter().map(|&i| probs[i]).sum();
            let p: Vec<f64> = (0..probs.len())
                .map(|i| {
                    if kept.contains(&i) {
                        probs[i] / mass
                    } else {
                        0.0
                    }
                })
                .collect();
            if kept.len() == 1 {
                assert_eq!(counts[kept[0]], DRAWS, "p = {top_p}: {counts:?}");
                continue;
            }
            let (stat, fits) = chi_square_fits(&counts, &p);
            assert!(fits, "p = {top_p}: χ² = {stat:.2}, {counts:?} vs {p:?}");
        }
        // with top-k first, p is a share of what top-k kept: k = 2 leaves 0.4 / 0.7 = 0.571
        // and 0.3 / 0.7, so p = 0.5 keeps id 1 alone and p = 0.6 both
        for (top_p, n_kept) in [(0.5, 1), (0.6, 2)] {
            let s = Sampling {
                top_k: Some(2),
                top_p: Some(top_p),
                seed: 32,
                ..Default::default()
            };
            let counts = frequencies(&s, &logits, 4_000);
            assert_eq!(
                counts.iter().filter(|&&c| c > 0).count(),
                n_kept,
                "{counts:?}"
            );
            assert_eq!(counts[0] + counts[2], 0, "{counts:?}");
        }
    }

    #[test]
    fn bad_settings_are_errors() {
        for t in [0.0, -1.0, f32::NAN, f32::INFINITY] {
            let s = Sampling {
                temperature: t,
                ..Default::default()
            };
            assert!(s
                .validate()
                .unwrap_err()
                .to_string()
                .contains("output temperature"));
        }
        assert!(Sampling {
            top_k: Some(0),
            ..Default::default()
        }
        .validate()
        .is_err());
        assert!(Sampling {
            top_p: Some(1.5),
            ..Default::default()
        }
        .validate()
        .is_err());
        assert!(Sampling {
            top_p: Some(0.0),
            ..Default::default()
        }
        .validate()
        .is_err());
    }

    #[test]
    fn greedy_generation_is_the_argmax_chain_and_stops_at_the_context() {
        let model = random_model(&tiny_config(LnPlacement::Pre), 6, 1.0);
        let g = Sampling {
            greedy: true,
            ..Default::default()
        };
        let opts = AttentionOptions::default();
        let mut landed = Vec::new();
        let out = generate(&model, &[1, 2], 3, &g, &opts, |id| landed.push(id)).unwrap();
        assert_eq!(out.ids, landed);
        assert!(!out.hit_context);
        // the same as predicting one token at a time from scratch
        let mut ids = vec![1, 2];
        for _ in 0..3 {
            let tr = forward(&model, &ids, &opts).unwrap();
            ids.push(tr.top_k(tr.dims.t - 1, 1)[0].0);
        }
        assert_eq!(&ids[2..], &out.ids[..]);
        // context 8: from 6 tokens only 2 more fit, and it says so
        let long = generate(&model, &[1; 6], 5, &g, &opts, |_| {}).unwrap();
        assert_eq!((long.ids.len(), long.hit_context), (2, true));
        assert!(generate(&model, &[], 1, &g, &opts, |_| {}).is_err());
    }
}
