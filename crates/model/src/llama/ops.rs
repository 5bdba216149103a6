//! The Llama family's own operations, beside the attention it shares with GPT-2 (`cpu`):
//! RMSNorm, rotary position embeddings, the SwiGLU gate.

/// Which dimensions RoPE rotates together.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RopePairs {
    /// (2i, 2i + 1): a llama-architecture GGUF file (its converter permuted q and k's rows).
    Adjacent,
    /// (i, i + d/2): Hugging Face's `rotate_half` (safetensors; Qwen2 GGUF files).
    Halves,
}

/// SwiGLU's gate: g ← SiLU(g) · u = g / (1 + e^−g) · u.
pub fn swiglu(gate: &mut [f32], up: &[f32]) {
    for (g, u) in gate.iter_mut().zip(up) {
        *g = *g / (1.0 + (-*g).exp()) * u;
    }
}

/// y = w ⊙ x / √(mean(x²) + ε), row by row.
pub fn rms_norm(x: &[f32], w: &[f32], d: usize, eps: f32, y: &mut [f32]) {
    for (xr, yr) in x.chunks_exact(d).zip(y.chunks_exact_mut(d)) {
        let ms = xr.iter().map(|v| v * v).sum::<f32>() / d as f32;
        let r = 1.0 / (ms + eps).sqrt();
        for ((o, &v), &g) in yr.iter_mut().zip(xr).zip(w) {
            *o = v * r * g;
        }
    }
}

/// RoPE's rotation at each of `positions` positions: for position p and pair i, the cosine and
/// sine of p · `inv_freq[i]` (`LlamaConfig::inv_freq`), as (positions, pairs, 2). Computed once
/// per pass, on the CPU, for both engines (the GPU's `rope` kernel reads it).
pub fn rope_table(inv_freq: &[f32], positions: usize) -> Vec<f32> {
    let mut out = Vec::with_capacity(positions * inv_freq.len() * 2);
    for p in 0..positions {
        for &f in inv_freq {
            let (sin, cos) = (p as f32 * f).sin_cos();
            out.extend([cos, sin]);
        }
    }
    out
}

/// Rotates each head's pairs of `x` (T rows of `heads` × `hd`, row r at position r) by the
/// angles of `table` (`rope_table`, at least T positions).
pub fn rope(x: &mut [f32], heads: usize, hd: usize, table: &[f32], pairs: RopePairs) {
    let width = heads * hd;
    let half = hd / 2;
    for (p, row) in x.chunks_exact_mut(width).enumerate() {
        let angles = &table[p * hd..(p + 1) * hd];
        for head in row.chunks_exact_mut(hd) {
            for (i, cs) in angles.chunks_exact(2).enumerate() {
                let (cos, sin) = (cs[0], cs[1]);
                let (a, b) = match pairs {
                    RopePairs::Adjacent => (2 * i, 2 * i + 1),
                    RopePairs::Halves => (i, i + half),
                };
                let (x0, x1) = (head[a], head[b]);
                head[a] = x0 * cos - x1 * sin;
                head[b] = x1 * cos + x0 * sin;
            }
        }
    }
}

/// One dimension pair of a head's q or k at one position, as RoPE turned it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RotatedPair {
    /// The pair's dimensions.
    pub dims: (usize, usize),
    /// Its frequency (`LlamaConfig::inv_freq`) and the angle at this position, pos · freq
    /// (radians).
    pub freq: f32,
    pub angle: f32,
    /// The pair's values before and after the rotation.
    pub before: (f32, f32),
    pub after: (f32, f32),
}

/// Every pair of one head's `rotated` vector (q or k after RoPE, `hd` long) at position
/// `pos`: its angle, and the values before the rotation (turned back by the same angle, as
/// `rope` computes it).
pub fn rotated_pairs(
    rotated: &[f32],
    pos: usize,
    inv_freq: &[f32],
    pairs: RopePairs,
) -> Vec<RotatedPair> {
    let half = rotated.len() / 2;
    inv_freq
        .iter()
        .take(half)
        .enumerate()
        .map(|(i, &freq)| {
            let angle = pos as f32 * freq;
            let (sin, cos) = angle.sin_cos();
            let (a, b) = match pairs {
                RopePairs::Adjacent => (2 * i, 2 * i + 1),
                RopePairs::Halves => (i, i + half),
            };
            let (x0, x1) = (rotated[a], rotated[b]);
            RotatedPair {
                dims: (a, b),
                freq,
                angle,
                before: (x0 * cos + x1 * sin, x1 * cos - x0 * sin),
                after: (x0, x1),
            }
        })
        .collect()
}

/// Adds `bias` to every row of `x`.
pub fn add_bias(x: &mut [f32], bias: Option<&Vec<f32>>) {
    if let Some(b) = bias {
        for row in x.chunks_exact_mut(b.len()) {
            row.iter_mut().zip(b).for_each(|(x, b)| *x += b);
        }
    }
}
