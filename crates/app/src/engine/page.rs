//! The engine as the page uses it (`PageEngine`): it tokenizes on the page (the tokens are
//! shown) and runs the model on the engine; the page's requests (`Job`) and what they give
//! (`Outcome`).

use std::cell::RefCell;
use std::rc::Rc;

use attnlab_model::roles::{self, Probe};
use attnlab_model::{AttentionOptions, Dims, Keep, Tokenizer, Trace};
use yew::prelude::*;

use super::gpu::Gpu;
use super::worker_client::CpuWorker;
use super::{Engine, FlowOf, LensOf, Note};
use crate::dom::{self};
use crate::runner::Run;
use crate::state::{
    Asked, FlowResult, GenAsk, GenEnd, Generated, LensResult, ProbeResult, Request, Shown, Side,
};

/// The most bytes of attention maps a result brings to the page (every head's four stages):
/// past it, or past `Sizes::whole_budget`, the result is slim — only the heads the views
/// show (`Views`), computed by the worker from what its run kept — and a slim text stays
/// slim down to half of it.
pub const MAPS_ON_PAGE: u64 = 64 << 20;

/// The least a whole trace (every field of every block, every position's prediction) may
/// take before a result is slim, whatever the model's size (`Sizes::whole_budget`): the
/// bundled model's whole trace at its 128 tokens is 20.6 MB.
pub const WHOLE_TRACE_FLOOR: u64 = 32 << 20;

/// What decides whether a model's result is slim: its sizes, and its weights' bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sizes {
    /// A trace's sizes (`t` is set per text).
    pub dims: Dims,
    /// The bytes of the model's weight files.
    pub model_bytes: u64,
}

impl Sizes {
    /// The most bytes a whole trace may take in the CPU worker: half the model's own (so that
    /// the worker holds at most about twice the model), and at least `WHOLE_TRACE_FLOOR`.
    /// SmolLM2 (98 MB): from 29 tokens on the result is slim, and a slim text stays slim down
    /// to 15; a GPT-2-sized model (498 MB of f32), from 167.
    pub fn whole_budget(&self) -> u64 {
        WHOLE_TRACE_FLOOR.max(self.model_bytes / 2)
    }

    /// The bytes of every head's four maps over `t` tokens.
    pub fn maps_bytes(&self, t: usize) -> u64 {
        let Dims {
            n_layer, n_head, ..
        } = self.dims;
        (n_layer * n_head) as u64 * (t as u64).pow(2) * 4 * 4
    }

    /// Whether a result of `t` tokens is too big for every head's maps: its maps over
    /// `MAPS_ON_PAGE`, or its whole trace over `whole_budget` — or, for a text that is slim
    /// already (`staying`), over half of either (down to which a slim text stays slim).
    pub fn too_big(&self, t: usize, staying: bool) -> bool {
        let share = if staying { 2 } else { 1 };
        let whole = Keep::All.bytes(&Dims { t, ..self.dims });
        self.maps_bytes(t) > MAPS_ON_PAGE / share || whole > self.whole_budget() / share
    }
}

/// The heads whose maps the views show (the selected one): all a slim result brings.
pub type Views = Rc<Vec<(usize, usize)>>;

/// A request of the page.
pub enum Job {
    /// The request: its text, the second text, the options; `input_at` is
    /// `performance.now()` of the input event, for the latency measurement; `heads`, the
    /// views' heads, for a slim result.
    Text {
        asked: Rc<Request>,
        heads: Views,
        input_at: f64,
    },
    /// A generation's step: `asked` (its `generate` set) with the ids this run appended so
    /// far (none yet: the first step chooses one from the text's own result).
    Generate {
        asked: Rc<Request>,
        heads: Views,
        run: Vec<u32>,
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
        rows: LensOf,
    },
    /// The model's own prediction after `position` of the slim result `of` (the lens's last
    /// stage alone: `LensOf::Position` with `last`; a follow-up job of its own kind, so that
    /// it and the lens card's lens do not replace each other).
    Prediction {
        of: u64,
        position: usize,
        rows: LensOf,
    },
    /// The attention-flow strip of the slim result `of` (a follow-up job).
    Flow { of: u64, ask: FlowOf },
}

pub enum Outcome {
    Shown(Shown),
    /// No result for the text: why ("" for an empty text).
    Error(String),
    /// The generation `nonce` appended nothing: the text already fills the context.
    ContextFull(u64),
    Probe(Result<ProbeResult, String>),
    Lens(LensResult),
    Prediction(LensResult),
    Flow(FlowResult),
    /// Handed over by the job itself (the whole trace of an export).
    Delivered,
}

/// Tokenizes on the page (the tokens are shown), runs the model on the engine.
pub struct PageEngine {
    pub tokenizer: Tokenizer,
    pub engine: Engine<Gpu, CpuWorker>,
    /// The model's context length (a generation stops there).
    context: usize,
    /// Its sizes (how big a text's result is).
    sizes: Sizes,
    /// Notes of results that came too late to be shown, for the next one.
    carried: RefCell<Vec<Note>>,
    /// The last text run: a generation's first token is chosen from it when it starts from
    /// that text.
    last: RefCell<Option<LastRun>>,
    /// Whether the last text run was slim.
    was_slim: std::cell::Cell<bool>,
}

/// A text's ids and options, and its trace.
struct LastRun {
    ids: Vec<u32>,
    opts: AttentionOptions,
    trace: Rc<Trace>,
}

impl PageEngine {
    pub fn new(
        tokenizer: Tokenizer,
        engine: Engine<Gpu, CpuWorker>,
        context: usize,
        sizes: Sizes,
    ) -> Self {
        PageEngine {
            tokenizer,
            engine,
            context,
            sizes,
            carried: RefCell::new(Vec::new()),
            last: RefCell::new(None),
            was_slim: std::cell::Cell::new(false),
        }
    }

    /// The text a vocabulary entry stands for, if it is whole characters (a token holding
    /// part of a character cannot be typed).
    pub fn token_text(&self, id: u32) -> Option<String> {
        let piece = self.tokenizer.inner().id_to_token(id)?;
        String::from_utf8(self.tokenizer.piece_bytes(&piece)).ok()
    }

    /// Whether a result of `t` tokens is slim (`Sizes::too_big`): then only `heads`' maps.
    /// Once the text is slim it stays so down to half the bytes: a text edited around the
    /// limit does not lose the worker's cache at every keystroke (a whole trace cannot grow
    /// from a slim one).
    fn slim(&self, t: usize, heads: &[(usize, usize)]) -> Option<Vec<(usize, usize)>> {
        let was = self.was_slim.get();
        let slim = self.sizes.too_big(t, false) || (was && self.sizes.too_big(t, true));
        self.was_slim.set(slim);
        slim.then(|| self.inside(heads))
    }

    /// The heads of `heads` the model has (a head picked for another model is not asked for).
    fn inside(&self, heads: &[(usize, usize)]) -> Vec<(usize, usize)> {
        let (layers, per_layer) = (self.sizes.dims.n_layer, self.sizes.dims.n_head);
        heads
            .iter()
            .copied()
            .filter(|&(l, h)| l < layers && h < per_layer)
            .collect()
    }

    /// The second text of a comparison.
    async fn run_side(
        &self,
        text: &str,
        opts: &AttentionOptions,
        heads: &[(usize, usize)],
    ) -> Side {
        let run = async {
            let tokens = self.tokenizer.encode(text).map_err(|e| e.to_string())?;
            if tokens.is_empty() {
                return Err(String::new());
            }
            let ids: Vec<u32> = tokens.iter().map(|t| t.id).collect();
            // (the second text's own size decides — or, beside a slim text, slim too: a GPU
            // engine holding the long text does not make its buffers again for a short one)
            let big = self.sizes.too_big(ids.len(), false);
            let slim = (big || self.was_slim.get()).then(|| self.inside(heads));
            let reply = self.engine.forward(&ids, opts, slim.as_deref()).await?;
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

    /// Runs the request's text with `run` appended (a generation's ids so far, if any).
    async fn run_text(
        &self,
        asked: &Rc<Request>,
        heads: &[(usize, usize)],
        run: Option<&[u32]>,
        input_at: f64,
    ) -> Outcome {
        let mut appended = asked.appended.to_vec();
        appended.extend(run.unwrap_or_default());
        let (text, tokens) = match self.tokenizer.continue_with(&asked.text, &appended) {
            Ok(t) => t,
            Err(e) => return Outcome::Error(e.to_string()),
        };
        if tokens.is_empty() {
            return Outcome::Error(String::new());
        }
        let ids: Vec<u32> = tokens.iter().map(|t| t.id).collect();
        let opts = &asked.opts;
        let slim = self.slim(ids.len(), heads);
        let mut reply = match self.engine.forward(&ids, opts, slim.as_deref()).await {
            Ok(r) => r,
            Err(e) => return Outcome::Error(e),
        };
        *self.last.borrow_mut() = Some(LastRun {
            ids,
            opts: opts.clone(),
            trace: reply.trace.clone(),
        });
        let b = match &asked.compare {
            Some(b) => Some(Rc::new(self.run_side(b, opts, heads).await)),
            None => None,
        };
        // notes of results not shown come first
        let mut notes = std::mem::take(&mut *self.carried.borrow_mut());
        notes.append(&mut reply.notes);
        reply.notes = notes;
        let cpu_because = reply.notes.iter().rev().find_map(|n| match n {
            Note::TooLong(e) if !reply.ran_on_gpu => Some(e.clone()),
            _ => None,
        });
        // a generation's step answers the request for exactly its ids
        let (asked, generated) = match (run, &asked.generate) {
            (Some(run), Some(ask)) => {
                let end = if run.len() >= ask.steps {
                    Some(GenEnd::Done)
                } else if tokens.len() >= self.context {
                    Some(GenEnd::Context)
                } else {
                    None
                };
                let step = Request {
                    appended: Rc::new(appended.clone()),
                    ..(**asked).clone()
                };
                let g = Generated {
                    nonce: ask.nonce,
                    base: asked.text.clone(),
                    ids: appended,
                    done: run.len(),
                    end,
                };
                (Rc::new(step), Some(Rc::new(g)))
            }
            _ => (asked.clone(), None),
        };
        Outcome::Shown(Shown {
            generation: 0,
            engine: 0,
            asked,
            text,
            // (a slim result's text roles: those the worker read from every head's rows as it
            // pooled them)
            roles: Rc::new(match (slim, reply.trace.thumbnails.as_ref()) {
                (None, _) => roles::text_scores(&*reply.trace),
                (Some(_), Some(t))
                    if t.roles.len() == t.n_layer * t.n_head * roles::TEXT_ROLES.len() =>
                {
                    roles::pooled_scores(t)
                }
                (Some(_), _) => {
                    let d = reply.trace.dims;
                    vec![roles::Scores::default(); d.n_layer * d.n_head]
                }
            }),
            tokens: Rc::new(tokens),
            b,
            cpu_because,
            run: reply,
            input_at,
            result_at: 0.0,
            generated,
        })
    }

    /// A generation's first step: the first token chosen from the text's own result (the
    /// one on screen, else run now), then the text with it run; or why none fits.
    async fn first_step(
        &self,
        asked: &Rc<Request>,
        heads: &[(usize, usize)],
        ask: &GenAsk,
        input_at: f64,
    ) -> Outcome {
        let tokens = match self.tokenizer.continue_with(&asked.text, &asked.appended) {
            Ok((_, t)) => t,
            Err(e) => return Outcome::Error(e.to_string()),
        };
        if tokens.is_empty() {
            return Outcome::Error(String::new());
        }
        if tokens.len() >= self.context {
            return Outcome::ContextFull(ask.nonce);
        }
        let ids: Vec<u32> = tokens.iter().map(|t| t.id).collect();
        let cached = self
            .last
            .borrow()
            .as_ref()
            .filter(|l| l.ids == ids && l.opts == asked.opts)
            .map(|l| l.trace.clone());
        let trace = match cached {
            Some(t) => t,
            None => match self
                .engine
                .forward(&ids, &asked.opts, self.slim(ids.len(), heads).as_deref())
                .await
            {
                Ok(r) => {
                    self.carried.borrow_mut().extend(r.notes);
                    r.trace
                }
                Err(e) => return Outcome::Error(e),
            },
        };
        let first = ask.sampling.choose(trace.last_logits(), 0);
        self.run_text(asked, heads, Some(&[first]), input_at).await
    }

    async fn run_lens(&self, rows: &LensOf) -> Result<Rc<Vec<f32>>, String> {
        let (probs, notes) = self.engine.lens(rows).await?;
        self.carried.borrow_mut().extend(notes);
        Ok(Rc::new(probs))
    }

    /// The flow strip from the worker, checked to be (layers × T) of the text asked.
    async fn run_flow(&self, ask: &FlowOf) -> Result<Rc<Vec<f32>>, String> {
        let (rows, notes) = self.engine.flow(ask).await?;
        self.carried.borrow_mut().extend(notes);
        let want = self.sizes.dims.n_layer * ask.ids.len();
        if rows.len() != want {
            return Err(format!(
                "the attention flow has {} values; {} layers × {} tokens are {want}",
                rows.len(),
                self.sizes.dims.n_layer,
                ask.ids.len()
            ));
        }
        Ok(Rc::new(rows))
    }

    async fn run_probe(&self, probe: &Probe) -> Result<ProbeResult, String> {
        if probe.half == 0 {
            return Err(probe.clamped.clone().unwrap_or_default());
        }
        // (on the CPU worker: see `Engine::probe`)
        let (scores, notes) = self.engine.probe(probe).await?;
        // notices (a worker restart) go with the next shown result
        self.carried.borrow_mut().extend(notes);
        let heads = self.sizes.dims.n_layer * self.sizes.dims.n_head;
        if scores.len() != heads {
            return Err(format!(
                "the probe gave {} heads' scores; the model has {heads} heads",
                scores.len()
            ));
        }
        Ok(ProbeResult {
            scores,
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
                asked,
                heads,
                input_at,
            } => {
                // idle work (off-screen views catching up, the URL) waits until this is in
                let _awaiting = dom::awaiting_result();
                self.run_text(asked, heads, None, *input_at).await
            }
            Job::Generate {
                asked,
                heads,
                run,
                input_at,
            } => {
                let _awaiting = dom::awaiting_result();
                match (&asked.generate, run.is_empty()) {
                    (Some(ask), true) => self.first_step(asked, heads, ask, *input_at).await,
                    (Some(_), false) => self.run_text(asked, heads, Some(run), *input_at).await,
                    (None, _) => self.run_text(asked, heads, None, *input_at).await,
                }
            }
            Job::Probe(probe) => Outcome::Probe(self.run_probe(probe).await),
            Job::Full { ids, opts, done } => {
                done.emit(self.engine.full(ids, opts).await);
                Outcome::Delivered
            }
            Job::Lens { of, position, rows } => Outcome::Lens(Asked {
                of: *of,
                at: *position,
                values: self.run_lens(rows).await,
            }),
            Job::Prediction { of, position, rows } => Outcome::Prediction(Asked {
                of: *of,
                at: *position,
                values: self.run_lens(rows).await,
            }),
            Job::Flow { of, ask } => Outcome::Flow(Asked {
                of: *of,
                at: (ask.query, ask.method),
                values: self.run_flow(ask).await,
            }),
        }
    }

    /// A follow-up replaces a waiting one of its kind only: the lens the lens, the flow strip
    /// the flow strip.
    fn same_kind(&self, a: &Job, b: &Job) -> bool {
        std::mem::discriminant(a) == std::mem::discriminant(b)
    }

    /// A generation's step that did not end is followed by the next: its token chosen from
    /// the step's result.
    fn then(&self, job: &Job, out: &Outcome) -> Option<Job> {
        let (Job::Generate { asked, heads, .. }, Outcome::Shown(s)) = (job, out) else {
            return None;
        };
        let (ask, g) = (asked.generate.as_ref()?, s.generated.as_ref()?);
        if g.end.is_some() {
            return None;
        }
        let mut run = g.ids[g.ids.len() - g.done..].to_vec();
        run.push(ask.sampling.choose(s.run.trace.last_logits(), g.done));
        Some(Job::Generate {
            asked: asked.clone(),
            heads: heads.clone(),
            run,
            input_at: dom::now(),
        })
    }

    fn dropped(&self, out: Outcome) {
        if let Outcome::Shown(s) = out {
            // a notice (the GPU failed, the worker restarted) is shown with the next result
            self.carried.borrow_mut().extend(
                s.run
                    .notes
                    .into_iter()
                    .filter(|n| !matches!(n, Note::TooLong(_))),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use attnlab_model::llama::{LlamaConfig, RopePairs};
    use attnlab_model::Config;

    /// SmolLM2-135M's sizes, and its GGUF file's bytes.
    fn smollm2() -> Sizes {
        let c = LlamaConfig {
            n_layer: 30,
            n_embd: 576,
            n_head: 9,
            n_kv_head: 3,
            head_dim: 64,
            n_ff: 1536,
            vocab_size: 49_152,
            context: 8192,
            rope_theta: 100_000.0,
            rope_pairs: RopePairs::Adjacent,
            rope_scaling: None,
            rope_factors: None,
            rms_eps: 1e-5,
            sliding_window: None,
        };
        Sizes {
            dims: c.dims(0),
            model_bytes: 98_343_456,
        }
    }

    #[test]
    fn the_bundled_model_keeps_every_map_over_its_whole_context() {
        let c = Config::from_json(include_bytes!("../../../../assets/model/config.json")).unwrap();
        let sizes = Sizes {
            dims: Dims::new(&c, 0),
            model_bytes: std::fs::metadata(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../assets/model/model.safetensors"
            ))
            .unwrap()
            .len(),
        };
        assert!(!sizes.too_big(c.n_positions, false));
        // its whole trace at 128 tokens is the 20.6 MB `WHOLE_TRACE_FLOOR` speaks of
        let whole = Keep::All.bytes(&Dims {
            t: c.n_positions,
            ..sizes.dims
        });
        assert_eq!(whole / 100_000, 205, "{whole}");
    }

    #[test]
    fn a_real_model_is_slim_once_its_whole_trace_passes_half_the_model() {
        let s = smollm2();
        assert_eq!(s.whole_budget(), s.model_bytes / 2);
        let first = (1..200).find(|&t| s.too_big(t, false)).unwrap();
        let stays = (1..200).find(|&t| s.too_big(t, true)).unwrap();
        assert_eq!((first, stays), (29, 15));
        // a model twice the floor's size keeps whole traces up to half its own bytes
        let big = Sizes {
            model_bytes: 4 * WHOLE_TRACE_FLOOR,
            ..s
        };
        assert_eq!(big.whole_budget(), 2 * WHOLE_TRACE_FLOOR);
        assert!((1..200).find(|&t| big.too_big(t, false)).unwrap() > first);
        // the GPT-2-sized random model of the benchmarks (497.8 MB of f32): its whole trace
        // passes half the model at 167 tokens (its maps pass 64 MiB at 171)
        let c = Config {
            n_embd: 768,
            n_head: 12,
            n_layer: 12,
            n_positions: 1024,
            ..Config::bundled(50_257)
        };
        let gpt2 = Sizes {
            dims: Dims::new(&c, 0),
            model_bytes: 497_759_232,
        };
        let first = (1..1024).find(|&t| gpt2.too_big(t, false)).unwrap();
        let maps_first = (1..1024)
            .find(|&t| gpt2.maps_bytes(t) > MAPS_ON_PAGE)
            .unwrap();
        assert_eq!((first, maps_first), (167, 171));
    }
}
