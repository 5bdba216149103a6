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

use attnlab_model::{AttentionOptions, Trace};

pub mod backend;
pub mod gpu;
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

/// A backend that runs the model: the GPU engine or the CPU worker.
pub trait Compute {
    fn forward(
        &self,
        ids: &[u32],
        opts: &AttentionOptions,
    ) -> impl Future<Output = Result<Computed, ComputeError>>;
}

/// The CPU backend can also give the unmodified model's trace (the baseline of the Δ
/// probabilities, with its own incremental cache) and be restarted after a crash.
pub trait CpuCompute: Compute {
    fn baseline(&self, ids: &[u32]) -> impl Future<Output = Result<Computed, ComputeError>>;
    /// The same forward with every field of the trace (for the whole-Trace export).
    fn full(
        &self,
        ids: &[u32],
        opts: &AttentionOptions,
    ) -> impl Future<Output = Result<Computed, ComputeError>>;
    /// The logit lens's rows (`attnlab_model::lens::stage_rows`) through the model's final
    /// LayerNorm and output head: every stage's next-token distribution, (stages × V).
    fn lens(&self, rows: &[f32]) -> impl Future<Output = Result<Vec<f32>, ComputeError>>;
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
    pub fn new(gpu: Result<GpuSide<G>, String>, cpu: C, preference: Preference) -> Self {
        let (gpu, no_gpu) = match gpu {
            Ok(g) => (Some(Rc::new(g)), CpuWhy::Chosen),
            Err(why) => (None, CpuWhy::NoWebGpu(why)),
        };
        Engine {
            gpu: RefCell::new(gpu),
            no_gpu: RefCell::new(no_gpu),
            cpu,
            preference: Cell::new(preference),
            trial: RefCell::new(Trial::default()),
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

    /// Runs the model on `ids` where the policy says, falling back as it says.
    pub async fn forward(&self, ids: &[u32], opts: &AttentionOptions) -> Result<Reply, String> {
        let mut notes = Vec::new();
        let (on_gpu, measuring) = self.wants_gpu();
        let mut done: Option<(Computed, bool)> = None;
        if on_gpu {
            let g = self.gpu.borrow().clone();
            if let Some(g) = g {
                match g.compute.forward(ids, opts).await {
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
                .on_cpu(&mut notes, |cpu| cpu.forward(ids, opts))
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
                self.on_cpu(&mut notes, |cpu| cpu.baseline(ids))
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
    pub async fn lens(&self, rows: &[f32]) -> Result<(Vec<f32>, Vec<Note>), String> {
        let mut notes = Vec::new();
        let probs = self.on_cpu(&mut notes, |cpu| cpu.lens(rows)).await?;
        Ok((probs, notes))
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
mod tests {
    use super::*;
    use attnlab_model::testing::random_model;
    use attnlab_model::{forward, Config, LnPlacement, Model};
    use std::collections::VecDeque;

    fn model() -> Model {
        let c = Config {
            n_embd: 8,
            n_head: 2,
            n_layer: 1,
            n_positions: 8,
            vocab_size: 10,
            ln_placement: LnPlacement::Post,
            scale_embedding: false,
            ..Config::bundled(10)
        };
        random_model(&c, 7, 0.5)
    }

    /// A backend that answers from a script: each call takes the next answer (Ok(ms) or an
    /// error); a real forward gives the trace. It counts its calls and restarts.
    struct Fake {
        model: Model,
        script: RefCell<VecDeque<Result<f64, ComputeError>>>,
        calls: Cell<usize>,
        baselines: Cell<usize>,
        restarts: Cell<usize>,
    }

    impl Fake {
        fn new(script: impl IntoIterator<Item = Result<f64, ComputeError>>) -> Fake {
            Fake {
                model: model(),
                script: RefCell::new(script.into_iter().collect()),
                calls: Cell::new(0),
                baselines: Cell::new(0),
                restarts: Cell::new(0),
            }
        }

        fn answer(&self, ids: &[u32], opts: &AttentionOptions) -> Result<Computed, ComputeError> {
            let ms = self.script.borrow_mut().pop_front().unwrap_or(Ok(1.0))?;
            let trace =
                forward(&self.model, ids, opts).map_err(|e| ComputeError::Input(e.to_string()))?;
            Ok(Computed {
                trace: Rc::new(trace),
                incremental: false,
                ms,
                engine_ms: None,
                complete: true,
            })
        }
    }

    impl Compute for Fake {
        async fn forward(
            &self,
            ids: &[u32],
            opts: &AttentionOptions,
        ) -> Result<Computed, ComputeError> {
            self.calls.set(self.calls.get() + 1);
            self.answer(ids, opts)
        }
    }

    impl CpuCompute for Fake {
        async fn baseline(&self, ids: &[u32]) -> Result<Computed, ComputeError> {
            self.baselines.set(self.baselines.get() + 1);
            self.answer(ids, &AttentionOptions::default())
        }
        async fn full(
            &self,
            ids: &[u32],
            opts: &AttentionOptions,
        ) -> Result<Computed, ComputeError> {
            self.forward(ids, opts).await
        }
        async fn lens(&self, rows: &[f32]) -> Result<Vec<f32>, ComputeError> {
            self.calls.set(self.calls.get() + 1);
            self.script.borrow_mut().pop_front().unwrap_or(Ok(1.0))?;
            attnlab_model::lens::head_probs(&self.model, rows)
                .map_err(|e| ComputeError::Input(e.to_string()))
        }
        fn restart(&self) {
            self.restarts.set(self.restarts.get() + 1);
        }
    }

    fn gpu(
        script: Vec<Result<f64, ComputeError>>,
        software: bool,
    ) -> Result<GpuSide<Fake>, String> {
        Ok(GpuSide {
            compute: Fake::new(script),
            adapter: "Test GPU".into(),
            software,
        })
    }

    fn run(e: &Engine<Fake, Fake>, ids: &[u32]) -> Result<Reply, String> {
        ready(e.forward(ids, &AttentionOptions::default()))
    }

    #[test]
    fn a_hardware_adapter_runs_everything_on_the_gpu() {
        let e = Engine::new(gpu(vec![], false), Fake::new([]), Preference::Auto);
        let r = run(&e, &[1, 2, 3]).unwrap();
        assert!(r.ran_on_gpu && r.notes.is_empty());
        assert_eq!(e.cpu().calls.get(), 0);
        assert!(matches!(
            r.backend,
            Backend::Gpu {
                fallback: false,
                ..
            }
        ));
    }

    #[test]
    fn a_gpu_failure_moves_to_the_cpu_for_good_with_a_note() {
        let e = Engine::new(
            gpu(
                vec![Ok(1.0), Err(ComputeError::Lost("device lost".into()))],
                false,
            ),
            Fake::new([]),
            Preference::WebGpu,
        );
        assert!(run(&e, &[1]).unwrap().ran_on_gpu);
        let r = run(&e, &[1, 2]).unwrap();
        assert!(!r.ran_on_gpu);
        assert_eq!(r.notes, vec![Note::GpuFailed("device lost".into())]);
        assert_eq!(
            r.trace.tokens,
            vec![1, 2],
            "the same request, answered by the CPU"
        );
        assert_eq!(
            r.backend,
            Backend::Cpu {
                why: CpuWhy::GpuFailed("device lost".into())
            }
        );
        let r = run(&e, &[1, 2, 3]).unwrap();
        assert!(
            !r.ran_on_gpu && r.notes.is_empty(),
            "no note again, no GPU again"
        );
        assert!(e.gpu().is_none());
    }

    #[test]
    fn a_text_too_long_for_the_gpu_runs_on_the_cpu_that_once() {
        let e = Engine::new(
            gpu(vec![Err(ComputeError::TooLong("129 > 128".into()))], false),
            Fake::new([]),
            Preference::Auto,
        );
        let r = run(&e, &[1, 2]).unwrap();
        assert!(!r.ran_on_gpu);
        assert_eq!(r.notes, vec![Note::TooLong("129 > 128".into())]);
        assert!(matches!(r.backend, Backend::Gpu { .. }), "the GPU stays");
        assert!(run(&e, &[1]).unwrap().ran_on_gpu);
    }

    #[test]
    fn a_crashed_worker_is_restarted_and_the_request_runs_again() {
        let e = Engine::new(
            Err("no WebGPU".into()),
            Fake::new([Err(ComputeError::Crashed("worker panicked".into()))]),
            Preference::Auto,
        );
        let r = run(&e, &[4, 5]).unwrap();
        assert_eq!(e.cpu().restarts.get(), 1);
        assert_eq!(e.cpu().calls.get(), 2);
        assert_eq!(
            r.notes,
            vec![Note::WorkerRestarted("worker panicked".into())]
        );
        assert_eq!(r.trace.tokens, vec![4, 5]);
        assert_eq!(
            r.backend,
            Backend::Cpu {
                why: CpuWhy::NoWebGpu("no WebGPU".into())
            }
        );
        // a worker that crashes twice in a row is an error, not a loop
        let e = Engine::new(
            Err("no WebGPU".into()),
            Fake::new([
                Err(ComputeError::Crashed("a".into())),
                Err(ComputeError::Crashed("b".into())),
            ]),
            Preference::Cpu,
        );
        assert_eq!(run(&e, &[1]).unwrap_err(), "b");
    }

    #[test]
    fn the_lens_of_a_gpu_trace_runs_on_the_cpu_worker_and_survives_a_crash() {
        let e = Engine::new(
            gpu(vec![], false),
            Fake::new([Err(ComputeError::Crashed("worker panicked".into()))]),
            Preference::WebGpu,
        );
        let r = run(&e, &[1, 2, 3]).unwrap();
        assert!(r.ran_on_gpu);
        let rows = attnlab_model::lens::stage_rows(&r.trace, 2).unwrap();
        let (probs, notes) = ready(e.lens(&rows)).unwrap();
        let want = attnlab_model::lens::stage_probs(&e.cpu().model, &r.trace, 2).unwrap();
        assert_eq!(probs, want.concat());
        assert_eq!(notes, vec![Note::WorkerRestarted("worker panicked".into())]);
        assert_eq!(e.cpu().restarts.get(), 1);
        assert_eq!(
            e.gpu().unwrap().compute.calls.get(),
            1,
            "the GPU ran only the forward"
        );
        assert!(ready(e.lens(&rows[1..]))
            .unwrap_err()
            .contains("not rows of"));
    }

    #[test]
    fn a_bad_request_is_an_error_without_any_fallback() {
        let e = Engine::new(
            gpu(vec![Err(ComputeError::Input("bad τ".into()))], false),
            Fake::new([]),
            Preference::WebGpu,
        );
        assert_eq!(run(&e, &[1]).unwrap_err(), "bad τ");
        assert!(e.gpu().is_some(), "the GPU is fine");
        assert_eq!(e.cpu().calls.get(), 0);
    }

    #[test]
    fn auto_on_a_software_adapter_measures_both_and_keeps_the_faster() {
        // the GPU takes 180 ms, the CPU 14 ms
        let e = Engine::new(
            gpu(vec![Ok(400.0), Ok(180.0), Ok(170.0)], true),
            Fake::new([Ok(30.0), Ok(14.0), Ok(13.0)]),
            Preference::Auto,
        );
        for i in 0..AUTO_TRIALS {
            let before = e.backend();
            assert!(
                matches!(before, Backend::Comparing { .. }),
                "{i}: {before:?}"
            );
            let r = run(&e, &[1, 2]).unwrap();
            assert!(!r.ran_on_gpu, "the faster result is shown while measuring");
        }
        assert_eq!(e.gpu().unwrap().compute.calls.get(), AUTO_TRIALS);
        assert_eq!(
            e.backend(),
            Backend::Cpu {
                why: CpuWhy::Faster {
                    cpu_ms: 14.0,
                    gpu_ms: 180.0
                }
            }
        );
        run(&e, &[1, 2, 3]).unwrap();
        assert_eq!(
            e.gpu().unwrap().compute.calls.get(),
            AUTO_TRIALS,
            "then the CPU only"
        );
        // WebGPU stays one click away, and back to Auto keeps the decision
        e.set_preference(Preference::WebGpu);
        assert!(run(&e, &[1]).unwrap().ran_on_gpu);
        e.set_preference(Preference::Auto);
        assert!(!run(&e, &[1]).unwrap().ran_on_gpu);
    }

    #[test]
    fn auto_keeps_a_software_gpu_that_is_faster() {
        let e = Engine::new(
            gpu(vec![Ok(5.0), Ok(4.0), Ok(4.0)], true),
            Fake::new([Ok(20.0), Ok(20.0), Ok(20.0)]),
            Preference::Auto,
        );
        for _ in 0..AUTO_TRIALS {
            run(&e, &[1]).unwrap();
        }
        assert!(matches!(e.backend(), Backend::Gpu { fallback: true, .. }));
        assert!(run(&e, &[1]).unwrap().ran_on_gpu);
    }

    #[test]
    fn choosing_the_cpu_never_touches_the_gpu() {
        let e = Engine::new(gpu(vec![], false), Fake::new([]), Preference::Cpu);
        assert!(!run(&e, &[1]).unwrap().ran_on_gpu);
        assert_eq!(e.gpu().unwrap().compute.calls.get(), 0);
        assert_eq!(
            e.backend(),
            Backend::Cpu {
                why: CpuWhy::Chosen
            }
        );
    }

    #[test]
    fn an_intervention_brings_the_unmodified_models_trace_from_the_cpu() {
        let e = Engine::new(gpu(vec![], false), Fake::new([]), Preference::WebGpu);
        let opts = AttentionOptions {
            ablate: [(0, 1)].into(),
            ..AttentionOptions::default()
        };
        let r = ready(e.forward(&[1, 2], &opts)).unwrap();
        assert!(r.ran_on_gpu);
        assert_eq!(r.baseline.unwrap().options, AttentionOptions::default());
        assert_eq!(r.trace.options, opts);
        assert_eq!(e.cpu().baselines.get(), 1);
        assert!(run(&e, &[1]).unwrap().baseline.is_none());
        assert_eq!(e.cpu().baselines.get(), 1);
    }

    #[test]
    fn preferences_round_trip_through_their_codes() {
        for p in Preference::ALL {
            assert_eq!(Preference::from_code(p.code()), Some(p));
        }
        assert_eq!(Preference::from_code("gpu"), None);
    }
}
