//! A Llama-family model from a Hugging Face folder: `config.json` (`model_type` llama, qwen2
//! or mistral), the weights as one `model.safetensors` or shards listed by
//! `model.safetensors.index.json`, the tokenizer from `tokenizer.json`. F16 and BF16 weights
//! stay 2 bytes a value (`QMatrix` blocks); the layout is Hugging Face's, so RoPE rotates
//! halves (`RopePairs::Halves`).

use std::path::Path;

use safetensors::tensor::TensorView;
use safetensors::{Dtype, SafeTensors};
use serde_json::Value as Json;

use super::{Biases, LlamaBundle, LlamaConfig, LlamaLayer, LlamaModel, RopePairs, RopeScaling};
use crate::error::{Error, Result};
use crate::gguf::GgmlType;
use crate::qmatrix::{QMatrix, Storage};
use crate::tokenizer::Tokenizer;
use crate::weights::{float_values, shaped};
use crate::{fits, read_in};

fn bad(message: String) -> Error {
    Error::Config(message)
}

/// The model types read, and whether their attention has q, k and v biases of their own.
const TYPES: &[(&str, bool)] = &[("llama", false), ("mistral", false), ("qwen2", true)];

impl LlamaConfig {
    /// Whether `from_hf_json` reads a config.json of this `model_type`.
    pub fn reads_model_type(model_type: &str) -> bool {
        TYPES.iter().any(|(t, _)| *t == model_type)
    }

    /// A Hugging Face `config.json` of a Llama-family model, checked for consistency.
    /// Returns the config, whether q/k/v have biases, and whether o has one.
    pub fn from_hf_json(bytes: &[u8]) -> Result<(LlamaConfig, bool, bool, bool)> {
        let j: Json = serde_json::from_slice(bytes).map_err(|e| bad(format!("not JSON: {e}")))?;
        let ty = j["model_type"].as_str().unwrap_or("missing");
        let Some(&(_, qkv_bias)) = TYPES.iter().find(|(t, _)| *t == ty) else {
            return Err(bad(format!(
                "model_type is {ty:?}; read: gpt2 (the bundled layout), llama, mistral, qwen2"
            )));
        };
        let count = |key: &str| -> Result<usize> {
            j[key]
                .as_u64()
                .filter(|&n| n > 0)
                .map(|n| n as usize)
                .ok_or_else(|| bad(format!("`{key}` is missing or not a positive count")))
        };
        let n_embd = count("hidden_size")?;
        let n_head = count("num_attention_heads")?;
        let n_kv_head = match j.get("num_key_value_heads") {
            None | Some(Json::Null) => n_head,
            Some(_) => count("num_key_value_heads")?,
        };
        if !n_embd.is_multiple_of(n_head) || !n_head.is_multiple_of(n_kv_head) {
            return Err(bad(format!(
                "{n_head} heads do not divide hidden_size {n_embd}, or {n_kv_head} key/value heads do not divide the {n_head} heads"
            )));
        }
        let head_dim = n_embd / n_head;
        if let Some(h) = j["head_dim"].as_u64() {
            if h as usize != head_dim {
                return Err(bad(format!(
                    "head_dim is {h}; heads of another size than hidden_size / heads ({head_dim}) are not read yet"
                )));
            }
        }
        if !head_dim.is_multiple_of(2) {
            return Err(bad(format!(
                "heads of {head_dim} dimensions: RoPE rotates pairs, an even size is needed"
            )));
        }
        let number = |key: &str, default: f64| -> Result<f32> {
            match j.get(key) {
                None | Some(Json::Null) => Ok(default as f32),
                Some(v) => v
                    .as_f64()
                    .filter(|x| x.is_finite() && *x > 0.0)
                    .map(|x| x as f32)
                    .ok_or_else(|| bad(format!("`{key}` is not a positive number"))),
            }
        };
        let act = j["hidden_act"].as_str().unwrap_or("silu");
        if act != "silu" {
            return Err(bad(format!(
                "hidden_act is {act:?}; SwiGLU with silu is read"
            )));
        }
        if j["mlp_bias"].as_bool() == Some(true) {
            return Err(bad("mlp_bias: FFN biases are not read yet".into()));
        }
        // RoPE: transformers 5 writes `rope_parameters` (θ and the scaling together), earlier
        // versions `rope_theta` and `rope_scaling`
        let (rope, theta_in) = match j.get("rope_parameters") {
            Some(p) if p.get("rope_theta").is_some() => (Some(p), p),
            Some(p) if p.is_object() => (Some(p), &j),
            _ => (j.get("rope_scaling").filter(|s| s.is_object()), &j),
        };
        let rope_theta = match theta_in.get("rope_theta") {
            None | Some(Json::Null) => 10_000.0,
            Some(v) => v
                .as_f64()
                .filter(|x| x.is_finite() && *x > 1.0)
                .ok_or_else(|| bad("`rope_theta` is not a number above 1".into()))?
                as f32,
        };
        let rope_scaling = match rope.map(|s| s["rope_type"].as_str().or(s["type"].as_str())) {
            None | Some(Some("default")) => None,
            Some(Some("llama3")) => {
                let s = rope.expect("an object");
                let f = |key: &str| {
                    s[key]
                        .as_f64()
                        .filter(|x| x.is_finite() && *x > 0.0)
                        .map(|x| x as f32)
                        .ok_or_else(|| bad(format!("the llama3 RoPE scaling's `{key}` is missing")))
                };
                let scaling = RopeScaling {
                    factor: f("factor")?,
                    low_freq_factor: f("low_freq_factor")?,
                    high_freq_factor: f("high_freq_factor")?,
                    original_context: f("original_max_position_embeddings")?,
                };
                if scaling.high_freq_factor <= scaling.low_freq_factor {
                    return Err(bad(
                        "the llama3 RoPE scaling's high_freq_factor must exceed its low_freq_factor"
                            .into(),
                    ));
                }
                Some(scaling)
            }
            Some(kind) => {
                return Err(bad(format!(
                    "RoPE of type {kind:?}; \"default\" and \"llama3\" are read"
                )))
            }
        };
        let attention_bias = j["attention_bias"].as_bool().unwrap_or(false);
        let sliding_window = if j["use_sliding_window"].as_bool() == Some(false) {
            None
        } else {
            j["sliding_window"].as_u64().map(|w| w as usize)
        };
        if sliding_window == Some(0) {
            return Err(bad("sliding_window is 0".into()));
        }
        let config = LlamaConfig {
            n_layer: count("num_hidden_layers")?,
            n_embd,
            n_head,
            n_kv_head,
            head_dim,
            n_ff: count("intermediate_size")?,
            vocab_size: count("vocab_size")?,
            context: count("max_position_embeddings")?,
            rope_theta,
            rope_pairs: RopePairs::Halves,
            rope_scaling,
            rope_factors: None,
            rms_eps: number("rms_norm_eps", 1e-6)?,
            sliding_window,
        };
        // Llama's and Mistral's configs default to an untied head, Qwen2's too
        let tied = j["tie_word_embeddings"].as_bool().unwrap_or(false);
        Ok((config, qkv_bias || attention_bias, attention_bias, tied))
    }
}

/// Tensors by name over one or more safetensors files.
struct Shards<'a> {
    files: Vec<SafeTensors<'a>>,
}

impl<'a> Shards<'a> {
    fn new(files: &[&'a [u8]]) -> Result<Shards<'a>> {
        let files = files
            .iter()
            .map(|b| SafeTensors::deserialize(b).map_err(|e| Error::Safetensors(e.to_string())))
            .collect::<Result<Vec<_>>>()?;
        Ok(Shards { files })
    }

    fn find(&self, name: &str) -> Option<TensorView<'a>> {
        self.files.iter().find_map(|f| f.tensor(name).ok())
    }

    /// Tensor `name` of `shape`, its bytes kept as they are (F32 as values, F16 and BF16 as
    /// 2-byte blocks).
    fn matrix(&self, name: &str, rows: usize, cols: usize) -> Result<QMatrix> {
        let view = self.view(name, &[rows, cols])?;
        let data = view.data();
        finite(name, view.dtype(), data)?;
        let storage = match view.dtype() {
            Dtype::F32 => Storage::F32(f32s(data)),
            Dtype::F16 => Storage::Blocks {
                ty: GgmlType::F16,
                bytes: data.to_vec(),
            },
            Dtype::BF16 => Storage::Blocks {
                ty: GgmlType::BF16,
                bytes: data.to_vec(),
            },
            other => return Err(dtype(name, other)),
        };
        Ok(QMatrix {
            rows,
            cols,
            storage,
        })
    }

    fn vector(&self, name: &str, len: usize) -> Result<Vec<f32>> {
        let view = self.view(name, &[len])?;
        let data = view.data();
        finite(name, view.dtype(), data)?;
        float_values(name, view.dtype(), data)
    }

    fn view(&self, name: &str, shape: &[usize]) -> Result<TensorView<'a>> {
        shaped(self.find(name), name, shape)
    }
}

fn f32s(data: &[u8]) -> Vec<f32> {
    data.chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// Refuses a tensor holding an infinity or a NaN (all exponent bits set), naming where.
fn finite(name: &str, dtype: Dtype, data: &[u8]) -> Result<()> {
    let bad_at = match dtype {
        Dtype::F32 => data.chunks_exact(4).position(|b| {
            u32::from_le_bytes([b[0], b[1], b[2], b[3]]) & 0x7F80_0000 == 0x7F80_0000
        }),
        Dtype::F16 => data
            .chunks_exact(2)
            .position(|b| u16::from_le_bytes([b[0], b[1]]) & 0x7C00 == 0x7C00),
        Dtype::BF16 => data
            .chunks_exact(2)
            .position(|b| u16::from_le_bytes([b[0], b[1]]) & 0x7F80 == 0x7F80),
        _ => None,
    };
    match bad_at {
        None => Ok(()),
        Some(index) => Err(Error::NonFinite {
            name: name.to_string(),
            index,
            value: match dtype {
                Dtype::F32 => f32s(&data[index * 4..index * 4 + 4])[0],
                Dtype::F16 => {
                    half::f16::from_le_bytes([data[2 * index], data[2 * index + 1]]).to_f32()
                }
                _ => half::bf16::from_le_bytes([data[2 * index], data[2 * index + 1]]).to_f32(),
            },
        }),
    }
}

fn dtype(name: &str, found: Dtype) -> Error {
    Error::Dtype {
        name: name.to_string(),
        found: format!("{found:?}"),
    }
}

impl LlamaModel {
    /// A Hugging Face Llama-family model from its `config.json` and safetensors files (one, or
    /// every shard).
    pub fn from_hf(config_json: &[u8], files: &[&[u8]]) -> Result<LlamaModel> {
        let (config, qkv_bias, o_bias, tied) = LlamaConfig::from_hf_json(config_json)?;
        let st = Shards::new(files)?;
        let c = &config;
        let (d, q_w, kv_w) = (c.n_embd, c.n_head * c.head_dim, c.n_kv_head * c.head_dim);
        let layers = (0..c.n_layer)
            .map(|l| {
                let n = |s: &str| format!("model.layers.{l}.{s}");
                let bias = |s: &str, len: usize, on: bool| -> Result<Option<Vec<f32>>> {
                    on.then(|| st.vector(&n(&format!("self_attn.{s}_proj.bias")), len))
                        .transpose()
                };
                Ok(LlamaLayer {
                    attn_norm: st.vector(&n("input_layernorm.weight"), d)?,
                    q: st.matrix(&n("self_attn.q_proj.weight"), q_w, d)?,
                    k: st.matrix(&n("self_attn.k_proj.weight"), kv_w, d)?,
                    v: st.matrix(&n("self_attn.v_proj.weight"), kv_w, d)?,
                    o: st.matrix(&n("self_attn.o_proj.weight"), d, q_w)?,
                    ffn_norm: st.vector(&n("post_attention_layernorm.weight"), d)?,
                    gate: st.matrix(&n("mlp.gate_proj.weight"), c.n_ff, d)?,
                    up: st.matrix(&n("mlp.up_proj.weight"), c.n_ff, d)?,
                    down: st.matrix(&n("mlp.down_proj.weight"), d, c.n_ff)?,
                    bias: Biases {
                        q: bias("q", q_w, qkv_bias)?,
                        k: bias("k", kv_w, qkv_bias)?,
                        v: bias("v", kv_w, qkv_bias)?,
                        o: bias("o", d, o_bias)?,
                    },
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let embed = st.matrix("model.embed_tokens.weight", c.vocab_size, d)?;
        let output = if tied {
            None
        } else {
            Some(st.matrix("lm_head.weight", c.vocab_size, d)?)
        };
        let norm = st.vector("model.norm.weight", d)?;
        Ok(LlamaModel {
            config,
            embed,
            layers,
            norm,
            output,
        })
    }
}

/// The shard files a `model.safetensors.index.json` lists (its `weight_map`'s values), each
/// once, in name order; a name that is not a plain file name (a path, a hidden file) is
/// refused.
pub fn shard_names(index_json: &[u8]) -> Result<Vec<String>> {
    let bad = |why: String| Error::Safetensors(format!("model.safetensors.index.json: {why}"));
    let index: Json = serde_json::from_slice(index_json).map_err(|e| bad(e.to_string()))?;
    let map = index["weight_map"]
        .as_object()
        .ok_or_else(|| bad("it has no weight_map".into()))?;
    let mut names = std::collections::BTreeSet::new();
    for (tensor, file) in map {
        let name = file
            .as_str()
            .ok_or_else(|| bad(format!("the file of {tensor} is not a name")))?;
        if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
            return Err(bad(format!(
                "the shard {name:?} is not a file of the folder"
            )));
        }
        names.insert(name.to_string());
    }
    if names.is_empty() {
        return Err(bad("its weight_map lists no file".into()));
    }
    Ok(names.into_iter().collect())
}

impl LlamaModel {
    /// The model of a Hugging Face folder: config.json and model.safetensors, or the shards
    /// its model.safetensors.index.json lists.
    pub fn load_hf_dir(dir: &Path) -> Result<LlamaModel> {
        let config = read_in(dir, "config.json")?;
        let files: Vec<Vec<u8>> = if dir.join("model.safetensors").is_file() {
            vec![read_in(dir, "model.safetensors")?]
        } else {
            let index = read_in(dir, "model.safetensors.index.json")?;
            shard_names(&index)?
                .iter()
                .map(|name| read_in(dir, name))
                .collect::<Result<_>>()?
        };
        let refs: Vec<&[u8]> = files.iter().map(Vec::as_slice).collect();
        LlamaModel::from_hf(&config, &refs)
    }
}

impl LlamaBundle {
    /// A Hugging Face folder: the model (`LlamaModel::load_hf_dir`) and tokenizer.json.
    pub fn load_hf_dir(dir: &Path) -> Result<LlamaBundle> {
        let model = LlamaModel::load_hf_dir(dir)?;
        let tokenizer = Tokenizer::from_bytes(&read_in(dir, "tokenizer.json")?)?;
        fits(&tokenizer, model.config.vocab_size)?;
        Ok(LlamaBundle { model, tokenizer })
    }
}

#[cfg(test)]
mod tests {
    use super::shard_names;

    #[test]
    fn an_index_names_each_shard_once_and_only_plain_file_names() {
        let index = br#"{"metadata": {}, "weight_map": {
            "b": "model-00002-of-00002.safetensors", "a": "model-00001-of-00002.safetensors",
            "c": "model-00001-of-00002.safetensors"}}"#;
        assert_eq!(
            shard_names(index).unwrap(),
            [
                "model-00001-of-00002.safetensors",
                "model-00002-of-00002.safetensors"
            ]
        );
        for (bad, says) in [
            (
                &br#"{"weight_map": {"a": "../secret.safetensors"}}"#[..],
                "is not a file",
            ),
            (
                br#"{"weight_map": {"a": "x\\y.safetensors"}}"#,
                "is not a file",
            ),
            (br#"{"weight_map": {"a": ".hidden"}}"#, "is not a file"),
            (br#"{"weight_map": {"a": 3}}"#, "not a name"),
            (br#"{"weight_map": {}}"#, "lists no file"),
            (br#"{"metadata": {}}"#, "no weight_map"),
            (b"not json", "index.json"),
        ] {
            let e = shard_names(bad).unwrap_err().to_string();
            assert!(e.contains(says), "{e} should say {says}");
        }
    }
}
