//! The page's engine, as a hook: `use_engine` loads the bundled model, starts the engines
//! (WebGPU where the browser has it, the CPU worker always), installs them behind the request
//! queue and runs the state's request (`State::request`) whenever it changes. The
//! `EngineHandle` it hands the page asks what is not a request (the lens of a result, the
//! whole trace for an export, a token's text) and loads the user's own model. Results come
//! back as actions on the page's state.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use attnlab_model::roles::{Probe, PROBE_LEN, PROBE_SEED};
use attnlab_model::{AttentionOptions, Bundle};
use yew::prelude::*;

use crate::components::Labels;
use crate::dom::now;
use crate::engine::gpu::Gpu;
use crate::engine::page::{Job, Outcome, PageEngine};
use crate::engine::worker_client::CpuWorker;
use crate::engine::{Engine, Preference};
use crate::loader::OwnLoad;
use crate::loader::{self, ModelBytes};
use crate::runner::Runner;
use crate::state::{plan, Action, ModelAction, ModelInfo, Plan, Request, State};
use crate::test_hooks;

struct Inner {
    dispatch: UseReducerDispatcher<State>,
    vocab: UseStateSetter<Labels>,
    runner: RefCell<Option<Rc<Runner<PageEngine>>>>,
    /// Counts the engines installed: each result says which computed it.
    installed: Cell<u64>,
}

/// What the page holds of the engine. Equal only to itself: holding it never re-renders.
#[derive(Clone)]
pub struct EngineHandle(Rc<Inner>);

impl PartialEq for EngineHandle {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

impl EngineHandle {
    /// Answers the page's request as `plan` says, given the request the result on screen
    /// answers (`shown`, when the engines now running computed it): the newest request runs
    /// next and older results are dropped. `input_at` is the time of the input event.
    fn ask(&self, asked: &Request, shown: Option<&Request>, input_at: f64) {
        let Some(r) = self.current() else {
            return; // no model yet: its engines ask once installed
        };
        let job = match plan(asked, shown) {
            Plan::Withdraw => return r.withdraw(),
            Plan::Run => Job::Text {
                asked: Rc::new(asked.clone()),
                input_at,
            },
            Plan::Generate => Job::Generate {
                asked: Rc::new(asked.clone()),
                run: Vec::new(),
                input_at,
            },
        };
        r.engine().engine.set_preference(asked.preference);
        if let (_, Some(d)) = r.submit(job) {
            wasm_bindgen_futures::spawn_local(d);
        }
    }

    /// Asks the CPU worker for the whole trace of `ids` with `opts` (a lite result's, for
    /// the whole-Trace export); `done` gets it, or why not.
    pub fn full_trace(
        &self,
        ids: Vec<u32>,
        opts: AttentionOptions,
        done: Callback<Result<Rc<attnlab_model::Trace>, String>>,
    ) {
        match self.current() {
            Some(r) => {
                if let (_, Some(d)) = r.submit_background(Job::Full { ids, opts, done }) {
                    wasm_bindgen_futures::spawn_local(d);
                }
            }
            None => done.emit(Err("no model is running".into())),
        }
    }

    /// Asks for the logit lens of the result `of` at `position` from its residual rows
    /// (`attnlab_model::lens::stage_rows`); it arrives as `Action::Lens`, unless a newer text
    /// was asked for meanwhile.
    pub fn lens(&self, of: u64, position: usize, rows: Vec<f32>) {
        if let Some(r) = self.current() {
            if let (_, Some(d)) = r.submit_follow_up(Job::Lens { of, position, rows }, of) {
                wasm_bindgen_futures::spawn_local(d);
            }
        }
    }

    /// The text of token `id` (None for a partial character, or before a model runs).
    pub fn token_text(&self, id: u32) -> Option<String> {
        self.current().and_then(|r| r.engine().token_text(id))
    }

    /// The engine now running (for the tests' fault-injection hooks).
    pub fn current(&self) -> Option<Rc<Runner<PageEngine>>> {
        self.0.runner.borrow().clone()
    }

    /// Starts the engines for `bundle` (whose files are `bytes`) and puts them in place of
    /// the current ones; then runs the last text on them.
    async fn install(
        &self,
        bundle: Bundle,
        bytes: ModelBytes,
        preference: Preference,
    ) -> Result<(), String> {
        let Bundle { model, tokenizer } = bundle;
        let context = model.config.n_positions;
        let probe = Probe::new(&tokenizer, PROBE_LEN, PROBE_SEED, context);
        let gpu = Gpu::start(&model).await;
        // the page keeps no weights: the GPU has its copy, the worker gets its own
        drop(model);
        // the worker already running takes the new model; the first one is started here
        let running = self.current().map(|r| r.engine().engine.cpu().clone());
        let cpu = match running {
            Some(w) => w.load(&bytes.config, &bytes.weights).await.map(|()| w),
            None => CpuWorker::start(&bytes.config, &bytes.weights).await,
        }
        .map_err(|e| format!("the CPU worker did not start: {e}"))?;
        drop(bytes);
        self.0.vocab.set(Labels(Rc::new(
            (0..tokenizer.vocab_size() as u32)
                .map(|id| tokenizer.display_id(id))
                .collect(),
        )));
        let engine = Engine::new(gpu, cpu, preference);
        let backend = engine.backend();
        let dispatch = self.0.dispatch.clone();
        let installed = self.0.installed.get() + 1;
        self.0.installed.set(installed);
        // numbered after the old runner's, so the new model's results come after its
        let after = self.current().map_or(0, |r| r.last_number());
        let runner = Runner::new(
            PageEngine::new(tokenizer, engine, context),
            after,
            move |generation, out| {
                dispatch.dispatch(match out {
                    Outcome::Shown(mut s) => {
                        s.generation = generation;
                        s.engine = installed;
                        s.result_at = now();
                        Action::Result(s)
                    }
                    Outcome::Error(error) => Action::RunError(error),
                    Outcome::ContextFull(nonce) => Action::ContextFull(nonce),
                    Outcome::Probe(p) => Action::Probe(p.map(Rc::new)),
                    Outcome::Lens(l) => Action::Lens(Rc::new(l)),
                    // the job handed its result over itself
                    Outcome::Delivered => return,
                })
            },
        );
        if let Some(old) = self.0.runner.borrow_mut().replace(runner) {
            old.retire();
        }
        // the state's request runs on the new engines (`use_engine`'s effect)
        self.0
            .dispatch
            .dispatch(Action::Model(ModelAction::EngineReady(backend, installed)));
        // the head-role probe runs once the text's result is in
        if let Some(r) = self.current() {
            if let (_, Some(d)) = r.submit_background(Job::Probe(probe)) {
                wasm_bindgen_futures::spawn_local(d);
            }
        }
        Ok(())
    }

    /// Reads the user's files, validates them as a model and, only if that succeeds, replaces
    /// the current model. The current model keeps running meanwhile and after any error.
    pub async fn load_own(self, files: Vec<web_sys::File>, keep: bool, preference: Preference) {
        let d = self.0.dispatch.clone();
        let status = move |o: OwnLoad| d.dispatch(Action::Model(ModelAction::Own(o)));
        let (bytes, name) = match loader::read_own(&files, &status).await {
            Ok(x) => x,
            Err(o) => return status(o),
        };
        self.load_bytes(bytes, name, keep, preference).await
    }

    /// Loads the model kept on this device (`kept`).
    pub async fn load_kept(self, preference: Preference) {
        let d = self.0.dispatch.clone();
        match crate::kept::load().await {
            Ok(Some((bytes, name))) => self.load_bytes(bytes, name, false, preference).await,
            Ok(None) => d.dispatch(Action::Model(ModelAction::Kept(None))),
            Err(e) => d.dispatch(Action::Model(ModelAction::Own(OwnLoad::Failed(e)))),
        }
    }

    /// Deletes the model kept on this device.
    pub async fn forget_kept(self) {
        let d = self.0.dispatch.clone();
        let k = match crate::kept::forget().await {
            Ok(()) => None,
            Err(e) => Some(Err(e)),
        };
        d.dispatch(Action::Model(ModelAction::Kept(k)));
    }

    /// Validates and installs a model's files; keeps them on this device first when asked
    /// (a bundle that fails to validate is never kept).
    async fn load_bytes(
        self,
        bytes: loader::ModelBytes,
        name: String,
        keep: bool,
        preference: Preference,
    ) {
        let d = self.0.dispatch.clone();
        let status = move |o: OwnLoad| d.dispatch(Action::Model(ModelAction::Own(o)));
        let bundle = match loader::validate(&bytes, |done, total| {
            status(OwnLoad::Checking { done, total })
        })
        .await
        {
            Ok(b) => b,
            Err(e) => return status(OwnLoad::Failed(e)),
        };
        let info = model_info(&bundle);
        if keep {
            let k = crate::kept::keep(&name, &bytes).await;
            self.0
                .dispatch
                .dispatch(Action::Model(ModelAction::Kept(Some(k))));
        }
        if let Err(e) = self.install(bundle, bytes, preference).await {
            return status(OwnLoad::Failed(e));
        }
        self.0
            .dispatch
            .dispatch(Action::Model(ModelAction::OwnLoaded(info, name)));
    }
}

fn model_info(bundle: &Bundle) -> ModelInfo {
    let config = bundle.model.config.clone();
    let has_ln_f = bundle.model.weights.ln_f.is_some();
    ModelInfo {
        n_params: config.n_params(has_ln_f),
        config,
        has_ln_f,
    }
}

async fn start(handle: EngineHandle, preference: Preference) {
    let d = handle.0.dispatch.clone();
    let fail = |e: String| d.dispatch(Action::Model(ModelAction::LoadFailed(e)));
    let progress = {
        let d = d.clone();
        move |loaded, total| d.dispatch(Action::Model(ModelAction::Progress { loaded, total }))
    };
    let bytes = match loader::fetch_bundled(progress).await {
        Ok(b) => b,
        Err(e) => return fail(e),
    };
    let bundle = match loader::validate(&bytes, |_, _| {}).await {
        Ok(b) => b,
        Err(e) => return fail(e),
    };
    d.dispatch(Action::Model(ModelAction::Loaded(model_info(&bundle))));
    // a model kept on this device from an earlier visit is offered (not loaded)
    {
        let d = d.clone();
        wasm_bindgen_futures::spawn_local(async move {
            if let Some(k) = crate::kept::info().await {
                d.dispatch(Action::Model(ModelAction::Kept(Some(Ok(k)))));
            }
        });
    }
    if let Err(e) = handle.install(bundle, bytes, preference).await {
        return fail(e);
    }
    let (gpu, cpu) = (handle.clone(), handle.clone());
    test_hooks::expose(test_hooks::Engines {
        gpu: Rc::new(move || gpu.current().and_then(|r| r.engine().engine.gpu())),
        cpu: Rc::new(move || cpu.current().map(|r| r.engine().engine.cpu().clone())),
    });
}

/// The page's engine: starts loading the bundled model on first render, and runs the page's
/// request whenever it changes (or new engines start): the state's `request()`, the number
/// of the engines running (`ModelStatus::engines`), the result on screen (which engines
/// computed it, and what it answers) and the time of the input event that asked.
#[hook]
pub fn use_engine(
    dispatch: UseReducerDispatcher<State>,
    request: Request,
    engines: u64,
    shown: Option<(u64, Rc<Request>)>,
    input_at: Option<f64>,
) -> (EngineHandle, Labels) {
    let vocab = use_state(|| Labels(Rc::new(Vec::new())));
    let handle = {
        let setter = vocab.setter();
        use_memo((), move |_| {
            EngineHandle(Rc::new(Inner {
                dispatch,
                vocab: setter,
                runner: RefCell::new(None),
                installed: Cell::new(0),
            }))
        })
    };
    {
        let handle = (*handle).clone();
        let preference = request.preference;
        use_effect_with((), move |_| {
            wasm_bindgen_futures::spawn_local(start(handle, preference));
        });
    }
    {
        let handle = (*handle).clone();
        use_effect_with((request, engines), move |(request, engines)| {
            let shown = shown.filter(|(e, _)| e == engines);
            let at = input_at.unwrap_or_else(now);
            handle.ask(request, shown.as_ref().map(|(_, r)| &**r), at);
        });
    }
    ((*handle).clone(), (*vocab).clone())
}
