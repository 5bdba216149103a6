//! The engine as the page uses it (`PageEngine`): it tokenizes on the page (the tokens are
//! shown) and runs the model on the engine; the page's requests (`Job`) and what they give
//! (`Outcome`).

use std::cell::RefCell;
use std::rc::Rc;

use attnlab_model::roles::{self, Probe};
use attnlab_model::{AttentionOptions, Tokenizer};
use yew::prelude::*;

use super::gpu::Gpu;
use super::worker_client::CpuWorker;
use super::{Engine, Note};
use crate::dom::{self};
use crate::runner::Run;
use crate::state::{LensResult, ProbeResult, Shown, Side};

/// A request of the page.
pub enum Job {
    /// A text and the options to run it with; `input_at` is `performance.now()` of the input
    /// event, for the latency measurement.
    Text {
        text: String,
        /// Tokens appended to `text` by a generation, kept exactly (not re-tokenized).
        appended: Vec<u32>,
        /// The second text, when comparing (run after the first, same options).
        b: Option<String>,
        opts: AttentionOptions,
        input_at: f64,
    },
    /// The head-role probe of a newly loaded model (run in the background, default options).
    Probe(Probe),
    /// The whole trace of a lite result, for an export: `done` hears of it (a background
    /// job: it waits for any keystroke, and is never dropped).
    Full {
        ids: Vec<u32>,
        opts: AttentionOptions,
        done: Callback<Result<Rc<attnlab_model::Trace>, String>>,
    },
    /// The logit lens of the result `of` at `position`: its residual rows through the output
    /// head (a follow-up job).
    Lens {
        of: u64,
        position: usize,
        rows: Vec<f32>,
    },
}

pub enum Outcome {
    Shown(Shown),
    /// No result for `text`: why ("" for an empty text).
    Error {
        text: String,
        error: String,
    },
    Probe(Result<ProbeResult, String>),
    Lens(LensResult),
    /// Handed over by the job itself (the whole trace of an export).
    Delivered,
}

/// Tokenizes on the page (the tokens are shown), runs the model on the engine.
pub struct PageEngine {
    pub tokenizer: Tokenizer,
    pub engine: Engine<Gpu, CpuWorker>,
    /// Notes of results that came too late to be shown, for the next one.
    carried: RefCell<Vec<Note>>,
}

impl PageEngine {
    pub fn new(tokenizer: Tokenizer, engine: Engine<Gpu, CpuWorker>) -> PageEngine {
        PageEngine {
            tokenizer,
            engine,
            carried: RefCell::new(Vec::new()),
        }
    }

    /// The text a vocabulary entry stands for, if it is whole characters (a token holding
    /// part of a character cannot be typed).
    pub fn token_text(&self, id: u32) -> Option<String> {
        let piece = self.tokenizer.inner().id_to_token(id)?;
        String::from_utf8(self.tokenizer.piece_bytes(&piece)).ok()
    }

    /// The second text of a comparison.
    async fn run_side(&self, text: &str, opts: &AttentionOptions) -> Side {
        let run = async {
            let tokens = self.tokenizer.encode(text).map_err(|e| e.to_string())?;
            if tokens.is_empty() {
                return Err(String::new());
            }
            let ids: Vec<u32> = tokens.iter().map(|t| t.id).collect();
            let reply = self.engine.forward(&ids, opts).await?;
            self.carried.borrow_mut().extend(
                reply
                    .notes
                    .into_iter()
                    .filter(|n| !matches!(n, Note::TooLong(_))),
            );
            Ok((Rc::new(tokens), reply.trace))
        };
        Side {
            text: text.to_string(),
            run: run.await,
        }
    }

    async fn run_text(
        &self,
        text: &str,
        appended: &[u32],
        b: Option<&str>,
        opts: &AttentionOptions,
        input_at: f64,
    ) -> Outcome {
        let error = |error: String| Outcome::Error {
            text: text.to_string(),
            error,
        };
        let base = text;
        let (text, tokens) = match self.tokenizer.continue_with(text, appended) {
            Ok(t) => t,
            Err(e) => return error(e.to_string()),
        };
        let text = text.as_str();
        if tokens.is_empty() {
            return error(String::new());
        }
        let ids: Vec<u32> = tokens.iter().map(|t| t.id).collect();
        let reply = match self.engine.forward(&ids, opts).await {
            Ok(r) => r,
            Err(e) => return error(e),
        };
        let b = match b {
            Some(b) => Some(Rc::new(self.run_side(b, opts).await)),
            None => None,
        };
        let mut notes = std::mem::take(&mut *self.carried.borrow_mut());
        notes.extend(reply.notes);
        let cpu_because = notes.iter().rev().find_map(|n| match n {
            Note::TooLong(e) if !reply.ran_on_gpu => Some(e.clone()),
            _ => None,
        });
        Outcome::Shown(Shown {
            generation: 0,
            text: text.to_string(),
            tokens: Rc::new(tokens),
            roles: Rc::new(roles::text_scores(&reply.trace)),
            b,
            trace: reply.trace,
            cpu_because,
            baseline: reply.baseline,
            forward_ms: reply.forward_ms,
            engine_ms: reply.engine_ms,
            incremental: reply.incremental,
            ran_on_gpu: reply.ran_on_gpu,
            backend: reply.backend,
            notes,
            input_at,
            result_at: 0.0,
            generated: (!appended.is_empty())
                .then(|| Rc::new((base.to_string(), appended.to_vec()))),
            complete: reply.complete,
        })
    }

    async fn run_lens(&self, rows: &[f32]) -> Result<Rc<Vec<f32>>, String> {
        let (probs, notes) = self.engine.lens(rows).await?;
        self.carried.borrow_mut().extend(notes);
        Ok(Rc::new(probs))
    }

    async fn run_probe(&self, probe: &Probe) -> Result<ProbeResult, String> {
        if probe.half == 0 {
            return Err(probe.clamped.clone().unwrap_or_default());
        }
        let reply = self
            .engine
            .forward(&probe.ids, &AttentionOptions::default())
            .await?;
        // notices (a GPU failure on the way) go with the next shown result
        self.carried.borrow_mut().extend(
            reply
                .notes
                .into_iter()
                .filter(|n| !matches!(n, Note::TooLong(_))),
        );
        Ok(ProbeResult {
            scores: probe.scores(&reply.trace),
            half: probe.half,
            seed: probe.seed,
            clamped: probe.clamped.clone(),
        })
    }
}

impl Run for PageEngine {
    type Job = Job;
    type Output = Outcome;

    async fn run(&self, job: &Job) -> Outcome {
        match job {
            Job::Text {
                text,
                appended,
                b,
                opts,
                input_at,
            } => {
                // idle work (off-screen views catching up, the URL) waits until this is in
                let _awaiting = dom::awaiting_result();
                self.run_text(text, appended, b.as_deref(), opts, *input_at)
                    .await
            }
            Job::Probe(probe) => Outcome::Probe(self.run_probe(probe).await),
            Job::Full { ids, opts, done } => {
                done.emit(self.engine.full(ids, opts).await);
                Outcome::Delivered
            }
            Job::Lens { of, position, rows } => Outcome::Lens(LensResult {
                of: *of,
                position: *position,
                probs: self.run_lens(rows).await,
            }),
        }
    }

    fn dropped(&self, out: Outcome) {
        if let Outcome::Shown(s) = out {
            // a notice (the GPU failed, the worker restarted) is shown with the next result
            self.carried.borrow_mut().extend(
                s.notes
                    .into_iter()
                    .filter(|n| !matches!(n, Note::TooLong(_))),
            );
        }
    }
}
