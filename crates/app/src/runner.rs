//! Runs the model for the page: one forward at a time, the newest request next, older
//! results dropped. WebGPU when the browser gives an adapter, else the CPU reference; a GPU
//! failure switches to the CPU for good and re-runs the request there.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use attnlab_gpu::GpuEngine;
use attnlab_model::{forward_incremental, AttentionOptions, Bundle, Trace};
use yew::Callback;

use crate::dom::now;
use crate::state::Shown;

thread_local! {
    static NEXT_GENERATION: Cell<u64> = const { Cell::new(0) };
}

/// What a finished request reports.
pub enum Outcome {
    Shown(Shown),
    Error(String),
    /// The GPU failed with this message; the request is being re-run on the CPU.
    GpuFailed(String),
}

struct Job {
    generation: u64,
    text: String,
    opts: AttentionOptions,
    input_at: f64,
}

pub struct Runner {
    pub bundle: Bundle,
    gpu: RefCell<Option<GpuEngine>>,
    /// Set while a GPU forward is in flight (the engine is taken out of `gpu` meanwhile).
    gpu_in_use: Cell<bool>,
    cpu_prev: RefCell<Option<Rc<Trace>>>,
    /// The unmodified model's last trace (the baseline of the Δ probabilities), CPU-computed.
    base_prev: RefCell<Option<Rc<Trace>>>,
    /// Set when another model replaced this runner's: its results are no longer reported.
    retired: Cell<bool>,
    latest: Cell<u64>,
    pending: RefCell<Option<Job>>,
    busy: Cell<bool>,
    lose_gpu: Cell<bool>,
    on_outcome: Callback<Outcome>,
}

impl Runner {
    pub fn new(bundle: Bundle, gpu: Option<GpuEngine>, on_outcome: Callback<Outcome>) -> Rc<Self> {
        Rc::new(Runner {
            bundle,
            gpu: RefCell::new(gpu),
            gpu_in_use: Cell::new(false),
            cpu_prev: RefCell::new(None),
            base_prev: RefCell::new(None),
            retired: Cell::new(false),
            latest: Cell::new(0),
            pending: RefCell::new(None),
            busy: Cell::new(false),
            lose_gpu: Cell::new(false),
            on_outcome,
        })
    }

    pub fn has_gpu(&self) -> bool {
        self.gpu_in_use.get() || self.gpu.borrow().is_some()
    }

    /// Destroys the GPU device before the next forward (the fault-injection hook the
    /// end-to-end tests use to check the CPU fallback).
    pub fn lose_gpu(&self) {
        self.lose_gpu.set(true);
    }

    /// Stops reporting results (another model took over).
    pub fn retire(&self) {
        self.retired.set(true);
        self.pending.borrow_mut().take();
    }

    /// Queues a forward of `text`; returns its generation. Only the newest queued request
    /// runs next, and a result is reported only if no newer request came in meanwhile.
    pub fn submit(self: &Rc<Self>, text: String, opts: AttentionOptions, input_at: f64) -> u64 {
        // numbered across runners, so a new model's results come after the old one's
        let generation = NEXT_GENERATION.with(|g| {
            let n = g.get() + 1;
            g.set(n);
            n
        });
        self.latest.set(generation);
        *self.pending.borrow_mut() = Some(Job {
            generation,
            text,
            opts,
            input_at,
        });
        if !self.busy.get() {
            self.busy.set(true);
            let me = self.clone();
            wasm_bindgen_futures::spawn_local(async move {
                loop {
                    let job = me.pending.borrow_mut().take();
                    let Some(job) = job else { break };
                    let outcome = me.run(&job).await;
                    if job.generation == me.latest.get() && !me.retired.get() {
                        me.on_outcome.emit(outcome);
                    }
                }
                me.busy.set(false);
            });
        }
        generation
    }

    async fn run(&self, job: &Job) -> Outcome {
        let tokens = match self.bundle.tokenizer.encode(&job.text) {
            Ok(t) => t,
            Err(e) => return Outcome::Error(e.to_string()),
        };
        if tokens.is_empty() {
            return Outcome::Error(String::new());
        }
        let ids: Vec<u32> = tokens.iter().map(|t| t.id).collect();
        let started = now();
        let engine = self.gpu.borrow_mut().take();
        let mut cpu_because = None;
        let (trace, incremental) = match engine {
            Some(mut engine) => {
                self.gpu_in_use.set(true);
                if self.lose_gpu.replace(false) {
                    engine.destroy_device();
                }
                let result = engine.forward(&ids, &job.opts).await;
                self.gpu_in_use.set(false);
                match result {
                    Ok(trace) => {
                        let inc = engine.last_was_incremental();
                        *self.gpu.borrow_mut() = Some(engine);
                        (Rc::new(trace), inc)
                    }
                    Err(attnlab_gpu::GpuError::Model(e)) => {
                        *self.gpu.borrow_mut() = Some(engine);
                        return Outcome::Error(e.to_string());
                    }
                    // a text longer than a big model's GPU buffers: this one on the CPU
                    Err(e @ attnlab_gpu::GpuError::TooLong { .. }) => {
                        *self.gpu.borrow_mut() = Some(engine);
                        cpu_because = Some(e.to_string());
                        match self.cpu(&ids, &job.opts) {
                            Ok(r) => r,
                            Err(e) => return Outcome::Error(e),
                        }
                    }
                    Err(e) => {
                        // the engine is dropped: every later request runs on the CPU
                        self.on_outcome.emit(Outcome::GpuFailed(e.to_string()));
                        match self.cpu(&ids, &job.opts) {
                            Ok(r) => r,
                            Err(e) => return Outcome::Error(e),
                        }
                    }
                }
            }
            None => match self.cpu(&ids, &job.opts) {
                Ok(r) => r,
                Err(e) => return Outcome::Error(e),
            },
        };
        let forward_ms = now() - started;
        // with an intervention, the unmodified model too (on the CPU, incremental like the
        // main run): the next-token view shows the change in probability against it
        let baseline = if job.opts == AttentionOptions::default() {
            None
        } else {
            let prev = self.base_prev.borrow().clone();
            match forward_incremental(
                &self.bundle.model,
                prev.as_deref(),
                &ids,
                &AttentionOptions::default(),
            ) {
                Ok((base, _)) => {
                    let base = Rc::new(base);
                    *self.base_prev.borrow_mut() = Some(base.clone());
                    Some(base)
                }
                Err(e) => return Outcome::Error(e.to_string()),
            }
        };
        Outcome::Shown(Shown {
            cpu_because,
            baseline,
            generation: job.generation,
            text: job.text.clone(),
            tokens: Rc::new(tokens),
            trace,
            forward_ms,
            incremental,
            input_at: job.input_at,
        })
    }

    fn cpu(&self, ids: &[u32], opts: &AttentionOptions) -> Result<(Rc<Trace>, bool), String> {
        let prev = self.cpu_prev.borrow().clone();
        let (trace, inc) = forward_incremental(&self.bundle.model, prev.as_deref(), ids, opts)
            .map_err(|e| e.to_string())?;
        let trace = Rc::new(trace);
        *self.cpu_prev.borrow_mut() = Some(trace.clone());
        Ok((trace, inc))
    }
}
