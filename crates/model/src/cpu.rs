//! The CPU reference kernels. Each function is the twin of a WGSL kernel in `shaders/`
//! of the same name, and computes the same numbers.
//!
//! All tensors are flat row-major `f32` slices; shapes are given in the doc comments.

use crate::config::Activation;

/// The value a masked score takes. WGSL has no `-inf` literal, so the GPU uses the most
/// negative finite f32 and so do we; the weight of a masked entry is set to exactly 0.
pub const MASKED: f32 = f32::MIN;

/// `out = x · w + b`: x (M, K), w (K, N), b (N) → out (M, N).
pub fn linear(x: &[f32], w: &[f32], b: &[f32], m: usize, k: usize, n: usize, out: &mut [f32]) {
    debug_assert_eq!(
        (x.len(), w.len(), b.len(), out.len()),
        (m * k, k * n, n, m * n)
    );
    for row in out.chunks_exact_mut(n) {
        row.copy_from_slice(b);
    }
    matmul_into(x, w, m, k, n, false, out, 1.0);
}

/// `out = beta·out + a · b` (or `a · bᵀ` when `b_transposed`, with b stored as (N, K)):
/// a (M, K), b (K, N) → out (M, N).
#[allow(clippy::too_many_arguments)]
pub fn matmul_into(
    a: &[f32],
    b: &[f32],
    m: usize,
    k: usize,
    n: usize,
    b_transposed: bool,
    out: &mut [f32],
    beta: f32,
) {
    if m == 0 || n == 0 {
        return;
    }
    // in wasm (one thread there), kernels that do not pack both operands on every call (see
    // `gemm`)
    if cfg!(target_arch = "wasm32") {
        return if b_transposed {
            crate::gemm::nt(a, b, m, k, n, out, beta)
        } else {
            crate::gemm::nn(a, b, m, k, n, out, beta)
        };
    }
    matmul_packed(a, b, m, k, n, b_transposed, out, beta);
}

/// `matmul_into` through matrixmultiply's sgemm, which packs both operands on every call (and
/// splits large products over the cores natively): what `matmul_into` runs natively.
#[allow(clippy::too_many_arguments)]
pub fn matmul_packed(
    a: &[f32],
    b: &[f32],
    m: usize,
    k: usize,
    n: usize,
    b_transposed: bool,
    out: &mut [f32],
    beta: f32,
) {
    let (rsb, csb) = if b_transposed {
        (1, k as isize)
    } else {
        (n as isize, 1)
    };
    // SAFETY: the strides describe exactly the row-major buffers whose lengths we check.
    assert!(a.len() >= m * k && b.len() >= k * n && out.len() >= m * n);
    unsafe {
        matrixmultiply::sgemm(
            m,
            k,
            n,
            1.0,
            a.as_ptr(),
            k as isize,
            1,
            b.as_ptr(),
            rsb,
            csb,
            beta,
            out.as_mut_ptr(),
            n as isize,
            1,
        );
    }
}

/// Token + position embedding: out[t] = scale·wte[tokens[t]] + wpe[start + t]; out (T, D).
/// `scale` is `Config::embedding_scale` (1, or √d_model with `scale_embedding`).
pub fn embed(
    wte: &[f32],
    wpe: &[f32],
    tokens: &[u32],
    start: usize,
    d: usize,
    scale: f32,
    out: &mut [f32],
) {
    for (t, (row, &id)) in out.chunks_exact_mut(d).zip(tokens).enumerate() {
        let e = &wte[id as usize * d..][..d];
        let p = &wpe[(start + t) * d..][..d];
        for ((o, a), b) in row.iter_mut().zip(e).zip(p) {
            *o = a * scale + b;
        }
    }
}

/// Raw attention scores of one head: s[i, j] = q_i · k_j;
/// q (T_q, Dk), k (T_k, Dk) → s (T_q, T_k).
pub fn qk_scores(q: &[f32], k: &[f32], t_q: usize, t_k: usize, dk: usize, out: &mut [f32]) {
    matmul_into(q, k, t_q, dk, t_k, true, out, 0.0);
}

/// Scaling and temperature: out = scores · scale, where scale is 1/√d_k (or 1 when scaling
/// is off). Temperature is applied inside `softmax_rows`, so that a tiny τ cannot overflow
/// the stored scores.
pub fn scale_scores(scores: &[f32], scale: f32, out: &mut [f32]) {
    for (o, s) in out.iter_mut().zip(scores) {
        *o = s * scale;
    }
}

/// Causal mask on square (T_q, T_k) rows whose first query is at absolute position
/// `q_start`: keys after the query get `MASKED`.
pub fn causal_mask(scores: &mut [f32], t_k: usize, q_start: usize) {
    for (i, row) in scores.chunks_exact_mut(t_k).enumerate() {
        for s in &mut row[(q_start + i + 1).min(t_k)..] {
            *s = MASKED;
        }
    }
}

/// The three score matrices of queries q (T_q, Dk) against keys k (T_k, Dk) in one call, as
/// the fused `attn_scores` kernel writes them: raw = q·kᵀ, scaled = raw · scale, and masked =
/// scaled with the keys after each query set to `MASKED` when `mask_from` is
/// `Some(q_start)` (the queries' first position; `None`: the mask is off). Each out (T_q, T_k).
#[allow(clippy::too_many_arguments)]
pub fn attn_scores(
    q: &[f32],
    k: &[f32],
    (t_q, t_k, dk): (usize, usize, usize),
    scale: f32,
    mask_from: Option<usize>,
    raw: &mut [f32],
    scaled: &mut [f32],
    masked: &mut [f32],
) {
    qk_scores(q, k, t_q, t_k, dk, raw);
    scale_scores(raw, scale, scaled);
    masked.copy_from_slice(scaled);
    if let Some(q_start) = mask_from {
        causal_mask(masked, t_k, q_start);
    }
}

/// e^x without a library call, so that the loops calling it vectorise (WebAssembly has no
/// exp instruction, and libm's is one scalar call per element): e^x = 2^n · e^r with
/// n = round(x·log₂e) and r = x − n·ln 2 (ln 2 in two parts, Cody–Waite), e^r by Cephes'
/// `expf` polynomial on |r| ≤ ½ln 2; within 2 ulp of the exact value. Exact at 0 (1), 0 far
/// below (x < −104, denormals rounded as f32 does), ∞ above 88.73, NaN for NaN. 2^n is
/// applied as two factors so that neither leaves f32's normal range.
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    let xc = x.clamp(-110.0, 89.0);
    let n = (xc * std::f32::consts::LOG2_E + 0.5).floor();
    let r = xc - n * 0.693_359_4 - n * -2.121_944_4e-4;
    let p = (((((1.987_569_1e-4 * r + 1.398_199_9e-3) * r + 8.333_452e-3) * r + 4.166_579_6e-2)
        * r
        + 0.166_666_65)
        * r
        + 0.5)
        * (r * r)
        + r
        + 1.0;
    let n = n as i32;
    let (n1, n2) = (n >> 1, n - (n >> 1));
    let pow2 = |e: i32| f32::from_bits(((e + 127) as u32) << 23);
    let y = p * pow2(n1) * pow2(n2);
    if x.is_nan() {
        x
    } else {
        y
    }
}

/// Numerically stable softmax of each row of `x` (rows of length `n`) at temperature τ:
/// w_j = exp((x_j − max)/τ) / Σ exp(…). Entries equal to `MASKED` get weight exactly 0.
/// τ must be positive; as τ → 0 this becomes an argmax with ties shared.
pub fn softmax_rows(x: &[f32], n: usize, tau: f32, out: &mut [f32]) {
    for (row, o) in x.chunks_exact(n).zip(out.chunks_exact_mut(n)) {
        // pass 1: row max (numerical stability). MASKED is f32::MIN, below every other
        // score, so the max of the whole row is that of its unmasked entries — or MASKED when
        // every entry is masked. Eight lanes at a time (a compare and select, which
        // vectorises; NaN is passed over as f32::max does).
        let wider = |m: f32, v: f32| if v > m { v } else { m };
        let mut lanes = [MASKED; 8];
        let chunks = row.chunks_exact(8);
        let rest = chunks.remainder();
        for c in chunks {
            for (m, &v) in lanes.iter_mut().zip(c) {
                *m = wider(*m, v);
            }
        }
        let max = lanes
            .into_iter()
            .chain(rest.iter().copied())
            .fold(MASKED, wider);
        if max == MASKED {
            // a fully masked row has nothing to attend to
            o.fill(0.0);
            continue;
        }
        // pass 2: exponentials (a loop of its own, so that it vectorises), then their sum in
        // f64 (so that long rows still sum to 1), four lanes at a time
        for (w, &v) in o.iter_mut().zip(row) {
            let e = exp((v - max) / tau);
            *w = if v == MASKED { 0.0 } else { e };
        }
        let mut sums = [0.0f64; 4];
        let chunks = o.chunks_exact(4);
        let rest: f64 = chunks.remainder().iter().map(|&w| w as f64).sum();
        for c in chunks {
            for (s, &w) in sums.iter_mut().zip(c) {
                *s += w as f64;
            }
        }
        let sum = (sums[0] + sums[2]) + (sums[1] + sums[3]) + rest;
        // pass 3: normalise (sum ≥ 1 because the max entry contributes exp(0))
        let inv = (1.0 / sum) as f32;
        for w in o.iter_mut() {
            *w *= inv;
        }
    }
}

/// One head's output: out[i] = Σ_j w[i, j] · v_j; w (T_q, T_k), v (T_k, Dk) → out (T_q, Dk).
pub fn attn_v(w: &[f32], v: &[f32], t_q: usize, t_k: usize, dk: usize, out: &mut [f32]) {
    matmul_into(w, v, t_q, t_k, dk, false, out, 0.0);
}

/// One head's output without its maps: out[i] = Σ_j softmax_j(mask(q_i · k_j · scale) / τ) ·
/// v_j, the weights never stored — an online softmax (Milakov & Gimelshein 2018, as
/// FlashAttention runs it) walks the keys once per query, keeping the running maximum m, the
/// running sum of exp((x − m) / τ) and the running weighted sum of values, rescaled whenever
/// m grows. `mask_from`: `Some(q_start)` hides the keys after each query (at position
/// q_start + i), as `attn_scores`; `None` shows every key. q (T_q, Dk), k and v (T_k, Dk) →
/// out (T_q, Dk). The twin of the `attn_fused` kernel (the same steps; the kernel sums a dot
/// product four lanes apart); equal to `attn_scores` → `softmax_rows` → `attn_v` up to
/// rounding.
#[allow(clippy::too_many_arguments)]
pub fn attn_fused(
    q: &[f32],
    k: &[f32],
    v: &[f32],
    (t_q, t_k, dk): (usize, usize, usize),
    scale: f32,
    tau: f32,
    mask_from: Option<usize>,
    out: &mut [f32],
) {
    let mut acc = vec![0f32; dk];
    for i in 0..t_q {
        let qi = &q[i * dk..(i + 1) * dk];
        let keys = mask_from.map_or(t_k, |s| (s + i + 1).min(t_k));
        let (mut m, mut sum) = (0f32, 0f32);
        acc.fill(0.0);
        for j in 0..keys {
            let kj = &k[j * dk..(j + 1) * dk];
            let mut dot = 0f32;
            for (a, b) in qi.iter().zip(kj) {
                dot += a * b;
            }
            let x = dot * scale;
            if j == 0 {
                (m, sum) = (x, 1.0);
                acc.copy_from_slice(&v[..dk]);
                continue;
            }
            // a larger maximum rescales what was summed so far; e^((x − m)/τ) ≤ 1 always
            let grown = x.max(m);
            let old = exp((m - grown) / tau);
            let e = exp((x - grown) / tau);
            m = grown;
            sum = sum * old + e;
            for (a, &b) in acc.iter_mut().zip(&v[j * dk..(j + 1) * dk]) {
                *a = *a * old + e * b;
            }
        }
        let o = &mut out[i * dk..(i + 1) * dk];
        let inv = if sum > 0.0 { 1.0 / sum } else { 0.0 };
        for (o, a) in o.iter_mut().zip(&acc) {
            *o = a * inv;
        }
    }
}

/// The lesson's "Add & LayerNorm": sum = a + b (the residual connection), out =
/// LayerNorm(sum) with gain `g` and bias `beta`; rows of width `d`. The twin of the fused
/// `add_layernorm` kernel.
#[allow(clippy::too_many_arguments)]
pub fn add_layernorm(
    a: &[f32],
    b: &[f32],
    g: &[f32],
    beta: &[f32],
    d: usize,
    eps: f32,
    sum: &mut [f32],
    out: &mut [f32],
) {
    residual_add(a, b, sum);
    layernorm(sum, g, beta, d, eps, out);
}

/// LayerNorm over the last axis: (x − mean)/√(var + ε) · g + b; x (T, D) → out (T, D).
pub fn layernorm(x: &[f32], g: &[f32], b: &[f32], d: usize, eps: f32, out: &mut [f32]) {
    for (row, o) in x.chunks_exact(d).zip(out.chunks_exact_mut(d)) {
        // pass 1: mean; pass 2: variance (two passes, not E[x²] − E[x]², for accuracy)
        let mean = row.iter().sum::<f32>() / d as f32;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / d as f32;
        let inv = 1.0 / (var + eps).sqrt();
        // pass 3: normalise, then gain and bias
        for (((o, v), g), b) in o.iter_mut().zip(row).zip(g).zip(b) {
            *o = (v - mean) * inv * g + b;
        }
    }
}

/// GELU in place.
pub fn gelu(x: &mut [f32], act: Activation) {
    match act {
        Activation::GeluTanh => {
            // 0.5·u·(1 + tanh(z)) = u / (1 + e^(−2z)): the same function, and exp is much
            // cheaper than tanh
            const C2: f32 = 2.0 * 0.797_884_6; // 2·√(2/π)
            for v in x {
                let u = *v;
                *v = u / (1.0 + exp(-C2 * (u + 0.044_715 * u * u * u)));
            }
        }
        Activation::GeluErf => {
            for v in x {
                let u = *v;
                *v = 0.5 * u * (1.0 + erf(u * std::f32::consts::FRAC_1_SQRT_2));
            }
        }
    }
}

/// The error function (Abramowitz & Stegun 7.1.26, |error| ≤ 1.5e-7), the same formula the
/// `gelu` shader uses.
pub fn erf(x: f32) -> f32 {
    let s = x.signum();
    let a = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * a);
    let y = 1.0
        - (((((1.061_405_4 * t - 1.453_152_1) * t) + 1.421_413_8) * t - 0.284_496_74) * t
            + 0.254_829_6)
            * t
            * exp(-a * a);
    s * y
}

/// out = a + b, element-wise.
pub fn residual_add(a: &[f32], b: &[f32], out: &mut [f32]) {
    for ((o, x), y) in out.iter_mut().zip(a).zip(b) {
        *o = x + y;
    }
}

/// Shannon entropy (nats) of a probability row.
pub fn entropy(p: &[f32]) -> f32 {
    -p.iter()
        .filter(|&&v| v > 0.0)
        .map(|&v| v * v.ln())
        .sum::<f32>()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn softmax(x: &[f32], tau: f32) -> Vec<f32> {
        let mut out = vec![0.0; x.len()];
        softmax_rows(x, x.len(), tau, &mut out);
        out
    }

    /// The online softmax gives the three steps' output, up to rounding: one key, rows that
    /// start inside the text (an incremental forward), the mask off, large scores, a tiny and
    /// a large τ.
    #[test]
    fn the_fused_attention_equals_scores_softmax_and_values() {
        use crate::testing::rand_vec;
        for (t_q, t_k, dk, q0, mask, spread, tau) in [
            (1, 1, 4, 0, true, 1.0, 1.0),
            (9, 9, 8, 0, true, 1.0, 1.0),
            (3, 12, 16, 9, true, 2.0, 1.0),
            (12, 12, 16, 0, false, 2.0, 1.0),
            (7, 7, 64, 0, true, 30.0, 1.0),
            (6, 6, 8, 0, true, 1.0, 0.05),
            (6, 11, 8, 5, true, 1.0, 40.0),
        ] {
            let (q, k, v) = (
                rand_vec(t_q * dk, 1, spread),
                rand_vec(t_k * dk, 2, spread),
                rand_vec(t_k * dk, 3, 1.0),
            );
            let scale = 1.0 / (dk as f32).sqrt();
            let from = mask.then_some(q0);
            let want =
                crate::testing::attention_in_steps(&q, &k, &v, (t_q, t_k, dk), scale, tau, from);
            let mut got = vec![f32::NAN; t_q * dk];
            attn_fused(&q, &k, &v, (t_q, t_k, dk), scale, tau, from, &mut got);
            for (i, (a, b)) in got.iter().zip(&want).enumerate() {
                assert!(
                    (a - b).abs() <= 2e-6 + 2e-5 * b.abs(),
                    "({t_q}, {t_k}, {dk}) from {from:?} τ {tau}: [{i}] fused {a}, steps {b}"
                );
            }
        }
    }

    #[test]
    fn lesson_unscaled_scores_put_almost_everything_on_the_largest() {
        let w = softmax(&[2.0, 4.0, 20.0, 3.0], 1.0);
        assert!(w[2] > 0.9999, "{w:?}");
        assert!(w[0] + w[1] + w[3] < 1e-6, "{w:?}");
    }

    #[test]
    fn lesson_scaling_by_sqrt_64() {
        let mut out = [0.0; 4];
        scale_scores(&[2.0, 4.0, 20.0, 3.0], 1.0 / (64f32).sqrt(), &mut out);
        assert_eq!(out, [0.25, 0.5, 2.5, 0.375]);
    }

    #[test]
    fn lesson_softmax_true_values_to_four_decimals() {
        let w = softmax(&[1.2, 0.3, 2.1, -0.4], 1.0);
        let rounded: Vec<f32> = w.iter().map(|v| (v * 1e4).round() / 1e4).collect();
        assert_eq!(rounded, [0.2458, 0.0999, 0.6046, 0.0496]);
    }

    #[test]
    fn three_token_causal_mask_gives_exact_zeros_above_the_diagonal() {
        let mut s = vec![0.3, 1.0, -2.0, 0.5, 0.1, 4.0, 2.0, -1.0, 0.7];
        causal_mask(&mut s, 3, 0);
        let mut w = vec![0.0; 9];
        softmax_rows(&s, 3, 1.0, &mut w);
        for i in 0..3 {
            for j in 0..3 {
                if j > i {
                    assert_eq!(w[i * 3 + j], 0.0);
                } else {
                    assert!(w[i * 3 + j] > 0.0);
                }
            }
        }
        assert_eq!(w[0], 1.0);
    }

    #[test]
    fn softmax_is_exact_at_extremes() {
        assert_eq!(softmax(&[1234.0, 0.0], 1.0), [1.0, 0.0]);
        assert_eq!(softmax(&[1e30, -1e30], 100.0), [1.0, 0.0]);
        // τ → 0: argmax with ties shared
        assert_eq!(softmax(&[3.0, 1.0, 3.0], 1e-30), [0.5, 0.0, 0.5]);
        let w = softmax(&[1e30, 1e30, -1e30, 0.0], 0.01);
        assert_eq!(w, [0.5, 0.5, 0.0, 0.0]);
        // a fully masked row has no weight at all rather than NaN
        assert_eq!(softmax(&[MASKED, MASKED], 1.0), [0.0, 0.0]);
    }

    #[test]
    fn exp_is_within_two_ulp_and_exact_at_the_edges() {
        assert_eq!(exp(0.0), 1.0);
        assert_eq!(exp(-0.0), 1.0);
        assert_eq!(exp(-104.0), 0.0);
        assert_eq!(exp(-2e30), 0.0);
        assert_eq!(exp(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp(89.0), f32::INFINITY);
        assert_eq!(exp(f32::INFINITY), f32::INFINITY);
        assert!(exp(f32::NAN).is_nan());
        assert!(exp(88.7).is_finite());
        // every 1/1000 from −103 to 88.7, against f64's exp rounded to f32
        let mut x = -103.0f32;
        while x < 88.7 {
            let (got, want) = (exp(x), (x as f64).exp() as f32);
            let ulp = (want.to_bits() as i64 - got.to_bits() as i64).abs();
            // denormals (x < −87.3) keep their absolute error below f32's smallest normal
            assert!(
                ulp <= 2 || (want < f32::MIN_POSITIVE && (got - want).abs() < 1e-44),
                "exp({x}) = {got}, want {want} ({ulp} ulp)"
            );
            x += 0.001;
        }
    }

    #[test]
    fn layernorm_normalises() {
        let mut out = [0.0; 4];
        layernorm(
            &[1.0, 2.0, 3.0, 4.0],
            &[1.0; 4],
            &[0.0; 4],
            4,
            0.0,
            &mut out,
        );
        let mean: f32 = out.iter().sum::<f32>() / 4.0;
        let var: f32 = out.iter().map(|v| v * v).sum::<f32>() / 4.0;
        assert!(mean.abs() < 1e-6 && (var - 1.0).abs() < 1e-5, "{out:?}");
    }

    #[test]
    fn erf_and_gelu_match_known_values() {
        for (x, e) in [
            (0.0, 0.0),
            (0.5, 0.520_499_9),
            (1.0, 0.842_700_8),
            (-2.0, -0.995_322_3),
        ] {
            assert!((erf(x) - e).abs() < 2e-7, "erf({x}) = {}", erf(x));
        }
        let mut v = [1.0f32, -1.0];
        gelu(&mut v, Activation::GeluErf);
        assert!((v[0] - 0.841_344_7).abs() < 1e-6 && (v[1] + 0.158_655_3).abs() < 1e-6);
        let mut v = [1.0f32];
        gelu(&mut v, Activation::GeluTanh);
        assert!((v[0] - 0.841_192).abs() < 1e-5, "{v:?}");
    }

    #[test]
    fn matmul_transposed_matches_naive() {
        let a: Vec<f32> = (0..6).map(|i| i as f32).collect(); // (2, 3)
        let b: Vec<f32> = (0..12).map(|i| (i as f32) * 0.5 - 2.0).collect(); // (4, 3) as bᵀ
        let mut out = vec![0.0; 8];
        matmul_into(&a, &b, 2, 3, 4, true, &mut out, 0.0);
        for i in 0..2 {
            for j in 0..4 {
                let e: f32 = (0..3).map(|k| a[i * 3 + k] * b[j * 3 + k]).sum();
                assert_eq!(out[i * 4 + j], e);
            }
        }
    }
}
