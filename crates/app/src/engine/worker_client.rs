//! The CPU backend as the page sees it: a Web Worker (`attnlab-worker`, see `crate::worker`)
//! that runs the CPU reference. Requests go as messages; each Trace comes back as one
//! transferred buffer and is copied once into the page's memory (`wire::rebuild`). A worker
//! that crashes is noticed (its `error` event) and replaced by `restart`, which loads the
//! model into a new one from the copy kept here. A load is awaited: the worker reads and
//! checks the model, and a model it refuses leaves the one before it running.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use attnlab_model::roles::Scores;
use attnlab_model::AttentionOptions;
use js_sys::{ArrayBuffer, Promise, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{ErrorEvent, MessageEvent, Worker};

use super::protocol::{self, Files, Reply, Request};
use super::wire;
use super::{Compute, ComputeError, Computed, CpuCompute, FlowOf, LensOf, Slim};
use crate::dom::{js_err, now};

/// The worker's script (web/cpu-worker.js, beside index.html; it loads the
/// `attnlab-worker` binary's wasm).
pub const WORKER_URL: &str = "./cpu-worker.js";

/// Where a request's answer goes, once it is there.
type Answer = Rc<RefCell<Option<Result<Reply, ComputeError>>>>;

/// A load waiting for the worker to say it is done: its number, and where the outcome goes
/// (`Some(error)` when it failed).
struct LoadWaiting {
    load_id: u32,
    outcome: Rc<RefCell<Option<Result<(), String>>>>,
    wake: js_sys::Function,
}

impl LoadWaiting {
    fn answer(self, a: Result<(), String>) {
        *self.outcome.borrow_mut() = Some(a);
        let _ = self.wake.call0(&JsValue::NULL);
    }
}

/// The request waiting for its answer.
struct Waiting {
    id: u32,
    answer: Answer,
    /// Wakes the request (its promise resolves once the answer is in).
    wake: js_sys::Function,
}

impl Waiting {
    fn answer(self, a: Result<Reply, ComputeError>) {
        *self.answer.borrow_mut() = Some(a);
        let _ = self.wake.call0(&JsValue::NULL);
    }
}

type Handlers = (
    Closure<dyn FnMut(MessageEvent)>,
    Closure<dyn FnMut(ErrorEvent)>,
);

#[derive(Default)]
struct Inner {
    worker: RefCell<Option<Worker>>,
    /// The model files, kept to load a restarted worker. They travel to the worker with each
    /// load and come back once it has read them (transferred both ways: the page never copies
    /// a big model's weights in one piece).
    files: RefCell<Option<Files>>,
    /// The files of the model loaded before the one now loading: put back if the worker
    /// refuses the new one.
    previous: RefCell<Option<Files>>,
    /// Numbers the loads, so that files coming back from an older load are not kept.
    load_id: Cell<u32>,
    loading: RefCell<Option<LoadWaiting>>,
    waiting: RefCell<Option<Waiting>>,
    next_id: Cell<u32>,
    /// Why the current worker died (until it is restarted).
    crashed: RefCell<Option<String>>,
    /// How many workers were started (the first and each restart).
    started: Cell<u32>,
    /// How many models were loaded after the first (each `load`), and the number of the one
    /// the worker is sent (the next one while a load is on, else the current one).
    model: Cell<u32>,
    loading_model: Cell<u32>,
    handlers: RefCell<Option<Handlers>>,
    /// The buffer the last trace came in, sent back with the next request for the worker to
    /// fill again (transferred both ways, never copied).
    spare: RefCell<Option<ArrayBuffer>>,
}

/// A copy of `bytes` outside wasm memory, made in pieces with a pause between them (a big
/// model's weights would otherwise block the page for one long copy).
pub async fn js_bytes(bytes: &[u8]) -> Uint8Array {
    const CHUNK: usize = 16 << 20;
    let out = Uint8Array::new_with_length(bytes.len() as u32);
    for (i, chunk) in bytes.chunks(CHUNK).enumerate() {
        if i > 0 {
            crate::dom::next_task().await;
        }
        let at = (i * CHUNK) as u32;
        out.subarray(at, at + chunk.len() as u32).copy_from(chunk);
    }
    out
}

impl Inner {
    fn fail_waiting(&self, why: &str) {
        super::progress::report(None);
        if let Some(w) = self.waiting.borrow_mut().take() {
            w.answer(Err(ComputeError::Crashed(why.into())));
        }
    }

    fn on_message(&self, data: JsValue) {
        let reply = match Reply::from_js(&data) {
            Ok(r) => r,
            Err(e) => return self.fail_waiting(&format!("the CPU worker's answer: {e}")),
        };
        let id = match &reply {
            // the model files, back from the worker after a load (done or failed); a load
            // error is heard of by the next request, from the worker
            Reply::Loaded {
                load_id,
                files,
                error,
            } => {
                if *load_id != self.load_id.get() {
                    return;
                }
                let outcome = match error {
                    None => {
                        *self.files.borrow_mut() = files.clone();
                        self.previous.borrow_mut().take();
                        Ok(())
                    }
                    // the worker kept the model it had: so are its files kept here
                    Some(e) => {
                        *self.files.borrow_mut() = self.previous.borrow_mut().take();
                        Err(e.clone())
                    }
                };
                if let Some(w) = self.loading.borrow_mut().take() {
                    if w.load_id == *load_id {
                        w.answer(outcome);
                    }
                }
                return;
            }
            // a long forward's progress, for the bar under the text box
            Reply::Progress { id, layers_done } => {
                if matches!(&*self.waiting.borrow(), Some(w) if w.id == *id) {
                    super::progress::report(Some(*layers_done as usize));
                }
                return;
            }
            Reply::Trace { id, .. }
            | Reply::Lens { id, .. }
            | Reply::Flow { id, .. }
            | Reply::Probe { id, .. } => Some(*id),
            Reply::Error { id, .. } => *id,
        };
        // an answer to no waiting request is dropped
        let mine = matches!((&*self.waiting.borrow(), id), (Some(w), Some(id)) if w.id == id);
        if !mine {
            return;
        }
        let Some(w) = self.waiting.borrow_mut().take() else {
            return;
        };
        super::progress::report(None);
        w.answer(match reply {
            Reply::Error { message, .. } => Err(ComputeError::Input(message)),
            r => Ok(r),
        });
    }

    fn on_error(&self, message: String) {
        let why = format!("the CPU worker stopped: {message}");
        if let Some(w) = self.worker.borrow_mut().take() {
            w.terminate();
        }
        *self.crashed.borrow_mut() = Some(why.clone());
        self.fail_waiting(&why);
        // a load in flight died with the worker (its files with it): the model before it is
        // the one a restart loads
        if let Some(w) = self.loading.borrow_mut().take() {
            if self.files.borrow().is_none() {
                *self.files.borrow_mut() = self.previous.borrow_mut().take();
            }
            w.answer(Err(why));
        }
    }
}

/// The page's handle on the worker for one model: a handle made before the worker took
/// another model (`load`) asks nothing more of it, so that a replaced model's last requests
/// cannot push the new model's requests aside.
#[derive(Clone)]
pub struct CpuWorker {
    inner: Rc<Inner>,
    /// The model this handle is for (`Inner::model`'s count when it was made).
    model: u32,
}

impl CpuWorker {
    /// Starts a worker with this model; done once the worker has read and checked it.
    pub async fn start(files: Files) -> Result<CpuWorker, String> {
        let me = CpuWorker {
            inner: Rc::new(Inner::default()),
            model: 0,
        };
        *me.inner.files.borrow_mut() = Some(files);
        let load_id = me.spawn()?;
        me.loaded(load_id).await?;
        Ok(me)
    }

    /// Gives the running worker another model (no new worker, so nothing is fetched again);
    /// done once the worker has read and checked it, with the handle for the new model (the
    /// old handles ask nothing more). If it refuses the model, it keeps the one it had.
    pub async fn load(&self, files: Files) -> Result<CpuWorker, String> {
        let previous = self.inner.files.borrow_mut().replace(files);
        *self.inner.previous.borrow_mut() = previous;
        let worker = self.inner.worker.borrow().clone();
        self.inner.loading_model.set(self.inner.model.get() + 1);
        let posted = match worker {
            Some(w) => self.post_model(&w),
            None => self.spawn(),
        };
        let outcome = match posted {
            Ok(load_id) => self.loaded(load_id).await,
            Err(e) => Err(e),
        };
        if let Err(e) = outcome {
            // the worker keeps the model it had; so does a restart
            self.inner.loading_model.set(self.inner.model.get());
            return Err(e);
        }
        self.inner.model.set(self.inner.loading_model.get());
        Ok(CpuWorker {
            inner: self.inner.clone(),
            model: self.inner.model.get(),
        })
    }

    /// The model's files, while they are here (not while the worker reads them).
    pub fn files(&self) -> Option<Files> {
        self.inner.files.borrow().clone()
    }

    /// Waits for the worker's answer to load `load_id`.
    async fn loaded(&self, load_id: u32) -> Result<(), String> {
        let outcome: Rc<RefCell<Option<Result<(), String>>>> = Rc::default();
        let inner = self.inner.clone();
        let promise = Promise::new(&mut |wake, _| {
            if let Some(w) = inner.loading.borrow_mut().take() {
                w.answer(Err("superseded by another model".into()));
            }
            *inner.loading.borrow_mut() = Some(LoadWaiting {
                load_id,
                outcome: outcome.clone(),
                wake,
            });
        });
        let _ = JsFuture::from(promise).await;
        let answer = outcome.borrow_mut().take();
        answer.unwrap_or_else(|| Err("the CPU worker did not answer the load".into()))
    }

    /// Sends the worker the model files (they come back once it has read them); returns
    /// the load's number.
    fn post_model(&self, worker: &Worker) -> Result<u32, String> {
        let Some(files) = self.inner.files.borrow_mut().take() else {
            return Err("the model files are not here: they were in a worker that stopped while reading them".into());
        };
        let load_id = self.inner.load_id.get() + 1;
        self.inner.load_id.set(load_id);
        let (msg, transfer) = Request::Load {
            load_id,
            model: self.inner.loading_model.get(),
            files,
        }
        .to_js()?;
        worker
            .post_message_with_transfer(&msg, &transfer)
            .map_err(js_err)?;
        Ok(load_id)
    }

    /// How many workers were started so far (1 until the first restart).
    pub fn started(&self) -> u32 {
        self.inner.started.get()
    }

    /// Starts a new worker and sends it the model; returns the load's number.
    fn spawn(&self) -> Result<u32, String> {
        let worker = Worker::new(WORKER_URL).map_err(js_err)?;
        let weak = Rc::downgrade(&self.inner);
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new({
            let weak = weak.clone();
            move |e: MessageEvent| {
                if let Some(inner) = weak.upgrade() {
                    inner.on_message(e.data());
                }
            }
        });
        let on_error = Closure::<dyn FnMut(ErrorEvent)>::new(move |e: ErrorEvent| {
            e.prevent_default();
            if let Some(inner) = weak.upgrade() {
                let msg = e.message();
                inner.on_error(if msg.is_empty() {
                    "an error".into()
                } else {
                    msg
                });
            }
        });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        let load_id = self.post_model(&worker)?;
        *self.inner.handlers.borrow_mut() = Some((on_message, on_error));
        if let Some(old) = self.inner.worker.borrow_mut().replace(worker) {
            old.terminate();
        }
        self.inner.crashed.borrow_mut().take();
        self.inner.started.set(self.inner.started.get() + 1);
        Ok(load_id)
    }

    /// Makes the worker panic (the end-to-end tests' fault injection).
    pub fn crash_for_test(&self) {
        if let (Some(w), Ok((msg, _))) =
            (self.inner.worker.borrow().as_ref(), Request::Crash.to_js())
        {
            let _ = w.post_message(&msg);
        }
    }

    /// Posts `request` (numbered `id`) and waits for its answer.
    async fn ask(&self, id: u32, request: Request) -> Result<Reply, ComputeError> {
        if self.model != self.inner.model.get() {
            return Err(ComputeError::Input("superseded by another model".into()));
        }
        if let Some(why) = self.inner.crashed.borrow().clone() {
            return Err(ComputeError::Crashed(why));
        }
        let worker = self
            .inner
            .worker
            .borrow()
            .clone()
            .ok_or_else(|| ComputeError::Crashed("the CPU worker is not running".into()))?;
        let (msg, transfer) = request.to_js().map_err(ComputeError::Input)?;
        let answer: Answer = Rc::default();
        let inner = self.inner.clone();
        let promise = Promise::new(&mut |wake, _| {
            // a request still waiting (a replaced model's last one) is answered with an error
            if let Some(w) = inner.waiting.borrow_mut().take() {
                w.answer(Err(ComputeError::Input(
                    "superseded by another model".into(),
                )));
            }
            *inner.waiting.borrow_mut() = Some(Waiting {
                id,
                answer: answer.clone(),
                wake,
            });
        });
        worker
            .post_message_with_transfer(&msg, &transfer)
            .map_err(|e| ComputeError::Crashed(js_err(e)))?;
        let _ = JsFuture::from(promise).await;
        let answer = answer.borrow_mut().take();
        answer.unwrap_or_else(|| {
            Err(ComputeError::Crashed(
                "the CPU worker did not answer".into(),
            ))
        })
    }

    fn next_id(&self) -> u32 {
        let id = self.inner.next_id.get() + 1;
        self.inner.next_id.set(id);
        id
    }

    /// A forward (or the baseline) on the worker: a lite trace for the views, with `full`
    /// every field, with `slim` a slim trace of those heads.
    async fn request(
        &self,
        baseline: bool,
        ids: &[u32],
        opts: &AttentionOptions,
        (full, slim): (bool, Slim<'_>),
    ) -> Result<Computed, ComputeError> {
        let id = self.next_id();
        let request = Request::Forward {
            id,
            model: self.model,
            ids: ids.to_vec(),
            opts: opts.clone(),
            baseline,
            full,
            slim: slim.map(<[_]>::to_vec),
            spare: self.inner.spare.borrow_mut().take(),
        };
        let started = now();
        let Reply::Trace {
            header,
            data,
            incremental,
            worker_ms,
            ..
        } = self.ask(id, request).await?
        else {
            return Err(ComputeError::Input("the CPU worker sent no trace".into()));
        };
        let complete = !header.lite && !header.slim;
        let trace = wire::rebuild(header, data.length() as usize, |at, len| {
            data.subarray(at as u32, (at + len) as u32).to_vec()
        })
        .map_err(ComputeError::Input)?;
        *self.inner.spare.borrow_mut() = Some(data.buffer());
        Ok(Computed {
            trace: Rc::new(trace),
            incremental,
            ms: now() - started,
            engine_ms: Some(worker_ms).filter(|ms| ms.is_finite()),
            complete,
        })
    }
}

impl Compute for CpuWorker {
    async fn forward(
        &self,
        ids: &[u32],
        opts: &AttentionOptions,
        slim: Slim<'_>,
    ) -> Result<Computed, ComputeError> {
        self.request(false, ids, opts, (false, slim)).await
    }
}

impl CpuCompute for CpuWorker {
    async fn baseline(&self, ids: &[u32], slim: Slim<'_>) -> Result<Computed, ComputeError> {
        self.request(true, ids, &AttentionOptions::default(), (false, slim))
            .await
    }

    async fn full(&self, ids: &[u32], opts: &AttentionOptions) -> Result<Computed, ComputeError> {
        self.request(false, ids, opts, (true, None)).await
    }

    async fn lens(&self, of: &LensOf) -> Result<Vec<f32>, ComputeError> {
        let id = self.next_id();
        let request = Request::Lens {
            id,
            model: self.model,
            of: of.clone(),
        };
        match self.ask(id, request).await? {
            Reply::Lens { data, .. } => Ok(data.to_vec()),
            _ => Err(ComputeError::Input("the CPU worker sent no lens".into())),
        }
    }

    async fn flow(&self, of: &FlowOf) -> Result<Vec<f32>, ComputeError> {
        let id = self.next_id();
        let request = Request::Flow {
            id,
            model: self.model,
            of: of.clone(),
        };
        match self.ask(id, request).await? {
            Reply::Flow { data, .. } => Ok(data.to_vec()),
            _ => Err(ComputeError::Input(
                "the CPU worker sent no attention flow".into(),
            )),
        }
    }

    async fn probe(&self, ids: &[u32], half: usize) -> Result<Vec<Scores>, ComputeError> {
        let id = self.next_id();
        let request = Request::Probe {
            id,
            model: self.model,
            ids: ids.to_vec(),
            half,
        };
        match self.ask(id, request).await? {
            Reply::Probe { data, .. } => Ok(protocol::probe_scores_from_wire(&data.to_vec())),
            _ => Err(ComputeError::Input(
                "the CPU worker sent no probe scores".into(),
            )),
        }
    }

    fn restart(&self) {
        // the load's outcome is heard of by the request run again
        if let Err(e) = self.spawn() {
            *self.inner.crashed.borrow_mut() =
                Some(format!("the CPU worker could not restart: {e}"));
        }
    }
}
