//! The Llama family (RMSNorm, RoPE, grouped-query attention, SwiGLU, a tied or separate
//! output head) on compact weights (`QMatrix`), read from a GGUF file: its hyperparameters
//! and weights, checked against each other before a weight is copied (`LlamaBundle`), and its
//! forward pass (`forward`: logits, attention maps, a whole `Trace`). `tests/smollm2.rs`
//! checks it against llama.cpp's logits.

mod forward;
pub mod hf;
mod ops;

pub use ops::{rms_norm, rope, rope_table, rotated_pairs, swiglu, RopePairs, RotatedPair};

use crate::config::LnPlacement;
use crate::error::{Error, Result};
use crate::field::Dims;
use crate::gguf::tokenizer::tokenizer_json;
use crate::gguf::{Gguf, TensorBytes, TensorInfo, Value};
use crate::qmatrix::QMatrix;
use crate::roles::{HeadMaps, Subject};
use crate::tokenizer::Tokenizer;
use crate::trace::AttentionOptions;

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
    /// Llama 3's stretch of RoPE's low frequencies (`rope_scaling` type "llama3").
    pub rope_scaling: Option<RopeScaling>,
    /// The same stretch as a GGUF file stores it (`rope_freqs.weight`): per dimension pair, the
    /// factor its frequency is divided by.
    pub rope_factors: Option<Vec<f32>>,
    pub rms_eps: f32,
    /// Mistral's sliding window: a query sees at most this many keys (longer runs are refused).
    pub sliding_window: Option<usize>,
}

impl LlamaConfig {
    /// The sizes of a trace of `t` tokens through a model of this config.
    pub fn dims(&self, t: usize) -> Dims {
        Dims {
            t,
            d_model: self.n_embd,
            n_head: self.n_head,
            d_k: self.head_dim,
            d_ff: self.n_ff,
            n_layer: self.n_layer,
            vocab: self.vocab_size,
            ln_placement: LnPlacement::Pre,
        }
    }

    /// The number of parameters: embedding, blocks, final norm and (unless `tied` to the
    /// embedding) the output head; q/k/v biases when `qkv_bias`.
    pub fn n_params(&self, tied: bool, qkv_bias: bool) -> usize {
        let (d, ff, v) = (self.n_embd, self.n_ff, self.vocab_size);
        let (q_w, kv_w) = (self.n_head * self.head_dim, self.n_kv_head * self.head_dim);
        let attn = d * q_w + 2 * d * kv_w + q_w * d + if qkv_bias { q_w + 2 * kv_w } else { 0 };
        let block = attn + 3 * d * ff + 2 * d;
        v * d + self.n_layer * block + d + if tied { 0 } else { v * d }
    }

    /// RoPE's frequency of each dimension pair, θ^(−2i/d), with Llama 3's scaling applied
    /// (from the config's parameters, or a GGUF file's factors).
    pub fn inv_freq(&self) -> Vec<f32> {
        let hd = self.head_dim;
        (0..hd / 2)
            .map(|i| {
                let f = self.rope_theta.powf(-2.0 * i as f32 / hd as f32);
                let f = self.rope_scaling.map_or(f, |s| s.apply(f));
                self.rope_factors.as_ref().map_or(f, |r| f / r[i])
            })
            .collect()
    }
}

/// Llama 3's RoPE scaling: wavelengths longer than `original_context / low_freq_factor` are
/// stretched by `factor`, those shorter than `original_context / high_freq_factor` kept, and
/// the ones between blended smoothly.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RopeScaling {
    pub factor: f32,
    pub low_freq_factor: f32,
    pub high_freq_factor: f32,
    pub original_context: f32,
}

impl RopeScaling {
    fn apply(self, freq: f32) -> f32 {
        let wavelen = 2.0 * std::f32::consts::PI / freq;
        let low = self.original_context / self.low_freq_factor;
        let high = self.original_context / self.high_freq_factor;
        if wavelen < high {
            freq
        } else if wavelen > low {
            freq / self.factor
        } else {
            let smooth = (self.original_context / wavelen - self.low_freq_factor)
                / (self.high_freq_factor - self.low_freq_factor);
            (1.0 - smooth) * freq / self.factor + smooth * freq
        }
    }
}

/// The biases of a block's projections (Qwen2 has q, k and v's; Llama's `attention_bias` adds
/// o's).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Biases {
    pub q: Option<Vec<f32>>,
    pub k: Option<Vec<f32>>,
    pub v: Option<Vec<f32>>,
    pub o: Option<Vec<f32>>,
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
    pub bias: Biases,
}

pub struct LlamaModel {
    pub config: LlamaConfig,
    pub embed: QMatrix,
    pub layers: Vec<LlamaLayer>,
    pub norm: Vec<f32>,
    /// The output head; None: tied to the token embedding.
    pub output: Option<QMatrix>,
}

impl LlamaModel {
    /// The output head: its own, or the token embedding it is tied to.
    pub fn head(&self) -> &QMatrix {
        self.output.as_ref().unwrap_or(&self.embed)
    }
}

/// The GGUF architectures read, and how their RoPE pairs dimensions: llama.cpp's converter
/// permutes a llama file's q and k rows so that rotated pairs are adjacent; a qwen2 file keeps
/// Hugging Face's order (llama.cpp rotates it as "NeoX": dimension i with i + d/2). A qwen2
/// block has q, k and v biases. (Mistral's files are "llama".)
pub const GGUF_ARCHITECTURES: [(&str, RopePairs); 2] =
    [("llama", RopePairs::Adjacent), ("qwen2", RopePairs::Halves)];

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

fn bad(message: String) -> Error {
    Error::Gguf(message)
}

impl LlamaConfig {
    /// The hyperparameters of a GGUF file of one of `GGUF_ARCHITECTURES`, checked for
    /// consistency (the keys are named after the architecture: `llama.block_count`,
    /// `qwen2.block_count`).
    pub fn from_gguf(g: &Gguf) -> Result<LlamaConfig> {
        let arch = g.get("general.architecture").and_then(Value::as_str);
        let Some(&(arch, rope_pairs)) = GGUF_ARCHITECTURES.iter().find(|(a, _)| Some(*a) == arch)
        else {
            return Err(bad(format!(
                "general.architecture is {}; read: {}",
                arch.map_or("missing".into(), |a| format!("\"{a}\"")),
                GGUF_ARCHITECTURES
                    .map(|(a, _)| format!("\"{a}\""))
                    .join(", ")
            )));
        };
        let key = |k: &str| format!("{arch}.{k}");
        let need_u = |k: &str| need_u(g, &key(k));
        let need_f = |k: &str| need_f(g, &key(k));
        let n_embd = need_u("embedding_length")?;
        let n_head = need_u("attention.head_count")?;
        let n_kv_head = need_u("attention.head_count_kv")?;
        let n_layer = need_u("block_count")?;
        if n_layer == 0 || n_embd == 0 || n_head == 0 || n_kv_head == 0 {
            return Err(bad(format!(
                "a block count, width or head count of 0 ({arch}.block_count {n_layer}, {arch}.embedding_length {n_embd}, {arch}.attention.head_count {n_head}, {arch}.attention.head_count_kv {n_kv_head})"
            )));
        }
        if !n_embd.is_multiple_of(n_head) || !n_head.is_multiple_of(n_kv_head) {
            return Err(bad(format!(
                "{n_head} query heads do not divide the width {n_embd}, or {n_kv_head} key/value heads do not divide the {n_head} query heads"
            )));
        }
        let head_dim = n_embd / n_head;
        for key in [key("attention.key_length"), key("attention.value_length")] {
            if let Some(n) = g.get(&key).and_then(Value::as_u64) {
                if n != head_dim as u64 {
                    return Err(bad(format!(
                        "`{key}` is {n}; heads of another size than width / heads ({head_dim}) are not read yet"
                    )));
                }
            }
        }
        if !head_dim.is_multiple_of(2) {
            return Err(bad(format!(
                "heads of {head_dim} dimensions: RoPE rotates pairs, an even size is needed"
            )));
        }
        if let Some(t) = g.get(&key("rope.scaling.type")) {
            return Err(bad(format!(
                "RoPE scaling {} ({arch}.rope.scaling.type) is not read yet (read: Llama 3's, as the tensor `rope_freqs.weight`)",
                t.as_str().unwrap_or("of another kind")
            )));
        }
        let rope_theta = match g.get(&key("rope.freq_base")) {
            None => 10_000.0,
            Some(_) => need_f("rope.freq_base")?,
        };
        let rms_eps = need_f("attention.layer_norm_rms_epsilon")?;
        if !(rope_theta.is_finite() && rope_theta > 1.0 && rms_eps.is_finite() && rms_eps > 0.0) {
            return Err(bad(format!(
                "{arch}.rope.freq_base {rope_theta} or {arch}.attention.layer_norm_rms_epsilon {rms_eps} is out of range"
            )));
        }
        let context = need_u("context_length")?;
        if context == 0 {
            return Err(bad(format!("{arch}.context_length is 0")));
        }
        let embed = g
            .tensor("token_embd.weight")
            .ok_or_else(|| bad("tensor `token_embd.weight` is missing".into()))?;
        let vocab_size = match embed.shape[..] {
            [v, d] if d == n_embd && v > 0 => v,
            _ => {
                return Err(bad(format!(
                    "tensor `token_embd.weight` has shape {:?}; the metadata asks for [vocabulary, {n_embd}]",
                    embed.shape
                )))
            }
        };
        if let Some(v) = g.get(&key("vocab_size")).and_then(Value::as_u64) {
            if v != vocab_size as u64 {
                return Err(bad(format!(
                    "{arch}.vocab_size is {v}, but `token_embd.weight` has {vocab_size} rows"
                )));
            }
        }
        let n_ff = need_u("feed_forward_length")?;
        if n_ff == 0 {
            return Err(bad(format!("{arch}.feed_forward_length is 0")));
        }
        Ok(LlamaConfig {
            n_layer,
            n_embd,
            n_head,
            n_kv_head,
            head_dim,
            n_ff,
            vocab_size,
            context,
            rope_theta,
            rope_pairs,
            rope_scaling: None,
            // read with the weights (`rope_freqs.weight` is a tensor)
            rope_factors: None,
            rms_eps,
            sliding_window: None,
        })
    }
}

impl LlamaConfig {
    /// Llama 3's RoPE scaling as llama.cpp's converter writes it, the tensor
    /// `rope_freqs.weight` (one factor per dimension pair), into `rope_factors`, checked: its
    /// shape, and every factor a positive number. `from_gguf` reads the metadata only; the
    /// page, which shows the rotation's angles, reads this from the file's bytes too.
    pub fn read_rope_factors(
        &mut self,
        g: &Gguf,
        bytes: &(impl TensorBytes + ?Sized),
    ) -> Result<()> {
        let Some(t) = g.tensor("rope_freqs.weight") else {
            return Ok(());
        };
        let pairs = self.head_dim / 2;
        if t.shape != [pairs] {
            return Err(bad(format!(
                "tensor `rope_freqs.weight` has shape {:?}; the metadata asks for [{pairs}] (one factor per dimension pair)",
                t.shape
            )));
        }
        let factors = g.read(bytes, t)?;
        if let Some(f) = factors.iter().find(|f| !(f.is_finite() && **f > 0.0)) {
            return Err(bad(format!(
                "tensor `rope_freqs.weight` holds {f}; RoPE's factors are positive numbers"
            )));
        }
        self.rope_factors = Some(factors);
        Ok(())
    }
}

/// A GGUF file's model with the tokenizer its metadata describes.
pub struct LlamaBundle {
    pub model: LlamaModel,
    pub tokenizer: Tokenizer,
}

impl LlamaBundle {
    /// Reads a whole GGUF file: the header, the hyperparameters, the tokenizer (whose ids must
    /// fit the embedding), then the weights — so that a malformed file is refused before any
    /// weight is copied.
    pub fn from_gguf_bytes(bytes: &[u8]) -> Result<LlamaBundle> {
        let (g, config, tokenizer) = LlamaBundle::read_head(bytes, bytes.len())?;
        let model = LlamaModel::with_config(config, &g, bytes)?;
        Ok(LlamaBundle { model, tokenizer })
    }

    /// What a GGUF file's first bytes (`head`, of a file `file_len` long) say: its
    /// directory, its hyperparameters and its tokenizer, checked against each other — all
    /// but the weights (the page reads these while its CPU worker reads the weights).
    pub fn read_head(head: &[u8], file_len: usize) -> Result<(Gguf, LlamaConfig, Tokenizer)> {
        let g = Gguf::parse_head(head, file_len)?;
        let config = LlamaConfig::from_gguf(&g)?;
        let tokenizer = Tokenizer::from_bytes(tokenizer_json(&g)?.as_bytes())?;
        if tokenizer.vocab_size() > config.vocab_size {
            return Err(bad(format!(
                "the tokenizer has {} tokens, but `token_embd.weight` has {} rows",
                tokenizer.vocab_size(),
                config.vocab_size
            )));
        }
        Ok((g, config, tokenizer))
    }
}

impl LlamaModel {
    /// A llama or qwen2 GGUF file's model. Every tensor's shape is checked against the
    /// metadata before its bytes are copied; the bytes come from the whole file or any other
    /// `TensorBytes` (the page's worker copies them one tensor at a time out of what it was
    /// sent).
    pub fn from_gguf(g: &Gguf, bytes: &(impl TensorBytes + ?Sized)) -> Result<LlamaModel> {
        LlamaModel::with_config(LlamaConfig::from_gguf(g)?, g, bytes)
    }

    /// `from_gguf` with the file's config already read.
    fn with_config(
        mut config: LlamaConfig,
        g: &Gguf,
        bytes: &(impl TensorBytes + ?Sized),
    ) -> Result<LlamaModel> {
        config.read_rope_factors(g, bytes)?;
        let c = &config;
        let tensor = |name: &str, shape: &[usize]| -> Result<&TensorInfo> {
            let t = g
                .tensor(name)
                .ok_or_else(|| bad(format!("tensor `{name}` is missing")))?;
            if t.shape != shape {
                return Err(bad(format!(
                    "tensor `{name}` has shape {:?}; the metadata asks for {shape:?}",
                    t.shape
                )));
            }
            Ok(t)
        };
        let matrix = |name: &str, rows: usize, cols: usize| {
            QMatrix::from_gguf(g, bytes, tensor(name, &[rows, cols])?)
        };
        let vector = |name: &str| g.read(bytes, tensor(name, &[c.n_embd])?);
        let (d, q_w, kv_w) = (c.n_embd, c.n_head * c.head_dim, c.n_kv_head * c.head_dim);
        // a qwen2 block has q, k and v biases; a llama one may have them, and o's (as
        // llama.cpp reads them: when the file has them)
        let qwen2 = g.get("general.architecture").and_then(Value::as_str) == Some("qwen2");
        let bias = |name: &str, len: usize, needed: bool| match g.tensor(name) {
            None if needed => Err(bad(format!("tensor `{name}` is missing"))),
            None => Ok(None),
            Some(_) => g.read(bytes, tensor(name, &[len])?).map(Some),
        };
        let layers = (0..c.n_layer)
            .map(|l| {
                let n = |s: &str| format!("blk.{l}.{s}.weight");
                let b = |s: &str| format!("blk.{l}.{s}.bias");
                Ok(LlamaLayer {
                    attn_norm: vector(&n("attn_norm"))?,
                    q: matrix(&n("attn_q"), q_w, d)?,
                    k: matrix(&n("attn_k"), kv_w, d)?,
                    v: matrix(&n("attn_v"), kv_w, d)?,
                    o: matrix(&n("attn_output"), d, q_w)?,
                    ffn_norm: vector(&n("ffn_norm"))?,
                    gate: matrix(&n("ffn_gate"), c.n_ff, d)?,
                    up: matrix(&n("ffn_up"), c.n_ff, d)?,
                    down: matrix(&n("ffn_down"), d, c.n_ff)?,
                    bias: Biases {
                        q: bias(&b("attn_q"), q_w, qwen2)?,
                        k: bias(&b("attn_k"), kv_w, qwen2)?,
                        v: bias(&b("attn_v"), kv_w, qwen2)?,
                        o: bias(&b("attn_output"), d, false)?,
                    },
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let embed = matrix("token_embd.weight", c.vocab_size, d)?;
        let output = match g.tensor("output.weight") {
            Some(_) => Some(matrix("output.weight", c.vocab_size, d)?),
            None => None,
        };
        let norm = vector("output_norm.weight")?;
        Ok(LlamaModel {
            config,
            embed,
            layers,
            norm,
            output,
        })
    }
}

impl Subject for LlamaBundle {
    type Maps = HeadMaps;
    fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }
    fn context(&self) -> usize {
        self.model.config.context
    }
    fn heads(&self) -> (usize, usize) {
        (self.model.config.n_layer, self.model.config.n_head)
    }
    fn run(&self, ids: &[u32], opts: &AttentionOptions) -> Result<HeadMaps> {
        self.model.maps(ids, opts)
    }
}
