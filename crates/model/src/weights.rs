//! Weights in GPT-2's safetensors layout, checked against the config on load.
//!
//! GPT-2 stores its projections as `Conv1D`: a weight of shape (in, out) used as `x · W + b`.
//! Names may carry a `transformer.` prefix (Hugging Face `GPT2LMHeadModel` exports) or not
//! (the original checkpoints). The lm head is tied to `wte`.

use safetensors::{tensor::TensorView, Dtype, SafeTensors};

use crate::config::{Config, LnPlacement};
use crate::error::{Error, Result};

/// One Transformer block. Shapes in GPT-2's (in, out) orientation.
#[derive(Clone, Debug, PartialEq)]
pub struct LayerWeights {
    pub ln_1_g: Vec<f32>,    // (D)
    pub ln_1_b: Vec<f32>,    // (D)
    pub c_attn_w: Vec<f32>,  // (D, 3D): columns are [Q | K | V], each split into heads
    pub c_attn_b: Vec<f32>,  // (3D)
    pub c_proj_w: Vec<f32>,  // (D, D): W_O
    pub c_proj_b: Vec<f32>,  // (D)
    pub ln_2_g: Vec<f32>,    // (D)
    pub ln_2_b: Vec<f32>,    // (D)
    pub fc_w: Vec<f32>,      // (D, F)
    pub fc_b: Vec<f32>,      // (F)
    pub fc_proj_w: Vec<f32>, // (F, D)
    pub fc_proj_b: Vec<f32>, // (D)
}

/// All weights of a model.
#[derive(Clone, Debug, PartialEq)]
pub struct Weights {
    pub wte: Vec<f32>, // (V, D), also the (tied) lm head
    pub wpe: Vec<f32>, // (P, D)
    pub layers: Vec<LayerWeights>,
    /// Final LayerNorm (gain, bias), each (D). Required for pre-LN, optional for post-LN.
    pub ln_f: Option<(Vec<f32>, Vec<f32>)>,
}

/// A config with its weights: everything the forward pass needs.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    pub config: Config,
    pub weights: Weights,
}

/// The tensor names and shapes a config asks for, in a fixed order
/// (the order `Model::to_safetensors` writes them).
pub fn tensor_specs(config: &Config, with_ln_f: bool) -> Vec<(String, Vec<usize>)> {
    let (d, f) = (config.n_embd, config.d_ff());
    let mut specs = vec![
        ("wte.weight".to_string(), vec![config.vocab_size, d]),
        ("wpe.weight".to_string(), vec![config.n_positions, d]),
    ];
    for i in 0..config.n_layer {
        for (name, shape) in [
            ("ln_1.weight", vec![d]),
            ("ln_1.bias", vec![d]),
            ("attn.c_attn.weight", vec![d, 3 * d]),
            ("attn.c_attn.bias", vec![3 * d]),
            ("attn.c_proj.weight", vec![d, d]),
            ("attn.c_proj.bias", vec![d]),
            ("ln_2.weight", vec![d]),
            ("ln_2.bias", vec![d]),
            ("mlp.c_fc.weight", vec![d, f]),
            ("mlp.c_fc.bias", vec![f]),
            ("mlp.c_proj.weight", vec![f, d]),
            ("mlp.c_proj.bias", vec![d]),
        ] {
            specs.push((format!("h.{i}.{name}"), shape));
        }
    }
    if with_ln_f {
        specs.push(("ln_f.weight".to_string(), vec![d]));
        specs.push(("ln_f.bias".to_string(), vec![d]));
    }
    specs
}

/// Tensor `name` as found (`None`: missing), checked to have `shape`.
pub(crate) fn shaped<'a>(
    view: Option<TensorView<'a>>,
    name: &str,
    shape: &[usize],
) -> Result<TensorView<'a>> {
    let view = view.ok_or_else(|| Error::MissingTensor {
        name: name.to_string(),
    })?;
    if view.shape() != shape {
        return Err(Error::Shape {
            name: name.to_string(),
            expected: shape.to_vec(),
            found: view.shape().to_vec(),
        });
    }
    Ok(view)
}

/// A safetensors tensor's values as f32, for the float types read (F32, F16, BF16).
pub(crate) fn float_values(name: &str, dtype: Dtype, data: &[u8]) -> Result<Vec<f32>> {
    Ok(match dtype {
        Dtype::F32 => data
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect(),
        Dtype::F16 => data
            .chunks_exact(2)
            .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32())
            .collect(),
        Dtype::BF16 => data
            .chunks_exact(2)
            .map(|b| half::bf16::from_le_bytes([b[0], b[1]]).to_f32())
            .collect(),
        other => {
            return Err(Error::Dtype {
                name: name.to_string(),
                found: format!("{other:?}"),
            })
        }
    })
}

struct Reader<'a> {
    st: SafeTensors<'a>,
}

impl<'a> Reader<'a> {
    fn find(&self, name: &str) -> Option<TensorView<'a>> {
        self.st
            .tensor(name)
            .or_else(|_| self.st.tensor(&format!("transformer.{name}")))
            .ok()
    }

    fn has(&self, name: &str) -> bool {
        self.find(name).is_some()
    }

    fn read(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>> {
        let view = shaped(self.find(name), name, shape)?;
        let values = float_values(name, view.dtype(), view.data())?;
        if let Some((index, &value)) = values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(Error::NonFinite {
                name: name.to_string(),
                index,
                value,
            });
        }
        Ok(values)
    }
}

/// A model being read from safetensors bytes one tensor at a time, so a page can let the
/// browser breathe (and show progress) between tensors. Every tensor is checked as it is read.
pub struct Loading<'a> {
    config: Config,
    reader: Reader<'a>,
    has_ln_f: bool,
    specs: Vec<(String, Vec<usize>)>,
    values: Vec<Vec<f32>>,
}

impl<'a> Loading<'a> {
    /// Checks the config and the file's header; reads no tensor yet.
    pub fn new(config: Config, bytes: &'a [u8]) -> Result<Self> {
        config.validate()?;
        let st = SafeTensors::deserialize(bytes).map_err(|e| Error::Safetensors(e.to_string()))?;
        let reader = Reader { st };
        let has_ln_f = reader.has("ln_f.weight") || reader.has("ln_f.bias");
        if config.ln_placement == LnPlacement::Pre && !has_ln_f {
            return Err(Error::MissingTensor {
                name: "ln_f.weight".into(),
            });
        }
        let specs = tensor_specs(&config, has_ln_f);
        Ok(Loading {
            values: Vec::with_capacity(specs.len()),
            config,
            reader,
            has_ln_f,
            specs,
        })
    }

    /// (tensors read, tensors in all).
    pub fn progress(&self) -> (usize, usize) {
        (self.values.len(), self.specs.len())
    }

    /// Reads and checks the next tensor; `Ok(true)` once every tensor is read.
    pub fn step(&mut self) -> Result<bool> {
        if let Some((name, shape)) = self.specs.get(self.values.len()) {
            let v = self.reader.read(name, shape)?;
            self.values.push(v);
        }
        Ok(self.values.len() == self.specs.len())
    }

    /// Reads what is left and assembles the model.
    pub fn finish(mut self) -> Result<Model> {
        while !self.step()? {}
        Ok(Model::from_values(self.config, self.values, self.has_ln_f))
    }
}

impl Model {
    /// Loads weights from the bytes of a `.safetensors` file, checking every tensor's
    /// presence, dtype, shape and finiteness against `config`.
    pub fn from_safetensors(config: Config, bytes: &[u8]) -> Result<Self> {
        Loading::new(config, bytes)?.finish()
    }

    /// Assembles a model from one value vector per tensor, in `tensor_specs` order
    /// (shapes already checked by the caller).
    pub fn from_values(config: Config, values: Vec<Vec<f32>>, has_ln_f: bool) -> Self {
        let mut it = values.into_iter();
        let mut next = || it.next().expect("one value per tensor spec");
        let wte = next();
        let wpe = next();
        let layers = (0..config.n_layer)
            .map(|_| LayerWeights {
                ln_1_g: next(),
                ln_1_b: next(),
                c_attn_w: next(),
                c_attn_b: next(),
                c_proj_w: next(),
                c_proj_b: next(),
                ln_2_g: next(),
                ln_2_b: next(),
                fc_w: next(),
                fc_b: next(),
                fc_proj_w: next(),
                fc_proj_b: next(),
            })
            .collect();
        let ln_f = has_ln_f.then(|| (next(), next()));
        Model {
            config,
            weights: Weights {
                wte,
                wpe,
                layers,
                ln_f,
            },
        }
    }

    /// Loads `config.json` + `model.safetensors` bytes.
    pub fn from_bytes(config_json: &[u8], safetensors: &[u8]) -> Result<Self> {
        Self::from_safetensors(Config::from_json(config_json)?, safetensors)
    }

    /// Every tensor in `tensor_specs` order, as flat slices.
    pub fn tensors(&self) -> Vec<(String, Vec<usize>, &[f32])> {
        let w = &self.weights;
        let mut flat: Vec<&[f32]> = vec![&w.wte, &w.wpe];
        for l in &w.layers {
            flat.extend([
                &l.ln_1_g[..],
                &l.ln_1_b,
                &l.c_attn_w,
                &l.c_attn_b,
                &l.c_proj_w,
                &l.c_proj_b,
                &l.ln_2_g,
                &l.ln_2_b,
                &l.fc_w,
                &l.fc_b,
                &l.fc_proj_w,
                &l.fc_proj_b,
            ]);
        }
        if let Some((g, b)) = &w.ln_f {
            flat.extend([&g[..], &b[..]]);
        }
        tensor_specs(&self.config, w.ln_f.is_some())
            .into_iter()
            .zip(flat)
            .map(|((n, s), v)| (n, s, v))
            .collect()
    }

    /// Serialises the weights as a GPT-2-layout safetensors file, in f32 or f16.
    pub fn to_safetensors(&self, f16: bool) -> Vec<u8> {
        let tensors = self.tensors();
        let encoded: Vec<(String, Vec<usize>, Vec<u8>)> = tensors
            .into_iter()
            .map(|(name, shape, v)| {
                let bytes = if f16 {
                    v.iter()
                        .flat_map(|x| half::f16::from_f32(*x).to_le_bytes())
                        .collect()
                } else {
                    v.iter().flat_map(|x| x.to_le_bytes()).collect()
                };
                (name, shape, bytes)
            })
            .collect();
        let dtype = if f16 { Dtype::F16 } else { Dtype::F32 };
        let views: Vec<(String, TensorView<'_>)> = encoded
            .iter()
            .map(|(n, s, b)| {
                (
                    n.clone(),
                    TensorView::new(dtype, s.clone(), b).expect("shape matches data"),
                )
            })
            .collect();
        safetensors::serialize(views, None).expect("in-memory serialisation cannot fail")
    }
}
