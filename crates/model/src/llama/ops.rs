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

/// Rotates each head's pairs of `x` (T rows of `heads` × `hd`) by position · `inv_freq[i]`
/// (`LlamaConfig::inv_freq`: one frequency per pair).
pub fn rope(x: &mut [f32], heads: usize, hd: usize, inv_freq: &[f32], pairs: RopePairs) {
    let width = heads * hd;
    let half = hd / 2;
    for (p, row) in x.chunks_exact_mut(width).enumerate() {
        for head in row.chunks_exact_mut(hd) {
            for (i, &f) in inv_freq.iter().enumerate() {
                let angle = p as f32 * f;
                let (sin, cos) = angle.sin_cos();
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

/// Adds `bias` to every row of `x`.
pub fn add_bias(x: &mut [f32], bias: Option<&Vec<f32>>) {
    if let Some(b) = bias {
        for row in x.chunks_exact_mut(b.len()) {
            row.iter_mut().zip(b).for_each(|(x, b)| *x += b);
        }
    }
}
