//! The page's engine, as a hook: `use_engine` loads the bundled model, starts the engines
//! (WebGPU where the browser has it, the CPU worker always), installs them behind the request
//! queue and runs the state's request (`State::request`) whenever it changes. The
//! `EngineHandle` it hands the page asks what is not a request (the lens of a result, the
//! whole trace for an export, a token's text) and loads the user's own model. Results come
//! back as actions on the page's state.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use attnlab_model::roles::{Probe, PROBE_LEN, PROBE_SEED};
use attnlab_model::{AttentionOptions, Dims};
use yew::prelude::*;

use crate::components::Labels;
use crate::dom::now;
use crate::engine::gpu::Gpu;
use crate::engine::page::{Job, Outcome, PageEngine, Sizes, Views};
use crate::engine::protocol::{Files, Format};
use crate::engine::worker_client::{js_bytes, CpuWorker};
use crate::engine::{CpuWhy, Engine, Preference};
use crate::engine::{FlowOf, LensOf};
use crate::kept::KeepFile;
use crate::loader::{self, ModelBytes, Own, OwnLoad, Prepared, Served};
use crate::runner::Runner;
use crate::state::{plan, Action, Arch, ModelAction, ModelInfo, ModelSource, Plan, Request, State};
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
    /// answers and its number (`shown`, when the engines now running computed it): the
    /// newest request runs next and older results are dropped. `input_at` is the time of the
    /// input event; `heads`, the views' heads (all a slim result brings).
    fn ask(&self, asked: &Request, heads: &Views, shown: Option<&OnScreen>, input_at: f64) {
        let Some(r) = self.current() else {
            return; // no model yet: its engines ask once installed
        };
        let job = match plan(asked, shown.map(|s| &*s.asked)) {
            Plan::Withdraw => {
                // (only when a result is on screen: it answers the request)
                if let Some(s) = shown {
                    r.withdraw(s.generation);
                }
                return;
            }
            Plan::Run => Job::Text {
                asked: Rc::new(asked.clone()),
                heads: heads.clone(),
                input_at,
            },
            Plan::Generate => Job::Generate {
                asked: Rc::new(asked.clone()),
                heads: heads.clone(),
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
    /// (`attnlab_model::lens::stage_rows`, or the worker's for a slim result: `LensOf`); it
    /// arrives as `Action::Lens` — or, its last stage alone (`last`: the next-token card's),
    /// as `Action::Prediction` — unless a newer text was asked for meanwhile.
    pub fn lens(&self, of: u64, position: usize, rows: LensOf) {
        if let Some(r) = self.current() {
            let job = if matches!(rows, LensOf::Position { last: true, .. }) {
                Job::Prediction { of, position, rows }
            } else {
                Job::Lens { of, position, rows }
            };
            if let (_, Some(d)) = r.submit_follow_up(job, of) {
                wasm_bindgen_futures::spawn_local(d);
            }
        }
    }

    /// Asks the CPU worker for the attention-flow strip of the slim result `of`; it arrives
    /// as `Action::Flow`, unless a newer text was asked for meanwhile.
    pub fn flow(&self, of: u64, ask: FlowOf) {
        if let Some(r) = self.current() {
            if let (_, Some(d)) = r.submit_follow_up(Job::Flow { of, ask }, of) {
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

    /// Starts the engines for a model and puts them in place of the current ones; then runs
    /// the last text on them. The worker reads and checks the model first: if it refuses
    /// it, the current engines stay.
    async fn install(&self, prepared: Prepared, preference: Preference) -> Result<(), String> {
        // the worker already running takes the new model; the first one is started here
        let running = self.current().map(|r| r.engine().engine.cpu().clone());
        let load = |files: Files| async move {
            match running {
                Some(w) => w.load(files).await,
                None => CpuWorker::start(files).await,
            }
        };
        let (tokenizer, (context, sizes), gpu, cpu) = match prepared {
            Prepared::Gpt2 { bundle, bytes } => {
                let attnlab_model::Bundle { model, tokenizer } = bundle;
                let gpu = Gpu::start(&model).await.map_err(CpuWhy::NoWebGpu);
                let c = &model.config;
                let sizes = Sizes {
                    dims: Dims::new(c, 0),
                    model_bytes: bytes.weights.len() as u64,
                };
                let context = (c.n_positions, sizes);
                // the page keeps no weights: the GPU has its copy, the worker gets its own
                drop(model);
                let ModelBytes {
                    config, weights, ..
                } = bytes;
                let files = Files {
                    format: Format::Gpt2,
                    config: js_bytes(&config).await,
                    weights: vec![js_bytes(&weights).await],
                };
                (tokenizer, context, gpu, load(files).await)
            }
            Prepared::Llama {
                config,
                tokenizer,
                files,
                ..
            } => {
                let sizes = Sizes {
                    dims: config.dims(0),
                    model_bytes: files.weights.iter().map(|w| w.length() as u64).sum(),
                };
                if preference == Preference::WebGpu {
                    // the page reads the weights one tensor at a time (before the files go
                    // to the worker, which takes their buffers), then uploads them to the
                    // GPU while the worker reads and checks its own copy
                    let model = files.llama_model();
                    let gpu = async {
                        match model {
                            Ok(model) => Gpu::start_llama(&model).await,
                            Err(e) => Err(CpuWhy::CpuOnlyModel(e)),
                        }
                    };
                    let (gpu, cpu) = futures_util::future::join(gpu, load(files)).await;
                    let context = (config.context, sizes);
                    (tokenizer, context, gpu, cpu)
                } else {
                    // the CPU worker's first result comes first; the GPU joins after it
                    let cpu = load(files).await;
                    let context = (config.context, sizes);
                    (tokenizer, context, Err(CpuWhy::GpuStarting), cpu)
                }
            }
        };
        let gpu_later = matches!(gpu, Err(CpuWhy::GpuStarting));
        let probe = Probe::new(&tokenizer, PROBE_LEN, PROBE_SEED, context);
        let cpu = cpu.map_err(|e| format!("the CPU worker did not load the model: {e}"))?;
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
            PageEngine::new(tokenizer, engine, context, sizes),
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
                    Outcome::Prediction(p) => Action::Prediction(Rc::new(p)),
                    Outcome::Flow(f) => Action::Flow(Rc::new(f)),
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
            if gpu_later {
                // once the first result is in and the page is idle (at the latest 10 s on)
                let me = self.clone();
                crate::dom::when_idle(10_000, move || {
                    wasm_bindgen_futures::spawn_local(me.start_gpu_later(r))
                });
            }
        }
        Ok(())
    }

    /// Starts the GPU engine of the Llama-family model `runner` runs on the CPU, from the
    /// files the worker gave back (the page reads the weights on its own thread, so after the
    /// first result); then the next request may run there.
    async fn start_gpu_later(self, runner: Rc<Runner<PageEngine>>) {
        let current = |me: &Self| me.current().is_some_and(|r| Rc::ptr_eq(&r, &runner));
        // a model loaded meanwhile has engines of its own
        if !current(&self) {
            return;
        }
        let engine = &runner.engine().engine;
        let Some(files) = engine.cpu().files() else {
            // the worker holds them (it restarts, or reads another model): later
            let me = self.clone();
            let runner = runner.clone();
            crate::dom::when_idle(10_000, move || {
                wasm_bindgen_futures::spawn_local(me.start_gpu_later(runner))
            });
            return;
        };
        let gpu = match files.llama_model() {
            Ok(model) => Gpu::start_llama(&model).await,
            Err(e) => Err(CpuWhy::CpuOnlyModel(e)),
        };
        if current(&self) {
            engine.attach_gpu(gpu);
            self.0
                .dispatch
                .dispatch(Action::Model(ModelAction::Backend(engine.backend())));
        }
    }

    /// Reports the loading of a model (the user's, a served or a Hub one) to the page.
    fn own_status(&self) -> impl Fn(OwnLoad) {
        let d = self.0.dispatch.clone();
        move |o| d.dispatch(Action::Model(ModelAction::Own(o)))
    }

    /// Reports a download's progress (bytes so far, the total when known).
    fn fetching(&self) -> impl Fn(u64, Option<u64>) {
        let status = self.own_status();
        move |loaded, total| {
            status(OwnLoad::Fetching {
                loaded,
                total: total.unwrap_or(0),
            })
        }
    }

    /// Reads the user's files, validates them as a model and, only if that succeeds, replaces
    /// the current model (and keeps the files it was read from on this device, when asked).
    /// The current model keeps running meanwhile and after any error.
    pub async fn load_own(self, files: Vec<web_sys::File>, keep: bool, preference: Preference) {
        let status = self.own_status();
        match loader::read_own(&files, &status).await {
            Ok((own, name, used)) => {
                let keep = keep.then(|| used.into_iter().map(KeepFile::from_file).collect());
                self.load_read(own, ModelSource::Own(name), keep, preference)
                    .await
            }
            Err(o) => status(o),
        }
    }

    /// Checks and installs a model read from files or the Hub; then keeps `keep` on this
    /// device, if given.
    async fn load_read(
        self,
        own: Own,
        source: ModelSource,
        keep: Option<Vec<KeepFile>>,
        preference: Preference,
    ) {
        match own {
            Own::Gpt2(bytes) => self.load_bytes(bytes, source, keep, preference).await,
            Own::Llama(prepared) => {
                self.load_prepared(*prepared, source, keep, preference)
                    .await
            }
        }
    }

    /// Fetches a Hugging Face model by id from `base`'s resolve URLs (with progress) and
    /// loads it (keeping its files on this device, when asked); a copy kept earlier is
    /// loaded instead of downloading it again.
    pub async fn load_hub(self, base: String, id: String, keep: bool, preference: Preference) {
        let status = self.own_status();
        let id = match loader::hub_id(&id) {
            Ok(id) => id,
            Err(e) => return status(OwnLoad::Failed(e)),
        };
        let progress = self.fetching();
        progress(0, None);
        if self.kept_is(ModelSource::Hub(id.clone())).await
            && self.clone().load_kept(preference).await
        {
            return;
        }
        match loader::fetch_hub(&base, &id, keep, progress).await {
            Ok((own, files)) => {
                self.load_read(own, ModelSource::Hub(id), files, preference)
                    .await
            }
            Err(e) => status(OwnLoad::Failed(e)),
        }
    }

    /// Downloads a model the serve command put beside the app (with progress) and loads it,
    /// keeping it on this device when asked; a copy kept earlier is loaded instead of
    /// downloading it again.
    pub async fn load_served(self, served: &'static Served, keep: bool, preference: Preference) {
        let status = self.own_status();
        let progress = self.fetching();
        progress(0, None);
        // busy from here: a second choice waits for this one
        if self.kept_is(ModelSource::Served(served.id)).await
            && self.clone().load_kept(preference).await
        {
            return;
        }
        let prepared = match loader::fetch_served(served, progress).await {
            Ok(p) => p,
            Err(e) => return status(OwnLoad::Failed(e)),
        };
        let keep = match keep.then(|| prepared.keep_files(served.file_name())) {
            Some(Ok(files)) => Some(files),
            Some(Err(e)) => {
                let d = &self.0.dispatch;
                d.dispatch(Action::Model(ModelAction::Kept(Some(Err(e)))));
                None
            }
            None => None,
        };
        self.load_prepared(prepared, ModelSource::Served(served.id), keep, preference)
            .await
    }

    /// Loads the bundled model again, in place of the current one.
    pub async fn load_bundled(self, preference: Preference) {
        let status = self.own_status();
        let progress = self.fetching();
        let bytes = match loader::fetch_bundled(progress).await {
            Ok(b) => b,
            Err(e) => return status(OwnLoad::Failed(e)),
        };
        let bundle = match loader::validate(&bytes, |_, _| {}).await {
            Ok(b) => b,
            Err(e) => return status(OwnLoad::Failed(e)),
        };
        self.load_prepared(
            Prepared::Gpt2 { bundle, bytes },
            ModelSource::Bundled,
            None,
            preference,
        )
        .await
    }

    /// Whether the model kept on this device is `source` (a served or Hub model).
    async fn kept_is(&self, source: ModelSource) -> bool {
        let code = source.code();
        code.is_some() && crate::kept::info().await.is_some_and(|k| k.source == code)
    }

    /// Loads the model kept on this device (`kept`): its files, read as the user's are; a
    /// served or Hub model is named as it was when kept. Whether its files were there and read
    /// (a served or Hub model is downloaded when not).
    pub async fn load_kept(self, preference: Preference) -> bool {
        let d = self.0.dispatch.clone();
        let status = self.own_status();
        match crate::kept::load().await {
            Ok(Some((files, info))) => match loader::read_own(&files, &status).await {
                Ok((own, name, _)) => {
                    let source = info
                        .source
                        .as_deref()
                        .and_then(ModelSource::from_code)
                        .unwrap_or(ModelSource::Own(name));
                    self.load_read(own, source, None, preference).await;
                    true
                }
                Err(o) => {
                    status(o);
                    false
                }
            },
            Ok(None) => {
                d.dispatch(Action::Model(ModelAction::Kept(None)));
                false
            }
            Err(e) => {
                d.dispatch(Action::Model(ModelAction::Own(OwnLoad::Failed(e))));
                false
            }
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

    /// Validates and installs a GPT-2-layout model's files; then keeps `keep` on this device,
    /// if given (a model that fails to load is never kept).
    async fn load_bytes(
        self,
        bytes: loader::ModelBytes,
        source: ModelSource,
        keep: Option<Vec<KeepFile>>,
        preference: Preference,
    ) {
        let status = self.own_status();
        let bundle = match loader::validate(&bytes, |done, total| {
            status(OwnLoad::Checking { done, total })
        })
        .await
        {
            Ok(b) => b,
            Err(e) => return status(OwnLoad::Failed(e)),
        };
        self.load_prepared(Prepared::Gpt2 { bundle, bytes }, source, keep, preference)
            .await
    }

    /// Installs a model the page has read and checked, in place of the current one (which
    /// stays on any error); once it runs, keeps `keep` on this device, if given.
    async fn load_prepared(
        self,
        prepared: Prepared,
        source: ModelSource,
        keep: Option<Vec<KeepFile>>,
        preference: Preference,
    ) {
        let d = self.0.dispatch.clone();
        let info = info(&prepared);
        d.dispatch(Action::Model(ModelAction::Own(OwnLoad::Checking {
            done: 0,
            total: 0,
        })));
        if let Err(e) = self.install(prepared, preference).await {
            return d.dispatch(Action::Model(ModelAction::Own(OwnLoad::Failed(e))));
        }
        let (name, code) = (source.name(), source.code());
        // the new model's state in the same task as its engines (its first result is kept)
        d.dispatch(Action::Model(ModelAction::OwnLoaded(info, source)));
        if let Some(files) = keep {
            // busy meanwhile: no other model starts, nor another keep
            d.dispatch(Action::Model(ModelAction::Own(OwnLoad::Keeping)));
            let k = crate::kept::keep(&name, code, &files).await;
            let shown = match k {
                Ok(info) => Some(Ok(info)),
                // the model kept before stays: it is shown with the error
                Err(e) => Some(Err(match crate::kept::info().await {
                    Some(before) => {
                        format!("{e} ({} {})", before.name, crate::kept::size(before.bytes))
                    }
                    None => e,
                })),
            };
            d.dispatch(Action::Model(ModelAction::Kept(shown)));
            d.dispatch(Action::Model(ModelAction::Own(OwnLoad::Loaded(name))));
        }
    }
}

/// What the page says the model is.
fn info(prepared: &Prepared) -> ModelInfo {
    match prepared {
        Prepared::Gpt2 { bundle, .. } => {
            let config = bundle.model.config.clone();
            let has_ln_f = bundle.model.weights.ln_f.is_some();
            ModelInfo {
                n_params: config.n_params(has_ln_f),
                arch: Arch::Gpt2 { config, has_ln_f },
            }
        }
        Prepared::Llama {
            config,
            name,
            n_params,
            ..
        } => ModelInfo {
            n_params: *n_params,
            arch: Arch::Llama {
                config: config.clone(),
                name: name.clone(),
            },
        },
    }
}

/// Loads the bundled model and starts its engines; then the model the URL asks for
/// (`model=`: a served one, or a Hugging Face id from `hub`), if any.
async fn start(handle: EngineHandle, preference: Preference, asked: Option<(ModelSource, String)>) {
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
    let prepared = Prepared::Gpt2 { bundle, bytes };
    d.dispatch(Action::Model(ModelAction::Loaded(info(&prepared))));
    // a model kept on this device from an earlier visit is offered (not loaded)
    {
        let d = d.clone();
        wasm_bindgen_futures::spawn_local(async move {
            if let Some(k) = crate::kept::info().await {
                d.dispatch(Action::Model(ModelAction::Kept(Some(Ok(k)))));
            }
        });
    }
    if let Err(e) = handle.install(prepared, preference).await {
        return fail(e);
    }
    let (gpu, cpu) = (handle.clone(), handle.clone());
    test_hooks::expose(test_hooks::Engines {
        gpu: Rc::new(move || gpu.current().and_then(|r| r.engine().engine.gpu())),
        cpu: Rc::new(move || cpu.current().map(|r| r.engine().engine.cpu().clone())),
    });
    match asked {
        Some((ModelSource::Served(id), _)) => {
            if let Some(s) = loader::served(id) {
                handle.load_served(s, false, preference).await
            }
        }
        Some((ModelSource::Hub(id), hub)) => handle.load_hub(hub, id, false, preference).await,
        _ => {}
    }
}

/// The result on screen as the engine hook sees it: which engines computed it, its number,
/// the request it answers and whether it holds the maps of every head the views show.
#[derive(Clone, PartialEq)]
pub struct OnScreen {
    pub engines: u64,
    pub generation: u64,
    pub asked: Rc<Request>,
    pub holds: bool,
}

/// The page's engine: starts loading the bundled model on first render (then the model `asked` for by the URL, if any, with the Hub's address), and runs the page's
/// request whenever it changes (or new engines start): the state's `request()`, the number
/// of the engines running (`ModelStatus::engines`), the result on screen and the time of the
/// input event that asked. A slim result (a long text) that lacks the maps of a head the
/// views show (`heads`: one was picked) is asked for again with them.
#[hook]
pub fn use_engine(
    dispatch: UseReducerDispatcher<State>,
    asked: Option<(ModelSource, String)>,
    request: Request,
    engines: u64,
    on_screen: (Views, Option<OnScreen>),
    input_at: Option<f64>,
) -> (EngineHandle, Labels) {
    let (heads, shown) = on_screen;
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
            wasm_bindgen_futures::spawn_local(start(handle, preference, asked));
        });
    }
    let shown = shown.filter(|s| s.engines == engines);
    {
        let (handle, shown, heads) = ((*handle).clone(), shown.clone(), heads.clone());
        use_effect_with((request.clone(), engines), move |(request, _)| {
            let at = input_at.unwrap_or_else(now);
            handle.ask(request, &heads, shown.as_ref(), at);
        });
    }
    {
        // the result answers the request but not the head picked since: the same request
        // again, with that head (the worker's cache makes it cheap)
        let handle = (*handle).clone();
        use_effect_with((heads, shown), move |(heads, shown)| {
            let stale = shown
                .as_ref()
                .is_some_and(|s| !s.holds && *s.asked == request);
            if stale && request.generate.is_none() {
                handle.ask(&request, heads, None, now());
            }
        });
    }
    ((*handle).clone(), (*vocab).clone())
}
