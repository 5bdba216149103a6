//! The Llama family's forward pass to next-token logits (RMSNorm, RoPE, grouped-query
//! attention, SwiGLU, a tied or separate output head) on compact weights (`QMatrix`), read
//! from a GGUF file. It is the reference the traced forward and the GPU kernels for these
//! models will be checked against; `tests/smollm2.rs` checks it against llama.cpp's logits.

use crate::error::{Error, Result};
use crate::gguf::{Gguf, Value};
use crate::qmatrix::QMatrix;

/// Which dimensions RoPE rotates together.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RopePairs {
    /// (2i, 2i + 1): a llama-architecture GGUF file (its converter permuted q and k's rows).
    Adjacent,
    /// (i, i + d/2): Hugging Face's `rotate_half` (safetensors; Qwen2 GGUF files).
    Halves,
}

#[derive(Clone, Debug, PartialEq)]
pub struct LlamaConfig {
    pub n_layer: usize,
    pub n_embd: usize,
    pub n_head: usize,
    pub n_kv_head: usize,
    pub head_dim: usize,
    pub n_ff: usize,
    pub vocab_size: usize,
    pub context: usize,
    pub rope_theta: f32,
    pub rope_pairs: RopePairs,
    pub rms_eps: f32,
}

pub struct LlamaLayer {
    pub attn_norm: Vec<f32>,
    pub q: QMatrix,
    pub k: QMatrix,
    pub v: QMatrix,
    pub o: QMatrix,
    pub ffn_norm: Vec<f32>,
    pub gate: QMatrix,
    pub up: QMatrix,
    pub down: QMatrix,
}

pub struct LlamaModel {
    pub config: LlamaConfig,
    pub embed: QMatrix,
    pub layers: Vec<LlamaLayer>,
    pub norm: Vec<f32>,
    /// The output head; None: tied to the token embedding.
    pub output: Option<QMatrix>,
}

fn need_u(g: &Gguf, key: &str) -> Result<usize> {
    g.get(key)
        .and_then(Value::as_u64)
        .map(|x| x as usize)
        .ok_or_else(|| Error::Gguf(format!("`{key}` is missing or not a count")))
}

fn need_f(g: &Gguf, key: &str) -> Result<f32> {
    g.get(key)
        .and_then(Value::as_f64)
        .map(|x| x as f32)
        .ok_or_else(|| Error::Gguf(format!("`{key}` is missing or not a number")))
}

impl LlamaModel {
    /// A llama-architecture GGUF file's model.
    pub fn from_gguf(g: &Gguf, bytes: &[u8]) -> Result<LlamaModel> {
        let arch = g.get("general.architecture").and_then(Value::as_str);
        if arch != Some("llama") {
            return Err(Error::Gguf(format!(
                "general.architecture is {arch:?}; this reads \"llama\""
            )));
        }
        let n_embd = need_u(g, "llama.embedding_length")?;
        let n_head = need_u(g, "llama.attention.head_count")?;
        let config = LlamaConfig {
            n_layer: need_u(g, "llama.block_count")?,
            n_embd,
            n_head,
            n_kv_head: need_u(g, "llama.attention.head_count_kv")?,
            head_dim: n_embd / n_head.max(1),
            n_ff: need_u(g, "llama.feed_forward_length")?,
            vocab_size: 0,
            context: need_u(g, "llama.context_length")?,
            rope_theta: need_f(g, "llama.rope.freq_base").unwrap_or(10_000.0),
            rope_pairs: RopePairs::Adjacent,
            rms_eps: need_f(g, "llama.attention.layer_norm_rms_epsilon")?,
        };
        if g.get("llama.rope.scaling.type").is_some() || g.tensor("rope_freqs.weight").is_some() {
            return Err(Error::Gguf("RoPE scaling is not read yet".into()));
        }
        let matrix = |name: &str| -> Result<QMatrix> {
            let t = g
                .tensor(name)
                .ok_or_else(|| Error::MissingTensor { name: name.into() })?;
            QMatrix::from_gguf(g, bytes, t)
        };
        let vector = |name: &str| -> Result<Vec<f32>> {
            let t = g
                .tensor(name)
                .ok_or_else(|| Error::MissingTensor { name: name.into() })?;
            g.read(bytes, t)
        };
        let layers = (0..config.n_layer)
            .map(|l| {
                let n = |s: &str| format!("blk.{l}.{s}.weight");
                Ok(LlamaLayer {
                    attn_norm: vector(&n("attn_norm"))?,
                    q: matrix(&n("attn_q"))?,
                    k: matrix(&n("attn_k"))?,
                    v: matrix(&n("attn_v"))?,
                    o: matrix(&n("attn_output"))?,
                    ffn_norm: vector(&n("ffn_norm"))?,
                    gate: matrix(&n("ffn_gate"))?,
                    up: matrix(&n("ffn_up"))?,
                    down: matrix(&n("ffn_down"))?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let embed = matrix("token_embd.weight")?;
        let output = match g.tensor("output.weight") {
            Some(_) => Some(matrix("output.weight")?),
            None => None,
        };
        let config = LlamaConfig {
            vocab_size: embed.rows,
            ..config
        };
        Ok(LlamaModel {
            config,
            embed,
            layers,
            norm: vector("output_norm.weight")?,
            output,
        })
    }

    /// The next-token logits after every position of `ids`, (T × vocabulary).
    pub fn logits(&self, ids: &[u32]) -> Result<Vec<f32>> {
        self.logits_with(ids, |_, _, _| {})
    }

    /// `logits`, handing `visit(layer, head, weights)` every head's attention weights
    /// (T × T, row = query, zero above the diagonal).
    pub fn logits_with(
        &self,
        ids: &[u32],
        mut visit: impl FnMut(usize, usize, &[f32]),
    ) -> Result<Vec<f32>> {
        let c = &self.config;
        let (t, d, hd) = (ids.len(), c.n_embd, c.head_dim);
        if t == 0 {
            return Err(Error::EmptyInput);
        }
        let mut h = vec![0f32; t * d];
        for (p, &id) in ids.iter().enumerate() {
            if id as usize >= c.vocab_size {
                return Err(Error::TokenOutOfRange {
                    id,
                    position: p,
                    vocab: c.vocab_size,
                });
            }
            self.embed
                .rows_into(id as usize, &mut h[p * d..(p + 1) * d]);
        }
        let (q_w, kv_w) = (c.n_head * hd, c.n_kv_head * hd);
        let mut a = vec![0f32; t * d];
        let (mut q, mut k, mut v) = (
            vec![0f32; t * q_w],
            vec![0f32; t * kv_w],
            vec![0f32; t * kv_w],
        );
        let mut o = vec![0f32; t * q_w];
        let mut out = vec![0f32; t * d];
        let (mut gate, mut up) = (vec![0f32; t * c.n_ff], vec![0f32; t * c.n_ff]);
        let group = c.n_head / c.n_kv_head.max(1);
        let scale = 1.0 / (hd as f32).sqrt();
        let mut weights = vec![0f32; t * t];
        for (l, layer) in self.layers.iter().enumerate() {
            rms_norm(&h, &layer.attn_norm, d, c.rms_eps, &mut a);
            layer.q.matmul_t(&a, t, &mut q);
            layer.k.matmul_t(&a, t, &mut k);
            layer.v.matmul_t(&a, t, &mut v);
            rope(&mut q, c.n_head, hd, c.rope_theta, c.rope_pairs);
            rope(&mut k, c.n_kv_head, hd, c.rope_theta, c.rope_pairs);
            for head in 0..c.n_head {
                let kv = head / group;
                for i in 0..t {
                    let qi = &q[i * q_w + head * hd..i * q_w + (head + 1) * hd];
                    let scores = &mut weights[i * t..(i + 1) * t];
                    for (j, s) in scores[..=i].iter_mut().enumerate() {
                        let kj = &k[j * kv_w + kv * hd..j * kv_w + (kv + 1) * hd];
                        *s = qi.iter().zip(kj).map(|(x, y)| x * y).sum::<f32>() * scale;
                    }
                    let m = scores[..=i]
                        .iter()
                        .fold(f32::NEG_INFINITY, |m, &x| m.max(x));
                    let mut z = 0.0;
                    for s in &mut scores[..=i] {
                        *s = (*s - m).exp();
                        z += *s;
                    }
                    for s in &mut scores[..=i] {
                        *s /= z;
                    }
                    let oi = &mut o[i * q_w + head * hd..i * q_w + (head + 1) * hd];
                    oi.fill(0.0);
                    for (j, &w) in scores[..=i].iter().enumerate() {
                        let vj = &v[j * kv_w + kv * hd..j * kv_w + (kv + 1) * hd];
                        for (x, y) in oi.iter_mut().zip(vj) {
                            *x += w * y;
                        }
                    }
                }
                visit(l, head, &weights);
            }
            layer.o.matmul_t(&o, t, &mut out);
            h.iter_mut().zip(&out).for_each(|(x, y)| *x += y);
            rms_norm(&h, &layer.ffn_norm, d, c.rms_eps, &mut a);
            layer.gate.matmul_t(&a, t, &mut gate);
            layer.up.matmul_t(&a, t, &mut up);
            for (g, u) in gate.iter_mut().zip(&up) {
                *g = *g / (1.0 + (-*g).exp()) * u;
            }
            layer.down.matmul_t(&gate, t, &mut out);
            h.iter_mut().zip(&out).for_each(|(x, y)| *x += y);
        }
        rms_norm(&h, &self.norm, d, c.rms_eps, &mut a);
        let mut logits = vec![0f32; t * c.vocab_size];
        self.output
            .as_ref()
            .unwrap_or(&self.embed)
            .matmul_t(&a, t, &mut logits);
        Ok(logits)
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

/// Rotates each head's pairs of `x` (T rows of `heads` × `hd`) by position · θ^(−2i/hd).
pub fn rope(x: &mut [f32], heads: usize, hd: usize, theta: f32, pairs: RopePairs) {
    let width = heads * hd;
    let half = hd / 2;
    let inv_freq: Vec<f32> = (0..half)
        .map(|i| theta.powf(-2.0 * i as f32 / hd as f32))
        .collect();
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
