//! The training loop: AdamW, warm-up + cosine decay, gradient clipping, periodic validation,
//! checkpoint/resume. Deterministic for a given seed, with or without a resume in between.

use std::path::{Path, PathBuf};
use std::time::Instant;

use attnlab_model::Config;
use candle_core::{DType, Device, Result, Tensor};
use candle_nn::VarMap;
use serde::{Deserialize, Serialize};

use crate::adamw::{lr_at, AdamW};
use crate::data;
use crate::gpt::{self, Gpt};

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Hyper {
    pub seed: u64,
    pub steps: usize,
    pub batch: usize,
    pub seq: usize,
    pub lr: f64,
    pub lr_floor: f64,
    pub warmup: usize,
    pub weight_decay: f64,
    pub clip: f32,
    pub eval_every: usize,
    pub eval_windows: usize,
    pub ckpt_every: usize,
    /// Standard deviation of the token and position embeddings at init (GPT-2: 0.02).
    #[serde(default = "default_emb_std")]
    pub emb_std: f64,
    /// Standard deviation of the position embedding at init; `None`: `emb_std`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pos_std: Option<f64>,
    /// The position embedding starts as the original Transformer's sinusoid table (then learned
    /// like any weight) instead of N(0, `pos_std`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pos_sinusoid: bool,
    /// Whether weight decay shrinks the embeddings too (run 1 and 2: yes).
    #[serde(default = "default_true")]
    pub decay_embeddings: bool,
}

fn default_emb_std() -> f64 {
    0.02
}

fn default_true() -> bool {
    true
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Log {
    /// (step, train loss averaged since the last record)
    pub train: Vec<(usize, f32)>,
    /// (step, validation loss)
    pub valid: Vec<(usize, f32)>,
    pub tokens_seen: usize,
    pub seconds: f64,
    /// The learning-rate schedules the run went through: (first step, `--steps` of the cosine).
    /// One entry for a run made in one go; a run resumed with a longer `--steps` gets another,
    /// where its cosine restarts from a higher learning rate. Empty in checkpoints written
    /// before this was recorded.
    #[serde(default)]
    pub schedules: Vec<(usize, usize)>,
    /// The corpora the run trained on: (first step, the flags of `corpus/build_corpus.py` that
    /// made it, as `card::corpus_flags` writes them). One entry unless a resume changed the
    /// corpus; empty in checkpoints written before this was recorded.
    #[serde(default)]
    pub corpora: Vec<(usize, String)>,
}

impl Log {
    /// Records that training goes on from `step` under a cosine of `steps` steps (nothing when
    /// that is the schedule already in force).
    pub fn schedule(&mut self, step: usize, steps: usize) {
        record_change(&mut self.schedules, step, steps);
    }

    /// Records that training goes on from `step` on the corpus built with `flags` (nothing
    /// when that is the corpus already in use).
    pub fn corpus(&mut self, step: usize, flags: &str) {
        record_change(&mut self.corpora, step, flags.to_string());
    }
}

/// Appends (`step`, `value`) unless `value` is the one already in force.
fn record_change<T: PartialEq>(log: &mut Vec<(usize, T)>, step: usize, value: T) {
    if log.last().map(|e| &e.1) != Some(&value) {
        log.push((step, value));
    }
}

#[derive(Serialize, Deserialize)]
struct State {
    step: usize,
    log: Log,
}

pub struct Trainer {
    pub config: Config,
    pub hyper: Hyper,
    pub varmap: VarMap,
    pub gpt: Gpt,
    pub opt: AdamW,
    pub log: Log,
}

impl Trainer {
    pub fn new(config: &Config, hyper: Hyper) -> Result<Self> {
        let (varmap, gpt) = gpt::init(
            config,
            hyper.seed,
            hyper.emb_std,
            if hyper.pos_sinusoid {
                gpt::PosInit::Sinusoid
            } else {
                gpt::PosInit::Normal(hyper.pos_std.unwrap_or(hyper.emb_std))
            },
        )?;
        let named = varmap
            .data()
            .lock()
            .expect("varmap lock")
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let opt = AdamW::new(named, hyper.weight_decay, hyper.decay_embeddings)?;
        Ok(Trainer {
            config: config.clone(),
            hyper,
            varmap,
            gpt,
            opt,
            log: Log::default(),
        })
    }

    pub fn step(&self) -> usize {
        self.opt.step
    }

    /// Mean loss over fixed windows of `stream`.
    pub fn evaluate(&self, stream: &[u32]) -> Result<f32> {
        let windows = data::fixed_windows(stream, self.hyper.seq, self.hyper.eval_windows);
        let (mut sum, mut n) = (0f32, 0usize);
        for chunk in windows.chunks(self.hyper.batch.max(1)) {
            let flat: Vec<u32> = chunk.concat();
            let t = Tensor::from_vec(flat, (chunk.len(), self.hyper.seq + 1), &Device::Cpu)?;
            sum += self.gpt.loss(&t)?.to_scalar::<f32>()? * chunk.len() as f32;
            n += chunk.len();
        }
        Ok(sum / n.max(1) as f32)
    }

    /// Trains until `until` steps (at most `hyper.steps`), calling `report` after every step.
    pub fn train(
        &mut self,
        train: &[u32],
        valid: &[u32],
        until: usize,
        ckpt: Option<&Path>,
        mut report: impl FnMut(&Trainer, f32, f64, f32),
    ) -> Result<()> {
        let h = self.hyper.clone();
        let (mut acc, mut acc_n) = (0f32, 0usize);
        while self.step() < until.min(h.steps) {
            let start = Instant::now();
            let s = self.step();
            let batch = data::batch(train, h.batch, h.seq, h.seed, s)?;
            let loss = self.gpt.loss(&batch)?;
            let grads = loss.backward()?;
            let lr = lr_at(s, h.warmup, h.steps, h.lr, h.lr_floor);
            let norm = self.opt.step(&grads, lr, h.clip)?;
            let l = loss.to_scalar::<f32>()?;
            if !l.is_finite() {
                candle_core::bail!("training diverged at step {s}: loss {l}");
            }
            acc += l;
            acc_n += 1;
            self.log.tokens_seen += h.batch * h.seq;
            self.log.seconds += start.elapsed().as_secs_f64();
            let step = self.step();
            if step.is_multiple_of(h.eval_every) || step == h.steps {
                self.log.train.push((step, acc / acc_n as f32));
                (acc, acc_n) = (0.0, 0);
                let v = self.evaluate(valid)?;
                self.log.valid.push((step, v));
            }
            if let Some(dir) = ckpt {
                if step.is_multiple_of(h.ckpt_every) || step == h.steps {
                    self.save_checkpoint(dir)?;
                }
            }
            report(self, l, lr, norm);
        }
        Ok(())
    }

    pub fn save_checkpoint(&self, dir: &Path) -> Result<()> {
        std::fs::create_dir_all(dir)?;
        self.varmap.save(dir.join("model.safetensors"))?;
        // the shape beside the weights: a checkpoint folder (+ tokenizer.json) is a model
        // folder the CLI can measure mid-run
        std::fs::write(dir.join("config.json"), self.config.to_json())?;
        self.opt.save(&dir.join("adam.safetensors"))?;
        let state = State {
            step: self.step(),
            log: self.log.clone(),
        };
        std::fs::write(
            dir.join("state.json"),
            serde_json::to_string(&state).map_err(candle_core::Error::wrap)?,
        )?;
        Ok(())
    }

    /// Restores a checkpoint written by `save_checkpoint`. Returns false if there is none.
    pub fn load_checkpoint(&mut self, dir: &Path) -> Result<bool> {
        let state_path = dir.join("state.json");
        if !state_path.exists() {
            return Ok(false);
        }
        let state: State = serde_json::from_slice(&std::fs::read(&state_path)?)
            .map_err(candle_core::Error::wrap)?;
        self.varmap.load(dir.join("model.safetensors"))?;
        self.opt.load(&dir.join("adam.safetensors"), state.step)?;
        self.log = state.log;
        Ok(true)
    }

    /// The weights as an engine `Model` (f32).
    pub fn to_model(&self) -> std::result::Result<attnlab_model::Model, String> {
        let tmp: PathBuf =
            std::env::temp_dir().join(format!("attnlab-train-{}.safetensors", std::process::id()));
        self.varmap.save(&tmp).map_err(|e| e.to_string())?;
        let bytes = std::fs::read(&tmp).map_err(|e| e.to_string())?;
        std::fs::remove_file(&tmp).ok();
        attnlab_model::Model::from_safetensors(self.config.clone(), &bytes)
            .map_err(|e| e.to_string())
    }
}

/// Loads a saved engine model into a candle `Gpt` (for parity checks).
pub fn gpt_from_file(config: &Config, path: &Path) -> Result<Gpt> {
    let vb = unsafe {
        candle_nn::VarBuilder::from_mmaped_safetensors(&[path], DType::F32, &Device::Cpu)?
    };
    Gpt::new(config, vb)
}

#[cfg(test)]
mod tests {
    use super::Log;

    #[test]
    fn a_corpus_is_recorded_once_and_another_one_again() {
        let mut log = Log::default();
        log.corpus(0, " --recall-weight 8");
        log.corpus(1000, " --recall-weight 8"); // resumed on the same corpus
        log.corpus(6000, " --recall-weight 8 --drill-share 0.2"); // on another one
        assert_eq!(
            log.corpora,
            [
                (0, " --recall-weight 8".to_string()),
                (6000, " --recall-weight 8 --drill-share 0.2".to_string())
            ]
        );
    }

    #[test]
    fn a_schedule_is_recorded_once_and_a_longer_one_again() {
        let mut log = Log::default();
        log.schedule(0, 4000);
        log.schedule(1000, 4000); // resumed with the same --steps
        log.schedule(4000, 6000); // resumed with a longer one
        log.schedule(5000, 6000);
        assert_eq!(log.schedules, vec![(0, 4000), (4000, 6000)]);
        // a checkpoint written before schedules were recorded still loads
        let old: Log =
            serde_json::from_str(r#"{"train":[],"valid":[],"tokens_seen":0,"seconds":0.0}"#)
                .unwrap();
        assert!(old.schedules.is_empty());
    }
}
