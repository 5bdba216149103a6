//! AdamW with decoupled weight decay and global-norm gradient clipping, whose state can be
//! saved and restored exactly (for checkpoint/resume).

use std::collections::HashMap;
use std::path::Path;

use candle_core::{backprop::GradStore, Device, Result, Tensor, Var};

pub struct AdamW {
    vars: Vec<(String, Var, bool)>, // name, variable, decays?
    m: Vec<Tensor>,
    v: Vec<Tensor>,
    pub step: usize,
    pub beta1: f64,
    pub beta2: f64,
    pub eps: f64,
    pub weight_decay: f64,
}

impl AdamW {
    /// The names of the variables weight decay applies to.
    pub fn decays(&self) -> Vec<String> {
        self.vars
            .iter()
            .filter(|v| v.2)
            .map(|v| v.0.clone())
            .collect()
    }

    /// Weight decay applies to matrices (rank ≥ 2), not to biases or LayerNorm parameters,
    /// and to the embeddings (`wte`, `wpe`) only when `decay_embeddings`.
    pub fn new(
        mut named: Vec<(String, Var)>,
        weight_decay: f64,
        decay_embeddings: bool,
    ) -> Result<Self> {
        named.sort_by(|a, b| a.0.cmp(&b.0));
        let m = named
            .iter()
            .map(|(_, v)| v.zeros_like())
            .collect::<Result<Vec<_>>>()?;
        let v = named
            .iter()
            .map(|(_, v)| v.zeros_like())
            .collect::<Result<Vec<_>>>()?;
        let vars = named
            .into_iter()
            .map(|(n, v)| {
                let decay = v.rank() >= 2 && (decay_embeddings || !crate::gpt::is_embedding(&n));
                (n, v, decay)
            })
            .collect();
        Ok(AdamW {
            vars,
            m,
            v,
            step: 0,
            beta1: 0.9,
            beta2: 0.95,
            eps: 1e-8,
            weight_decay,
        })
    }

    /// Global L2 norm of the gradients.
    pub fn grad_norm(&self, grads: &GradStore) -> Result<f32> {
        let mut sum = 0f32;
        for (_, var, _) in &self.vars {
            if let Some(g) = grads.get(var) {
                sum += g.detach().sqr()?.sum_all()?.to_scalar::<f32>()?;
            }
        }
        Ok(sum.sqrt())
    }

    /// One update at learning rate `lr`, with gradients scaled so their global norm is at
    /// most `clip`. Returns the norm before clipping.
    pub fn step(&mut self, grads: &GradStore, lr: f64, clip: f32) -> Result<f32> {
        let norm = self.grad_norm(grads)?;
        let scale = if norm > clip {
            (clip / norm) as f64
        } else {
            1.0
        };
        self.step += 1;
        let (b1, b2) = (self.beta1, self.beta2);
        let (c1, c2) = (
            1.0 - b1.powi(self.step as i32),
            1.0 - b2.powi(self.step as i32),
        );
        for (i, (_, var, decay)) in self.vars.iter().enumerate() {
            let Some(g) = grads.get(var) else { continue };
            // detached: the optimizer state must not keep the autograd graph alive
            let g = (g.detach() * scale)?;
            self.m[i] = ((&self.m[i] * b1)? + (&g * (1.0 - b1))?)?;
            self.v[i] = ((&self.v[i] * b2)? + (g.sqr()? * (1.0 - b2))?)?;
            let mhat = (&self.m[i] / c1)?;
            let vhat = (&self.v[i] / c2)?;
            let theta = var.as_tensor().detach();
            let mut update = (mhat / (vhat.sqrt()? + self.eps)?)?;
            if *decay {
                update = (update + (&theta * self.weight_decay)?)?;
            }
            var.set(&(theta - (update * lr)?)?)?;
        }
        Ok(norm)
    }

    /// Saves m and v as safetensors.
    pub fn save(&self, path: &Path) -> Result<()> {
        let mut map: HashMap<String, Tensor> = HashMap::new();
        for (i, (name, _, _)) in self.vars.iter().enumerate() {
            map.insert(format!("m.{name}"), self.m[i].clone());
            map.insert(format!("v.{name}"), self.v[i].clone());
        }
        candle_core::safetensors::save(&map, path)
    }

    /// Restores m and v saved by `save`, and the step count.
    pub fn load(&mut self, path: &Path, step: usize) -> Result<()> {
        let map = candle_core::safetensors::load(path, &Device::Cpu)?;
        for (i, (name, _, _)) in self.vars.iter().enumerate() {
            let get = |k: String| {
                map.get(&k).cloned().ok_or_else(|| {
                    candle_core::Error::Msg(format!("{k} missing from {}", path.display()))
                })
            };
            self.m[i] = get(format!("m.{name}"))?;
            self.v[i] = get(format!("v.{name}"))?;
        }
        self.step = step;
        Ok(())
    }
}

/// Linear warm-up to `peak`, then cosine decay to `peak · floor` at `total`.
pub fn lr_at(step: usize, warmup: usize, total: usize, peak: f64, floor: f64) -> f64 {
    if step < warmup {
        return peak * (step + 1) as f64 / warmup as f64;
    }
    let p = ((step - warmup) as f64 / (total - warmup).max(1) as f64).min(1.0);
    peak * (floor + (1.0 - floor) * 0.5 * (1.0 + (std::f64::consts::PI * p).cos()))
}
