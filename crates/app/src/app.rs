//! The root component: loads the bundled model with a progress bar, starts the engine
//! (WebGPU, else CPU), re-runs the model on every change and lays out the views.

use std::cell::RefCell;
use std::rc::Rc;

use attnlab_gpu::GpuEngine;
use attnlab_model::Bundle;
use wasm_bindgen::prelude::*;
use yew::prelude::*;

use crate::components::exports::Exports;
use crate::components::head_map::HeadMap;
use crate::components::header::Header;
use crate::components::heads_grid::HeadsGrid;
use crate::components::legend::Legend;
use crate::components::lesson::Lesson;
use crate::components::model_card::ModelCard;
use crate::components::model_loader::ModelLoader;
use crate::components::next_token::NextToken;
use crate::components::softmax_compare::SoftmaxCompare;
use crate::components::steps::Steps;
use crate::components::text_input::TextInput;
use crate::components::token_strip::TokenStrip;
use crate::components::weighted_sum::WeightedSum;
use crate::components::{HeadSel, Labels, TraceRef};
use crate::dom::{self, now};
use crate::i18n::{Key, Lang};
use crate::lesson::Section;
use crate::runner::{Outcome, Runner};
use crate::state::{Action, Backend, Load, ModelInfo, OwnLoad, State};
use crate::{model_files, url_state};

/// Where the page finds the model (copied next to index.html by Trunk).
pub const MODEL_FILES: [&str; 3] = [
    "model/config.json",
    "model/model.safetensors",
    "model/tokenizer.json",
];

type Slot = Rc<RefCell<Option<Rc<Runner>>>>;

async fn fetch_model(dispatch: &UseReducerDispatcher<State>) -> Result<Vec<Vec<u8>>, String> {
    let mut opened = Vec::new();
    for url in MODEL_FILES {
        opened.push((url, dom::open(url).await?));
    }
    let total = opened
        .iter()
        .map(|(_, (_, size))| *size)
        .sum::<Option<u64>>();
    let mut files = Vec::new();
    let mut base = 0u64;
    for (url, (resp, _)) in opened {
        let bytes = dom::read_body(url, resp, |n| {
            dispatch.dispatch(Action::Progress {
                loaded: base + n,
                total,
            })
        })
        .await?;
        base += bytes.len() as u64;
        files.push(bytes);
    }
    Ok(files)
}

fn gpu_backend(engine: &GpuEngine) -> Backend {
    let info = engine.adapter_info();
    Backend::Gpu {
        adapter: info.name.trim().to_string(),
        fallback: info.device_type == attnlab_gpu::wgpu::DeviceType::Cpu,
    }
}

/// Everything `install` needs from the page.
#[derive(Clone)]
struct Ctx {
    dispatch: UseReducerDispatcher<State>,
    slot: Slot,
    vocab: UseStateSetter<Labels>,
    result_at: Rc<RefCell<f64>>,
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

/// The engine for `bundle`: WebGPU when `try_gpu` and the browser gives a device, else the
/// CPU (with the reason).
async fn engine_for(bundle: &Bundle, try_gpu: bool, no_gpu: &str) -> (Option<GpuEngine>, Backend) {
    if !try_gpu {
        return (
            None,
            Backend::Cpu {
                reason: no_gpu.to_string(),
            },
        );
    }
    match GpuEngine::new(&bundle.model).await {
        Ok(engine) => {
            let backend = gpu_backend(&engine);
            (Some(engine), backend)
        }
        Err(e) => (
            None,
            Backend::Cpu {
                reason: e.to_string(),
            },
        ),
    }
}

/// Puts a runner for `bundle` in the slot (retiring the previous one) and shows its vocabulary.
fn install(ctx: &Ctx, bundle: Bundle, engine: Option<GpuEngine>) {
    ctx.vocab.set(Labels(Rc::new(
        (0..bundle.model.config.vocab_size as u32)
            .map(|id| bundle.tokenizer.display_id(id))
            .collect(),
    )));
    let on_outcome = {
        let (dispatch, result_at) = (ctx.dispatch.clone(), ctx.result_at.clone());
        Callback::from(move |o: Outcome| match o {
            Outcome::Shown(s) => {
                *result_at.borrow_mut() = now();
                dispatch.dispatch(Action::Result(s));
            }
            Outcome::Error(e) => dispatch.dispatch(Action::RunError(e)),
            Outcome::GpuFailed(e) => dispatch.dispatch(Action::GpuFailed(e)),
        })
    };
    let runner = Runner::new(bundle, engine, on_outcome);
    if let Some(old) = ctx.slot.borrow_mut().replace(runner) {
        old.retire();
    }
}

async fn start(ctx: Ctx) {
    let dispatch = &ctx.dispatch;
    let files = match fetch_model(dispatch).await {
        Ok(f) => f,
        Err(e) => return dispatch.dispatch(Action::LoadFailed(e)),
    };
    let bundle = match Bundle::from_bytes(&files[0], &files[1], &files[2]) {
        Ok(b) => b,
        Err(e) => return dispatch.dispatch(Action::LoadFailed(e.to_string())),
    };
    drop(files);
    dispatch.dispatch(Action::Loaded(model_info(&bundle)));
    let (engine, backend) = engine_for(&bundle, true, "").await;
    install(&ctx, bundle, engine);
    {
        // the fault-injection hook of the end-to-end tests (whichever model is loaded)
        let slot = Rc::downgrade(&ctx.slot);
        let lose = Closure::<dyn Fn()>::new(move || {
            if let Some(r) = slot.upgrade().and_then(|s| s.borrow().clone()) {
                r.lose_gpu();
            }
        });
        dom::expose("loseGpu", lose.as_ref());
        lose.forget();
    }
    dispatch.dispatch(Action::BackendReady(backend));
}

/// Validates a user's model one tensor at a time, letting the page paint (and answer) between
/// tensors, with the progress in the status line.
async fn check_own(
    dispatch: &UseReducerDispatcher<State>,
    bytes: &[Vec<u8>],
) -> Result<Bundle, String> {
    let checking = |done, total| dispatch.dispatch(Action::Own(OwnLoad::Checking { done, total }));
    checking(0, 0);
    dom::next_task().await;
    let config = attnlab_model::Config::from_json(&bytes[0]).map_err(|e| e.to_string())?;
    let tokenizer = attnlab_model::Tokenizer::from_bytes(&bytes[2]).map_err(|e| e.to_string())?;
    let mut loading = attnlab_model::Loading::new(config, &bytes[1]).map_err(|e| e.to_string())?;
    let mut since = now();
    while !loading.step().map_err(|e| e.to_string())? {
        if now() - since > 30.0 {
            let (done, total) = loading.progress();
            checking(done, total);
            dom::next_task().await;
            since = now();
        }
    }
    let model = loading.finish().map_err(|e| e.to_string())?;
    Bundle::new(model, tokenizer).map_err(|e| e.to_string())
}

/// Reads the user's files, validates them as a model and, only if that succeeds, replaces
/// the current model. The current model keeps running meanwhile and after any error.
async fn load_own(ctx: Ctx, files: Vec<web_sys::File>, backend: Backend) {
    let dispatch = &ctx.dispatch;
    let names: Vec<String> = files.iter().map(|f| f.name()).collect();
    let [c, w, t] = match model_files::pick(&names) {
        Ok(i) => i,
        Err(missing) => {
            return dispatch.dispatch(Action::Own(OwnLoad::Missing {
                missing,
                got: names,
            }))
        }
    };
    let total: u64 = [c, w, t].iter().map(|&i| files[i].size() as u64).sum();
    let mut bytes = Vec::new();
    let mut base = 0u64;
    for i in [c, w, t] {
        dispatch.dispatch(Action::Own(OwnLoad::Reading {
            loaded: base,
            total,
        }));
        let b = match dom::read_file(&files[i], |n| {
            dispatch.dispatch(Action::Own(OwnLoad::Reading {
                loaded: base + n,
                total,
            }))
        })
        .await
        {
            Ok(b) => b,
            Err(e) => return dispatch.dispatch(Action::Own(OwnLoad::Failed(e))),
        };
        base += b.len() as u64;
        bytes.push(b);
    }
    let bundle = match check_own(dispatch, &bytes).await {
        Ok(b) => b,
        Err(e) => return dispatch.dispatch(Action::Own(OwnLoad::Failed(e))),
    };
    drop(bytes);
    let info = model_info(&bundle);
    // the new model on the engine the page runs now: WebGPU, or the CPU for the same reason
    let (engine, backend) = match backend {
        Backend::Cpu { reason } => engine_for(&bundle, false, &reason).await,
        _ => engine_for(&bundle, true, "").await,
    };
    install(&ctx, bundle, engine);
    let name = [c, w, t].map(|i| names[i].clone()).join(" + ");
    dispatch.dispatch(Action::BackendReady(backend));
    dispatch.dispatch(Action::OwnLoaded(info, name));
}

/// A callback that dispatches `f(value)`.
fn send<T: 'static>(state: &UseReducerHandle<State>, f: fn(T) -> Action) -> Callback<T> {
    let d = state.dispatcher();
    Callback::from(move |x| d.dispatch(f(x)))
}

#[function_component]
pub fn App() -> Html {
    let state = use_reducer(|| {
        let mut s = State::new(Lang::from_tag(&dom::browser_language()));
        let (from_url, notices) = url_state::parse(&dom::location_hash());
        from_url.apply_to(&mut s);
        s.url_notices = notices;
        s
    });
    let slot: Slot = use_mut_ref(|| None);
    let vocab = use_state(|| Labels(Rc::new(Vec::new())));
    let input_at = use_mut_ref(|| 0.0f64);
    let result_at = use_mut_ref(|| 0.0f64);

    let ctx = Ctx {
        dispatch: state.dispatcher(),
        slot: slot.clone(),
        vocab: vocab.setter(),
        result_at: result_at.clone(),
    };
    {
        let ctx = ctx.clone();
        use_effect_with((), move |_| {
            wasm_bindgen_futures::spawn_local(start(ctx));
        });
    }
    {
        let lang = state.lang;
        use_effect_with(lang, move |lang| {
            if let Some(root) = web_sys::window()
                .and_then(|w| w.document())
                .and_then(|d| d.document_element())
            {
                let _ = root.set_attribute("lang", lang.code());
            }
        });
    }
    // the state lives in the URL fragment (replaced, not pushed: no history entry per key)
    {
        let frag = url_state::fragment(&state);
        use_effect_with(frag, move |frag| dom::replace_hash(frag));
    }
    // every change of text or options re-runs the model
    {
        let ready = !matches!(state.backend, Backend::Starting);
        let (slot, input_at) = (slot.clone(), input_at.clone());
        use_effect_with(
            (state.text.clone(), state.options(), ready, state.model_id),
            move |(text, opts, ready, _)| {
                if *ready {
                    if let Some(r) = slot.borrow().as_ref() {
                        r.submit(text.clone(), opts.clone(), *input_at.borrow());
                    }
                }
            },
        );
    }
    // after each new result is painted: record the latency for tests and benchmarks
    {
        let shown = state.shown.clone();
        let dispatch = state.dispatcher();
        let backend = state.backend.clone();
        use_effect_with(shown.as_ref().map(|s| s.generation), move |_| {
            if let Some(s) = shown {
                dom::after_paint(move || {
                    let painted = now();
                    let paint_ms = painted - *result_at.borrow();
                    let backend = match backend {
                        Backend::Gpu { .. } if s.cpu_because.is_none() => "webgpu",
                        _ => "cpu",
                    };
                    dom::record_paint(&[
                        ("generation", (s.generation as f64).into()),
                        ("text", s.text.as_str().into()),
                        ("tokens", (s.trace.dims.t as f64).into()),
                        ("latencyMs", (painted - s.input_at).into()),
                        ("forwardMs", s.forward_ms.into()),
                        ("paintMs", paint_ms.into()),
                        ("incremental", s.incremental.into()),
                        ("backend", backend.into()),
                        ("at", painted.into()),
                    ]);
                    dispatch.dispatch(Action::Painted(paint_ms));
                });
            }
        });
    }

    // the run's token labels, built once per result: the views compare props by pointer,
    // so a hover or a timing update must not hand them new labels (and redraw everything)
    let labels = use_memo(state.shown.as_ref().map(|s| s.generation), {
        let shown = state.shown.clone();
        move |_| {
            shown.map(|s| {
                let run = &s.tokens[s.trace.dropped..];
                Labels(Rc::new(run.iter().map(|t| t.display.clone()).collect()))
            })
        }
    });
    let lang = state.lang;
    let t = |k: Key| k.text(lang);
    let d = state.dispatcher();
    let on_lang = Callback::from(move |l| d.dispatch(Action::SetLang(l)));
    let on_text = {
        let d = state.dispatcher();
        Callback::from(move |(text, at): (String, f64)| {
            *input_at.borrow_mut() = at;
            d.dispatch(Action::SetText(text));
        })
    };

    let status = match &state.load {
        Load::Fetching { loaded, total } => {
            let mb = |b: u64| format!("{:.1} MB", b as f64 / 1e6);
            let text = match total {
                Some(t) => format!("{} — {} / {}", Key::Loading.text(lang), mb(*loaded), mb(*t)),
                None => format!("{} — {}", Key::Loading.text(lang), mb(*loaded)),
            };
            html! {
                <div class="loading" role="status">
                    <label for="load-progress">{ text }</label>
                    if let Some(total) = total {
                        <progress id="load-progress" max={total.to_string()} value={loaded.to_string()} />
                    } else {
                        <progress id="load-progress" />
                    }
                </div>
            }
        }
        Load::Failed(e) => html! {
            <div class="error" role="alert">{ format!("{}: {e}", t(Key::LoadFailed)) }</div>
        },
        Load::Ready => html! {},
    };
    let url_notice = (!state.url_notices.is_empty()).then(|| {
        html! {
            <div class="notice" role="status" id="url-notice">
                { format!("{}: {}", t(Key::UrlIgnored), state.url_notices.join(" · ")) }
            </div>
        }
    });
    let notice = state.notice.as_ref().map(|n| {
        html! { <div class="notice" role="alert" id="notice">{ format!("{} — {n}", t(Key::GpuFailed)) }</div> }
    });
    let cpu_reason = match (
        &state.backend,
        state.shown.as_ref().and_then(|s| s.cpu_because.as_ref()),
    ) {
        (Backend::Cpu { reason }, _) if state.notice.is_none() => Some(html! {
            <p class="help cpu-reason">{ format!("{} ({reason})", t(Key::CpuBecause)) }</p>
        }),
        (Backend::Gpu { .. }, Some(why)) => Some(html! {
            <p class="help cpu-reason" id="cpu-this-time">{ format!("{} ({why})", t(Key::CpuThisTime)) }</p>
        }),
        _ => None,
    };

    // the selected head in the result on screen: the views' and the lesson's
    let head_sel = state.shown.as_ref().map(|s| HeadSel {
        trace: TraceRef(s.trace.clone()),
        labels: (*labels)
            .clone()
            .unwrap_or_else(|| Labels(Rc::new(Vec::new()))),
        layer: state.layer,
        head: state.head,
    });
    let views = match (&state.shown, &state.model, &head_sel) {
        (Some(s), Some(info), Some(sel)) => {
            let (trace, labels) = (sel.trace.clone(), sel.labels.clone());
            let dropped = s.trace.dropped;
            let q = state.query_index().unwrap_or(0);
            let (l, h) = (state.layer, state.head);
            html! {
                <>
                    <TokenStrip {lang} tokens={s.tokens.clone()} {dropped} query={Some(q)}
                        on_select={send(&state, Action::SelectQuery)} />
                    <div class="grid two">
                        <HeadsGrid {lang} trace={trace.clone()} selected={(l, h)}
                            on_select={send(&state, |(l, h)| Action::SelectHead(l, h))} />
                        <HeadMap {lang} sel={sel.clone()}
                            cell={state.cell} on_cell={send(&state, Action::FocusCell)}
                            ablated={state.ablate.contains(&(l, h))} on_ablate={{
                                let d = state.dispatcher();
                                Callback::from(move |off| d.dispatch(Action::SetAblated((l, h), off)))
                            }} />
                    </div>
                    <Legend {lang} />
                    <Steps {lang} sel={sel.clone()} />
                    <SoftmaxCompare {lang} sel={sel.clone()}
                        variant={state.variant} tau={state.tau} apply={state.apply} mask={state.mask} query={q}
                        on_variant={send(&state, Action::SetVariant)} on_tau={send(&state, Action::SetTau)}
                        on_apply={send(&state, Action::SetApply)} on_mask={send(&state, Action::SetMask)} />
                    <div class="grid two">
                        <WeightedSum {lang} sel={sel.clone()}
                            query={q} on_query={send(&state, Action::SelectQuery)} />
                        <NextToken {lang} trace={trace} baseline={s.baseline.clone().map(TraceRef)}
                            vocab={(*vocab).clone()} labels={labels.clone()} query={q} />
                    </div>
                    <Exports {lang} sel={sel.clone()} tokens={s.tokens.clone()} vocab={(*vocab).clone()} />
                    <ModelCard {lang} info={info.clone()} backend={state.backend.clone()}
                        forward_ms={Some(s.forward_ms)} paint_ms={state.paint_ms} incremental={s.incremental} />
                </>
            }
        }
        (None, Some(info), _) => {
            let msg = match &state.error {
                Some(e) if !e.is_empty() => e.clone(),
                Some(_) => t(Key::EmptyInput).to_string(),
                None => t(Key::Computing).to_string(),
            };
            html! {
                <>
                    <p class="empty" role="status" id="run-status">{ msg }</p>
                    <ModelCard {lang} info={info.clone()} backend={state.backend.clone()}
                        forward_ms={None::<f64>} paint_ms={state.paint_ms} incremental={false} />
                </>
            }
        }
        _ => html! {},
    };

    html! {
        <>
            <Header {lang} backend={state.backend.clone()} {on_lang} lesson={state.lesson.is_some()}
                on_lesson={send(&state, |on: bool| Action::SetLesson(on.then_some(0)))} />
            <main data-focus={state.lesson.map(|i| Section::at(i).panel())}>
                { status }
                { for notice }
                { for url_notice }
                <TextInput initial={state.text.clone()} label={t(Key::InputLabel)} {on_text}
                    preset={(state.preset_n, AttrValue::from(state.text.clone()))} />
                if let Some(section) = state.lesson {
                    <Lesson {lang} {section} on_section={send(&state, Action::SetLesson)}
                        sel={head_sel.clone()} query={state.query_index().unwrap_or(0)} info={state.model.clone()}
                        mask={state.mask} on_mask={send(&state, Action::SetMask)}
                        on_preset={send(&state, Action::Preset)} />
                }
                { for cpu_reason }
                { views }
                if state.model.is_some() {
                    <ModelLoader {lang} own={state.own.clone()} on_files={{
                        let (ctx, backend) = (ctx.clone(), state.backend.clone());
                        Callback::from(move |files| {
                            wasm_bindgen_futures::spawn_local(load_own(ctx.clone(), files, backend.clone()))
                        })
                    }} />
                }
            </main>
        </>
    }
}
