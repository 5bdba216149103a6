//! The bundled model in candle, for training. Same architecture and tensor names as the
//! engine reads (GPT-2 layout, Conv1D weights (in, out)), so a `VarMap` saves straight into
//! a file `attnlab_model::Model` loads.
//!
//! candle 0.11 pitfalls avoided: `candle_nn::LayerNorm` and `ops::softmax_last_dim` have no
//! backward pass, so this uses `ops::layer_norm_slow` and `ops::softmax`.

use attnlab_model::{Activation, Config, LnPlacement};
use candle_core::{DType, Device, Result, Tensor, D};
use candle_nn::{ops, Init, VarBuilder};

struct Block {
    ln_1: (Tensor, Tensor),
    c_attn: (Tensor, Tensor),
    c_proj: (Tensor, Tensor),
    ln_2: (Tensor, Tensor),
    fc: (Tensor, Tensor),
    fc_proj: (Tensor, Tensor),
}

pub struct Gpt {
    pub config: Config,
    wte: Tensor,
    wpe: Tensor,
    blocks: Vec<Block>,
    ln_f: Option<(Tensor, Tensor)>,
}

fn ln_params(vb: VarBuilder, d: usize) -> Result<(Tensor, Tensor)> {
    Ok((
        vb.get_with_hints(d, "weight", Init::Const(1.0))?,
        vb.get_with_hints(d, "bias", Init::Const(0.0))?,
    ))
}

fn linear_params(vb: VarBuilder, i: usize, o: usize, std: f64) -> Result<(Tensor, Tensor)> {
    Ok((
        vb.get_with_hints(
            (i, o),
            "weight",
            Init::Randn {
                mean: 0.0,
                stdev: std,
            },
        )?,
        vb.get_with_hints(o, "bias", Init::Const(0.0))?,
    ))
}

/// `x · w + b` for x (B, T, in).
fn linear(x: &Tensor, (w, b): &(Tensor, Tensor)) -> Result<Tensor> {
    x.broadcast_matmul(w)?.broadcast_add(b)
}

fn layer_norm(x: &Tensor, (g, b): &(Tensor, Tensor), eps: f32) -> Result<Tensor> {
    ops::layer_norm_slow(x, g, b, eps)
}

impl Gpt {
    /// Creates (or, from a loaded VarBuilder, reads) the parameters. Initialisation as GPT-2:
    /// N(0, 0.02), residual projections scaled by 1/√(2·n_layer).
    pub fn new(config: &Config, vb: VarBuilder) -> Result<Self> {
        let (d, f) = (config.n_embd, config.d_ff());
        let std = 0.02;
        let resid_std = std / (2.0 * config.n_layer as f64).sqrt();
        let emb = Init::Randn {
            mean: 0.0,
            stdev: std,
        };
        let wte = vb.get_with_hints((config.vocab_size, d), "wte.weight", emb)?;
        let wpe = vb.get_with_hints((config.n_positions, d), "wpe.weight", emb)?;
        let mut blocks = Vec::new();
        for i in 0..config.n_layer {
            let vb = vb.pp(format!("h.{i}"));
            blocks.push(Block {
                ln_1: ln_params(vb.pp("ln_1"), d)?,
                c_attn: linear_params(vb.pp("attn.c_attn"), d, 3 * d, std)?,
                c_proj: linear_params(vb.pp("attn.c_proj"), d, d, resid_std)?,
                ln_2: ln_params(vb.pp("ln_2"), d)?,
                fc: linear_params(vb.pp("mlp.c_fc"), d, f, std)?,
                fc_proj: linear_params(vb.pp("mlp.c_proj"), f, d, resid_std)?,
            });
        }
        let ln_f = match config.ln_placement {
            LnPlacement::Pre => Some(ln_params(vb.pp("ln_f"), d)?),
            LnPlacement::Post => None,
        };
        Ok(Gpt {
            config: config.clone(),
            wte,
            wpe,
            blocks,
            ln_f,
        })
    }

    /// Logits (B, T, V) for token ids (B, T).
    pub fn forward(&self, ids: &Tensor) -> Result<Tensor> {
        let c = &self.config;
        let (b, t) = ids.dims2()?;
        let (d, h) = (c.n_embd, c.n_head);
        let dk = d / h;
        let eps = c.layer_norm_epsilon;
        let post = c.ln_placement == LnPlacement::Post;
        let tok = self
            .wte
            .index_select(&ids.flatten_all()?, 0)?
            .reshape((b, t, d))?;
        // × √d_model with scale_embedding (the original Transformer); the tied head below
        // reads wte unscaled, as there
        let tok = match c.embedding_scale() {
            1.0 => tok,
            s => (tok * f64::from(s))?,
        };
        let mut x = tok.broadcast_add(&self.wpe.narrow(0, 0, t)?)?; // (B, T, D)
        let mask: Vec<f32> = (0..t * t)
            .map(|e| if e % t > e / t { -1e9 } else { 0.0 })
            .collect();
        let mask = Tensor::from_vec(mask, (t, t), ids.device())?;
        for blk in &self.blocks {
            let a_in = if post {
                x.clone()
            } else {
                layer_norm(&x, &blk.ln_1, eps)?
            };
            let qkv = linear(&a_in, &blk.c_attn)?; // (B, T, 3D)
            let split = |k: usize| -> Result<Tensor> {
                qkv.narrow(2, k * d, d)?
                    .reshape((b, t, h, dk))?
                    .transpose(1, 2)?
                    .contiguous()
            };
            let (q, k, v) = (split(0)?, split(1)?, split(2)?); // (B, H, T, Dk)
            let att = (q.matmul(&k.t()?.contiguous()?)? * (1.0 / (dk as f64).sqrt()))?; // (B, H, T, T)
            let att = ops::softmax(&att.broadcast_add(&mask)?, D::Minus1)?;
            let y = att.matmul(&v)?.transpose(1, 2)?.reshape((b, t, d))?; // (B, T, D)
            let r1 = (&x + linear(&y, &blk.c_proj)?)?;
            let s1 = if post {
                layer_norm(&r1, &blk.ln_1, eps)?
            } else {
                r1.clone()
            };
            let f_in = if post {
                s1.clone()
            } else {
                layer_norm(&r1, &blk.ln_2, eps)?
            };
            let hid = linear(&f_in, &blk.fc)?;
            let hid = match c.activation_function {
                Activation::GeluTanh => hid.gelu()?,
                Activation::GeluErf => hid.gelu_erf()?,
            };
            let r2 = (&s1 + linear(&hid, &blk.fc_proj)?)?;
            x = if post {
                layer_norm(&r2, &blk.ln_2, eps)?
            } else {
                r2
            };
        }
        if let Some(lnf) = &self.ln_f {
            x = layer_norm(&x, lnf, eps)?;
        }
        x.broadcast_matmul(&self.wte.t()?) // tied lm head: (B, T, V)
    }

    /// Mean next-token cross-entropy for windows (B, T+1).
    pub fn loss(&self, windows: &Tensor) -> Result<Tensor> {
        let t = windows.dim(1)? - 1;
        let inputs = windows.narrow(1, 0, t)?;
        let targets = windows.narrow(1, 1, t)?;
        let logits = self.forward(&inputs)?;
        let v = logits.dim(2)?;
        candle_nn::loss::cross_entropy(&logits.reshape(((), v))?, &targets.flatten_all()?)
    }
}

/// Whether the parameter `name` is one of the embeddings (token `wte`, position `wpe`).
pub fn is_embedding(name: &str) -> bool {
    name.starts_with("wte") || name.starts_with("wpe")
}

/// How the position embedding starts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PosInit {
    /// N(0, std), as GPT-2 (0.02)
    Normal(f64),
    /// The original Transformer's table (Vaswani et al. 2017, §3.5): position p, dimension
    /// 2i: sin(p / 10000^(2i/d)), 2i + 1: cos of the same. Position p − 1's row is a fixed
    /// rotation of p's, so a head can match a query to the previous key with one linear map.
    Sinusoid,
}

/// The sinusoid position table, row-major (positions × d).
pub fn sinusoid_table(positions: usize, d: usize) -> Vec<f32> {
    let mut t = vec![0f32; positions * d];
    for p in 0..positions {
        for j in 0..d {
            let freq = 10000f64.powf(-((j / 2 * 2) as f64) / d as f64);
            let a = p as f64 * freq;
            t[p * d + j] = if j % 2 == 0 { a.sin() } else { a.cos() } as f32;
        }
    }
    t
}

/// A fresh model on the CPU with its VarMap. candle's CPU generator cannot be seeded, so
/// every parameter is (re)drawn here from a ChaCha stream seeded by `seed` and its name:
/// GPT-2's N(0, 0.02), residual projections N(0, 0.02/√(2·n_layer)), LayerNorm gains 1,
/// biases 0; the token embedding N(0, `emb_std`) and the position embedding as `pos` says
/// (GPT-2: both N(0, 0.02)).
pub fn init(
    config: &Config,
    seed: u64,
    emb_std: f64,
    pos: PosInit,
) -> Result<(candle_nn::VarMap, Gpt)> {
    use rand::{Rng, SeedableRng};
    let dev = Device::Cpu;
    let vm = candle_nn::VarMap::new();
    let vb = VarBuilder::from_varmap(&vm, DType::F32, &dev);
    let gpt = Gpt::new(config, vb)?;
    let resid_std = 0.02 / (2.0 * config.n_layer as f64).sqrt();
    let data = vm.data().lock().expect("varmap lock");
    let mut names: Vec<&String> = data.keys().collect();
    names.sort();
    for (k, name) in names.into_iter().enumerate() {
        let var = &data[name];
        let n = var.elem_count();
        let values: Vec<f32> = if let (true, PosInit::Sinusoid) = (name.starts_with("wpe"), pos) {
            sinusoid_table(config.n_positions, config.n_embd)
        } else if name.ends_with("bias") {
            vec![0.0; n]
        } else if name.contains("ln_") {
            vec![1.0; n]
        } else {
            let std = if name.ends_with("c_proj.weight") {
                resid_std
            } else if let (true, PosInit::Normal(std)) = (name.starts_with("wpe"), pos) {
                std
            } else if is_embedding(name) {
                emb_std
            } else {
                0.02
            };
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ ((k as u64 + 1) << 32));
            (0..n)
                .map(|_| {
                    // Box–Muller
                    let (u1, u2): (f64, f64) = (rng.random_range(f64::EPSILON..1.0), rng.random());
                    ((-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos() * std) as f32
                })
                .collect()
        };
        var.set(&Tensor::from_vec(values, var.shape(), &dev)?)?;
    }
    drop(data);
    Ok((vm, gpt))
}
