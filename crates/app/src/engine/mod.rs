//! The model behind one interface: `Engine` runs a forward on WebGPU or on the CPU worker and
//! owns the whole fallback policy, in this one place:
//!
//! - a GPU failure (device lost, a kernel error) → the CPU for good, with a notice;
//! - a text longer than the GPU buffers hold (`TooLong`, big models) → the CPU for that
//!   request, said next to the result;
//! - a crashed CPU worker → a new worker, the request run again, with a notice;
//! - the backend the user chose (Auto, WebGPU, CPU). Auto takes WebGPU on a hardware adapter;
//!   on a software one (SwiftShader, llvmpipe) it runs the first results on both, keeps the
//!   faster and says why in the badge.
//!
//! The backends are behind two small traits (`Compute`, `CpuCompute`) so that the policy is
//! tested natively with fakes; `gpu.rs` and `worker_client.rs` are the real ones.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::rc::Rc;

use attnlab_model::flow::Method;
use attnlab_model::roles::{Probe, Scores};
use attnlab_model::{AttentionOptions, Trace};

pub mod backend;
pub mod gpu;
pub mod page;
pub mod progress;
pub mod protocol;
pub mod wire;
pub mod worker_client;

pub use backend::{Backend, CpuWhy};

/// Which backend the user asked for (the header's switch, `backend=` in the URL).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Preference {
    #[default]
    Auto,
    WebGpu,
    Cpu,
}

impl Preference {
    pub const ALL: [Preference; 3] = [Preference::Auto, Preference::WebGpu, Preference::Cpu];

    /// The URL's spelling.
    pub fn code(self) -> &'static str {
        match self {
            Preference::Auto => "auto",
            Preference::WebGpu => "webgpu",
            Preference::Cpu => "cpu",
        }
    }

    pub fn from_code(s: &str) -> Option<Preference> {
        Preference::ALL.into_iter().find(|p| p.code() == s)
    }
}

/// One backend's answer.
#[derive(Clone, Debug)]
pub struct Computed {
    pub trace: Rc<Trace>,
    /// Whether rows of the previous forward were reused.
    pub incremental: bool,
    /// How long it took as the page sees it (forward + readback, or + transfer from the
    /// worker), in ms.
    pub ms: f64,
    /// The forward alone, where the backend measures it apart (the worker's own clock).
    pub engine_ms: Option<f64>,
    /// Every field of the trace is there (the CPU worker sends the views' fields only:
    /// `wire::SHOWN`).
    pub complete: bool,
}

/// Why a backend did not answer.
#[derive(Clone, Debug, PartialEq)]
pub enum ComputeError {
    /// The request itself is wrong (e.g. options the model rejects): no backend would do it.
    Input(String),
    /// The text is longer than this backend's buffers (the GPU engine on a big model).
    TooLong(String),
    /// The backend is gone for good (the GPU device was lost, a kernel failed).
    Lost(String),
    /// The CPU worker crashed; a new one may do it.
    Crashed(String),
}

impl ComputeError {
    /// What went wrong, in words.
    pub fn into_message(self) -> String {
        match self {
            ComputeError::Input(e)
            | ComputeError::TooLong(e)
            | ComputeError::Lost(e)
            | ComputeError::Crashed(e) => e,
        }
    }
}

/// Which heads' maps a forward brings back: `None`, every head's (a trace as the views have
/// always read it); `Some(heads)`, for a text too long for them all, a slim trace
/// (`Trace::slim`) with only these heads' maps.
pub type Slim<'a> = Option<&'a [(usize, usize)]>;

/// Cells on each side of a slim result's thumbnails (the CPU worker's and the GPU engine's:
/// at most `attnlab_gpu::attn_pool::MAX_SIDE`).
pub const THUMBNAIL_SIDE: usize = 64;

/// What the logit lens reads: the residual rows of a result the page holds
/// (`attnlab_model::lens::stage_rows`), or — for a slim result, whose rows stay in the CPU
/// worker — a position of the text it ran (`ids` with `opts`; a worker that has run another
/// text since runs this one again first). With `last`, only the last stage goes through the
/// output head: the model's own prediction after the position (one row × V, not stages × V).
#[derive(Clone, Debug, PartialEq)]
pub enum LensOf {
    Rows(Vec<f32>),
    Position {
        ids: Vec<u32>,
        opts: AttentionOptions,
        position: usize,
        last: bool,
    },
}

/// The rows a `LensOf::Position` reads from the run of its text: every stage's at `position`
/// (`attnlab_model::lens::stage_rows`), or the last stage's alone.
pub fn position_rows(
    trace: &attnlab_model::Trace,
    position: usize,
    last: bool,
) -> attnlab_model::Result<Vec<f32>> {
    let mut rows = attnlab_model::lens::stage_rows(trace, position)?;
    if last {
        rows.drain(..rows.len() - trace.dims.d_model);
    }
    Ok(rows)
}

/// The attention-flow strip of a slim result (`attnlab_model::flow::strip`: one row per
/// layer, one column per token), which needs every head's maps: the CPU worker computes it
/// from its own run of `ids` with `opts` (run again first when it has run another text
/// since), a few rows at a time, never holding every map.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowOf {
    pub ids: Vec<u32>,
    pub opts: AttentionOptions,
    pub query: usize,
    pub method: Method,
}

/// A backend that runs the model: the GPU engine or the CPU worker.
pub trait Compute {
    fn forward(
        &self,
        ids: &[u32],
        opts: &AttentionOptions,
        slim: Slim<'_>,
    ) -> impl Future<Output = Result<Computed, ComputeError>>;
}

/// The CPU backend can also give the unmodified model's trace (the baseline of the Δ
/// probabilities, with its own incremental cache) and be restarted after a crash.
pub trait CpuCompute: Compute {
    fn baseline(
        &self,
        ids: &[u32],
        slim: Slim<'_>,
    ) -> impl Future<Output = Result<Computed, ComputeError>>;
    /// The same forward with every field of the trace (for the whole-Trace export).
    fn full(
        &self,
        ids: &[u32],
        opts: &AttentionOptions,
    ) -> impl Future<Output = Result<Computed, ComputeError>>;
    /// The logit lens's rows (given, or the worker's own at a position: `LensOf`) through the
    /// model's final norm and output head: every stage's next-token distribution, (stages × V).
    fn lens(&self, of: &LensOf) -> impl Future<Output = Result<Vec<f32>, ComputeError>>;
    /// The attention-flow strip of a slim result, (layers × T) (`FlowOf`).
    fn flow(&self, of: &FlowOf) -> impl Future<Output = Result<Vec<f32>, ComputeError>>;
    /// The head-role probe's induction and duplicate-token scores of every head: `ids` (`half`
    /// ids said twice) run with the default options, leaving the text's cache as it was.
    fn probe(
        &self,
        ids: &[u32],
        half: usize,
    ) -> impl Future<Output = Result<Vec<Scores>, ComputeError>>;
    fn restart(&self);
}

/// What the page should say about a result besides showing it.
#[derive(Clone, Debug, PartialEq)]
pub enum Note {
    /// The GPU failed: this and every later request runs on the CPU.
    GpuFailed(String),
    /// This request ran on the CPU: the text is longer than the GPU buffers hold.
    TooLong(String),
    /// The CPU worker crashed and was restarted; the request ran again.
    WorkerRestarted(String),
}

/// A finished forward.
#[derive(Clone, Debug)]
pub struct Reply {
    pub trace: Rc<Trace>,
    /// The unmodified model's trace for the same tokens, when an intervention is on.
    pub baseline: Option<Rc<Trace>>,
    pub incremental: bool,
    pub forward_ms: f64,
    /// The forward alone, without the transfer (the CPU worker's own clock).
    pub engine_ms: Option<f64>,
    /// Every field of the trace is there (else only what the views read).
    pub complete: bool,
    /// Where this result was computed.
    pub ran_on_gpu: bool,
    /// The backend as the badge should show it after this request.
    pub backend: Backend,
    pub notes: Vec<Note>,
}

/// How many results Auto runs on both backends of a software adapter before it chooses.
pub const AUTO_TRIALS: usize = 3;

/// The GPU side of the engine: the backend and what its adapter is.
pub struct GpuSide<G> {
    pub compute: G,
    pub adapter: String,
    /// A software adapter (`isFallbackAdapter`, a CPU device type or a known software name).
    pub software: bool,
    /// Whether Auto measures it against the CPU on a software adapter. False for a model too
    /// large for a software GPU to be worth a trial (SmolLM2's first forward took 28 s on
    /// SwiftShader, the CPU worker's 0.6 s): Auto then picks the CPU without one.
    pub trial: bool,
}

/// Auto's measurements on a software adapter, and its decision.
#[derive(Clone, Debug, Default, PartialEq)]
struct Trial {
    gpu_ms: Vec<f64>,
    cpu_ms: Vec<f64>,
    /// `Some(true)`: WebGPU won.
    decided: Option<bool>,
}

fn median(xs: &[f64]) -> f64 {
    let mut s = xs.to_vec();
    s.sort_by(f64::total_cmp);
    s[s.len() / 2]
}

pub struct Engine<G, C> {
    gpu: RefCell<Option<Rc<GpuSide<G>>>>,
    /// Why there is no GPU (no WebGPU in this browser, or it failed).
    no_gpu: RefCell<CpuWhy>,
    cpu: C,
    preference: Cell<Preference>,
    trial: RefCell<Trial>,
}

impl<G: Compute, C: CpuCompute> Engine<G, C> {
    /// `gpu`: the GPU backend, or why there is none.
    pub fn new(gpu: Result<GpuSide<G>, CpuWhy>, cpu: C, preference: Preference) -> Self {
        let (gpu, no_gpu) = match gpu {
            Ok(g) => (Some(Rc::new(g)), CpuWhy::Chosen),
            Err(why) => (None, why),
        };
        Engine {
            gpu: RefCell::new(gpu),
            no_gpu: RefCell::new(no_gpu),
            cpu,
            preference: Cell::new(preference),
            trial: RefCell::new(Trial::default()),
        }
    }

    /// Gives the engine its GPU backend once it has started, or why there is none (a real
    /// model's starts after the first result: the CPU worker answers meanwhile). Takes
    /// effect with the next request.
    pub fn attach_gpu(&self, gpu: Result<GpuSide<G>, CpuWhy>) {
        match gpu {
            Ok(g) => *self.gpu.borrow_mut() = Some(Rc::new(g)),
            Err(why) => *self.no_gpu.borrow_mut() = why,
        }
    }

    /// The user's choice; takes effect with the next request.
    pub fn set_preference(&self, p: Preference) {
        self.preference.set(p);
    }

    /// The GPU backend, while there is one (for the fault-injection hook of the tests).
    pub fn gpu(&self) -> Option<Rc<GpuSide<G>>> {
        self.gpu.borrow().clone()
    }

    pub fn cpu(&self) -> &C {
        &self.cpu
    }

    /// Whether the next request goes to the GPU (and whether Auto is still measuring).
    fn wants_gpu(&self) -> (bool, bool) {
        let Some(g) = self.gpu.borrow().clone() else {
            return (false, false);
        };
        match self.preference.get() {
            Preference::Cpu => (false, false),
            Preference::WebGpu => (true, false),
            Preference::Auto if !g.software => (true, false),
            Preference::Auto if !g.trial => (false, false),
            Preference::Auto => match self.trial.borrow().decided {
                Some(gpu_won) => (gpu_won, false),
                None => (true, true),
            },
        }
    }

    /// The badge after the latest request.
    pub fn backend(&self) -> Backend {
        let gpu = self.gpu.borrow().clone();
        let (on_gpu, measuring) = self.wants_gpu();
        match gpu {
            Some(g) if measuring => Backend::Comparing {
                adapter: g.adapter.clone(),
            },
            Some(g) if on_gpu => Backend::Gpu {
                adapter: g.adapter.clone(),
                fallback: g.software,
            },
            Some(g) if self.preference.get() == Preference::Auto && !g.trial => Backend::Cpu {
                why: CpuWhy::SoftwareGpuSlow,
            },
            Some(_) if self.preference.get() == Preference::Auto => {
                let t = self.trial.borrow();
                Backend::Cpu {
                    why: CpuWhy::Faster {
                        cpu_ms: median(&t.cpu_ms),
                        gpu_ms: median(&t.gpu_ms),
                    },
                }
            }
            Some(_) => Backend::Cpu {
                why: CpuWhy::Chosen,
            },
            None => Backend::Cpu {
                why: self.no_gpu.borrow().clone(),
            },
        }
    }

    /// Runs the model on `ids` where the policy says, falling back as it says; `slim` as
    /// `Compute::forward`'s.
    pub async fn forward(
        &self,
        ids: &[u32],
        opts: &AttentionOptions,
        slim: Slim<'_>,
    ) -> Result<Reply, String> {
        let mut notes = Vec::new();
        let (on_gpu, measuring) = self.wants_gpu();
        let mut done: Option<(Computed, bool)> = None;
        if on_gpu {
            let g = self.gpu.borrow().clone();
            if let Some(g) = g {
                match g.compute.forward(ids, opts, slim).await {
                    Ok(c) => done = Some((c, true)),
                    Err(ComputeError::Input(e)) => return Err(e),
                    Err(ComputeError::TooLong(e)) => notes.push(Note::TooLong(e)),
                    Err(ComputeError::Lost(e) | ComputeError::Crashed(e)) => {
                        // the engine is dropped: every later request runs on the CPU
                        self.gpu.borrow_mut().take();
                        *self.no_gpu.borrow_mut() = CpuWhy::GpuFailed(e.clone());
                        notes.push(Note::GpuFailed(e));
                    }
                }
            }
        }
        let measure = measuring && done.is_some();
        if done.is_none() || measure {
            let c = self
                .on_cpu(&mut notes, |cpu| cpu.forward(ids, opts, slim))
                .await?;
            if measure {
                let gpu = done.as_ref().map(|(g, _)| g.ms).unwrap_or(f64::INFINITY);
                let mut t = self.trial.borrow_mut();
                t.gpu_ms.push(gpu);
                t.cpu_ms.push(c.ms);
                if t.cpu_ms.len() >= AUTO_TRIALS {
                    t.decided = Some(median(&t.gpu_ms) < median(&t.cpu_ms));
                }
                // show the faster of the two while measuring
                if c.ms < gpu {
                    done = Some((c, false));
                }
            } else {
                done = Some((c, false));
            }
        }
        let (c, ran_on_gpu) = done.expect("a result from the GPU or the CPU");
        // with an intervention, the unmodified model too (on the CPU, incremental like the
        // main run): the next-token view shows the change in probability against it
        let baseline = if *opts == AttentionOptions::default() {
            None
        } else {
            Some(
                self.on_cpu(&mut notes, |cpu| cpu.baseline(ids, slim.map(|_| &[][..])))
                    .await?
                    .trace,
            )
        };
        Ok(Reply {
            trace: c.trace,
            baseline,
            incremental: c.incremental,
            forward_ms: c.ms,
            engine_ms: c.engine_ms,
            complete: c.complete,
            ran_on_gpu,
            backend: self.backend(),
            notes,
        })
    }

    /// The head-role probe's scores, from the CPU worker whatever the policy says (it runs
    /// beside the GPU's request, and never makes a GPU engine that holds a long text make its
    /// buffers again for a short one); the worker keeps no head's maps for it. Returns the
    /// scores and what to say (a worker restart).
    pub async fn probe(&self, probe: &Probe) -> Result<(Vec<Scores>, Vec<Note>), String> {
        let mut notes = Vec::new();
        let scores = self
            .on_cpu(&mut notes, |cpu| cpu.probe(&probe.ids, probe.half))
            .await?;
        Ok((scores, notes))
    }

    /// The whole trace of `ids` with `opts` from the CPU worker (its cache makes the forward
    /// cheap when it just ran them), for an export of a lite result.
    pub async fn full(&self, ids: &[u32], opts: &AttentionOptions) -> Result<Rc<Trace>, String> {
        let mut notes = Vec::new();
        Ok(self
            .on_cpu(&mut notes, |cpu| cpu.full(ids, opts))
            .await?
            .trace)
    }

    /// The logit lens of a trace from either backend: its rows go through the output head
    /// on the CPU worker (which holds the model; the GPU engine keeps no copy of the head on
    /// the page). Returns every stage's distribution and what to say (a worker restart).
    pub async fn lens(&self, of: &LensOf) -> Result<(Vec<f32>, Vec<Note>), String> {
        let mut notes = Vec::new();
        let probs = self.on_cpu(&mut notes, |cpu| cpu.lens(of)).await?;
        Ok((probs, notes))
    }

    /// The attention-flow strip of a slim result from the CPU worker (`FlowOf`), and what to
    /// say (a worker restart).
    pub async fn flow(&self, of: &FlowOf) -> Result<(Vec<f32>, Vec<Note>), String> {
        let mut notes = Vec::new();
        let rows = self.on_cpu(&mut notes, |cpu| cpu.flow(of)).await?;
        Ok((rows, notes))
    }

    /// Runs `f` on the CPU worker; a crash restarts the worker and runs `f` once more.
    async fn on_cpu<'a, T, F, Fut>(&'a self, notes: &mut Vec<Note>, f: F) -> Result<T, String>
    where
        F: Fn(&'a C) -> Fut,
        Fut: Future<Output = Result<T, ComputeError>>,
    {
        match f(&self.cpu).await {
            Err(ComputeError::Crashed(e)) => {
                self.cpu.restart();
                notes.push(Note::WorkerRestarted(e));
                f(&self.cpu).await.map_err(ComputeError::into_message)
            }
            other => other.map_err(ComputeError::into_message),
        }
    }
}

/// Polls a future that is ready without waiting (the fakes of the tests never wait).
#[cfg(test)]
pub fn ready<F: Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match f.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(x) => x,
        std::task::Poll::Pending => panic!("the future waited"),
    }
}

#[cfg(test)]
mod tests;
