//! Model hyper-parameters, read from a Hugging Face GPT-2 style `config.json`.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Where LayerNorm sits in a block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LnPlacement {
    /// GPT-2: `x + attn(ln_1(x))`, `x + ffn(ln_2(x))`, and a final `ln_f`.
    #[default]
    Pre,
    /// The lesson's block (and the original Transformer): `ln_1(x + attn(x))`,
    /// `ln_2(x + ffn(x))`.
    Post,
}

/// The activation inside the feed-forward network.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Activation {
    /// GELU with the tanh approximation (GPT-2's `gelu_new`).
    #[default]
    #[serde(rename = "gelu_new", alias = "gelu_pytorch_tanh", alias = "gelu_fast")]
    GeluTanh,
    /// Exact GELU, `x·Φ(x)` with the error function.
    #[serde(rename = "gelu")]
    GeluErf,
}

/// Hyper-parameters of a decoder-only Transformer in GPT-2's naming.
/// Unknown fields of a Hugging Face config are ignored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Config {
    /// Width of the residual stream, d_model.
    pub n_embd: usize,
    /// Number of attention heads per layer; d_k = n_embd / n_head.
    pub n_head: usize,
    /// Number of Transformer blocks.
    pub n_layer: usize,
    /// Longest context the position embedding covers.
    pub n_positions: usize,
    /// Number of token ids.
    pub vocab_size: usize,
    /// The epsilon added to the variance inside every LayerNorm.
    #[serde(default = "default_eps")]
    pub layer_norm_epsilon: f32,
    /// Width of the FFN hidden layer; GPT-2 writes `null` for 4·n_embd.
    #[serde(default)]
    pub n_inner: Option<usize>,
    /// FFN activation (`gelu_new` unless the config says otherwise).
    #[serde(default)]
    pub activation_function: Activation,
    /// attnlab's own field: `pre` (GPT-2, the default) or `post` (the lesson's block).
    #[serde(default)]
    pub ln_placement: LnPlacement,
    /// Whether the token embedding is multiplied by √d_model before the position embedding is
    /// added, as in the original Transformer ("we multiply those weights by √d_model"; Hugging
    /// Face's `scale_embedding`). Off for GPT-2. Under post-LN the first block reads the
    /// embedding itself, not a LayerNorm of it, and without the factor training keeps it so
    /// small that layer 0's softmax stays nearly flat (crates/train/RUNS.md, run 2).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub scale_embedding: bool,
}

fn default_eps() -> f32 {
    1e-5
}

/// Upper bounds that keep a hostile config from asking for absurd allocations.
const MAX_WIDTH: usize = 1 << 14;
const MAX_LAYERS: usize = 256;
const MAX_POSITIONS: usize = 1 << 14;
const MAX_VOCAB: usize = 1 << 20;

impl Config {
    /// The bundled model's shape: 4 layers × 4 heads, d_model 256 (d_k = 64, √d_k = 8),
    /// post-LN as in the lesson, context 128.
    pub fn bundled(vocab_size: usize) -> Self {
        Config {
            n_embd: 256,
            n_head: 4,
            n_layer: 4,
            n_positions: 128,
            vocab_size,
            layer_norm_epsilon: 1e-5,
            n_inner: None,
            activation_function: Activation::GeluTanh,
            ln_placement: LnPlacement::Post,
            scale_embedding: true,
        }
    }

    /// Parses and validates a `config.json`.
    pub fn from_json(bytes: &[u8]) -> Result<Self> {
        let config: Config =
            serde_json::from_slice(bytes).map_err(|e| Error::Config(e.to_string()))?;
        config.validate()?;
        Ok(config)
    }

    /// Checks that the sizes are positive, consistent and not absurd.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::Config(m));
        for (name, v, max) in [
            ("n_embd", self.n_embd, MAX_WIDTH),
            ("n_head", self.n_head, MAX_WIDTH),
            ("n_layer", self.n_layer, MAX_LAYERS),
            ("n_positions", self.n_positions, MAX_POSITIONS),
            ("vocab_size", self.vocab_size, MAX_VOCAB),
            ("n_inner", self.d_ff(), 4 * MAX_WIDTH),
        ] {
            if v == 0 || v > max {
                return bad(format!("{name} = {v} is outside 1..={max}"));
            }
        }
        if !self.n_embd.is_multiple_of(self.n_head) {
            return bad(format!(
                "n_embd = {} is not divisible by n_head = {}",
                self.n_embd, self.n_head
            ));
        }
        if !(self.layer_norm_epsilon.is_finite() && self.layer_norm_epsilon > 0.0) {
            return bad(format!(
                "layer_norm_epsilon = {} must be a positive finite number",
                self.layer_norm_epsilon
            ));
        }
        Ok(())
    }

    /// The factor on the token embedding: √d_model with `scale_embedding`, else 1.
    pub fn embedding_scale(&self) -> f32 {
        if self.scale_embedding {
            (self.n_embd as f32).sqrt()
        } else {
            1.0
        }
    }

    /// Per-head width d_k.
    pub fn d_k(&self) -> usize {
        self.n_embd / self.n_head
    }

    /// FFN hidden width.
    pub fn d_ff(&self) -> usize {
        self.n_inner.unwrap_or(4 * self.n_embd)
    }

    /// Number of parameters (tied lm head counted once).
    pub fn n_params(&self, has_ln_f: bool) -> usize {
        let (d, f) = (self.n_embd, self.d_ff());
        let block = 2 * 2 * d + (d * 3 * d + 3 * d) + (d * d + d) + (d * f + f) + (f * d + d);
        self.vocab_size * d
            + self.n_positions * d
            + self.n_layer * block
            + if has_ln_f { 2 * d } else { 0 }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("Config always serialises")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_hugging_face_gpt2_config() {
        let json = br#"{"activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"],
            "attn_pdrop": 0.1, "bos_token_id": 50256, "embd_pdrop": 0.1, "eos_token_id": 50256,
            "initializer_range": 0.02, "layer_norm_epsilon": 1e-05, "model_type": "gpt2",
            "n_ctx": 1024, "n_embd": 768, "n_head": 12, "n_inner": null, "n_layer": 12,
            "n_positions": 1024, "resid_pdrop": 0.1, "vocab_size": 50257}"#;
        let c = Config::from_json(json).unwrap();
        assert_eq!((c.n_embd, c.n_head, c.d_k(), c.d_ff()), (768, 12, 64, 3072));
        assert_eq!(c.ln_placement, LnPlacement::Pre);
        assert_eq!(c.activation_function, Activation::GeluTanh);
        // GPT-2 small has 124,439,808 parameters.
        assert_eq!(c.n_params(true), 124_439_808);
    }

    #[test]
    fn post_ln_round_trips_and_bad_configs_are_named() {
        let c = Config::bundled(6000);
        assert_eq!(Config::from_json(c.to_json().as_bytes()).unwrap(), c);
        assert!(c.to_json().contains("\"ln_placement\": \"post\""));
        assert!(c.to_json().contains("\"scale_embedding\": true"));
        assert_eq!(c.embedding_scale(), 16.0);
        // a GPT-2 config (no such field) keeps the plain sum, and says nothing about it
        let mut g = c.clone();
        g.scale_embedding = false;
        assert_eq!(g.embedding_scale(), 1.0);
        assert!(!g.to_json().contains("scale_embedding"));
        assert_eq!(Config::from_json(g.to_json().as_bytes()).unwrap(), g);
        let err = Config::from_json(
            br#"{"n_embd": 10, "n_head": 3, "n_layer": 1, "n_positions": 4, "vocab_size": 5}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("not divisible"), "{err}");
        let err = Config::from_json(
            br#"{"n_embd": 8, "n_head": 2, "n_layer": 1, "n_positions": 0, "vocab_size": 5}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("n_positions"), "{err}");
        let err = Config::from_json(br#"{"n_embd": 8}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("missing field"), "{err}");
    }
}
