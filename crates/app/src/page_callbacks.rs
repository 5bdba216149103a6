//! The page's callbacks: those that only dispatch an action (`Callbacks`: typing, presets,
//! comparing, generation and the backend among them — what is asked lives in the state, and
//! `use_engine` runs it) and those that ask the engine something else (a token's text, the
//! lens, exports, model files), made once per what they close over (`use_page_callbacks`).

use std::rc::Rc;

use attnlab_model::{AttentionOptions, Trace};
use yew::prelude::*;

use crate::display::Solo;
use crate::dom;
use crate::engine::{FlowOf, LensOf, Preference};
use crate::i18n::Lang;
use crate::state::{Action, InterventionAction as IA, ModelAction, State, ViewAction as VA};
use crate::use_engine::EngineHandle;

/// An export's request for the whole trace: the ids, the options, and where the trace goes.
pub type FullTrace = Callback<(
    Vec<u32>,
    AttentionOptions,
    Callback<Result<Rc<Trace>, String>>,
)>;

/// A callback that dispatches `f(value)`.
fn send<T: 'static>(
    d: &UseReducerDispatcher<State>,
    f: impl Fn(T) -> Action + 'static,
) -> Callback<T> {
    let d = d.clone();
    Callback::from(move |x| d.dispatch(f(x)))
}

/// The page's callbacks that only dispatch, made once: a view whose data did not change gets
/// equal props and does not re-render.
pub struct Callbacks {
    pub lang: Callback<Lang>,
    pub theme: Callback<crate::display::Theme>,
    pub present: Callback<Solo>,
    pub present_exit: Callback<()>,
    pub lesson_toggle: Callback<bool>,
    pub lesson: Callback<Option<usize>>,
    pub query: Callback<usize>,
    pub head: Callback<(usize, usize)>,
    pub cell: Callback<Option<(usize, usize)>>,
    pub variant: Callback<crate::compare::Variant>,
    pub tau: Callback<f32>,
    pub apply: Callback<bool>,
    pub mask: Callback<bool>,
    pub role_filter: Callback<Option<attnlab_model::roles::Role>>,
    pub pin: Callback<Option<usize>>,
    pub flow: Callback<attnlab_model::flow::Method>,
    pub gen_settings: Callback<crate::state::GenSettings>,
    /// Generate (true) or stop generating.
    pub gen: Callback<bool>,
    /// typing: (text, performance.now() of the input event)
    pub text: Callback<(String, f64)>,
    /// a text the page puts in the box (a lesson preset), run
    pub preset: Callback<String>,
    /// comparing on or off
    pub compare_toggle: Callback<bool>,
    /// the second text typed
    pub text_b: Callback<(String, f64)>,
    /// the backend the user asked for
    pub preference: Callback<Preference>,
}

impl Callbacks {
    fn new(d: &UseReducerDispatcher<State>) -> Callbacks {
        Callbacks {
            lang: send(d, Action::SetLang),
            theme: send(d, Action::SetTheme),
            present: send(d, |v| Action::Present(Some(v))),
            present_exit: send(d, |_: ()| Action::Present(None)),
            lesson_toggle: send(d, |on: bool| Action::View(VA::SetLesson(on.then_some(0)))),
            lesson: send(d, |s| Action::View(VA::SetLesson(s))),
            query: send(d, |q| Action::View(VA::SelectQuery(q))),
            head: send(d, |(l, h)| Action::View(VA::SelectHead(l, h))),
            cell: send(d, |c| Action::View(VA::FocusCell(c))),
            variant: send(d, |x| Action::Intervene(IA::SetVariant(x))),
            tau: send(d, |x| Action::Intervene(IA::SetTau(x))),
            apply: send(d, |x| Action::Intervene(IA::SetApply(x))),
            mask: send(d, |x| Action::Intervene(IA::SetMask(x))),
            role_filter: send(d, |r| Action::View(VA::FilterRole(r))),
            pin: send(d, |r| Action::View(VA::Pin(r))),
            flow: send(d, |m| Action::View(VA::SetFlow(m))),
            gen_settings: send(d, |g| Action::View(VA::SetGen(g))),
            gen: send(d, |on| {
                Action::View(if on { VA::GenStart } else { VA::GenStop })
            }),
            text: send(d, |(t, at)| Action::View(VA::Type(t, at))),
            preset: send(d, |t| Action::View(VA::Preset(t, dom::now()))),
            compare_toggle: send(d, |on| Action::View(VA::ToggleCompare(on))),
            text_b: send(d, |(b, _at): (String, f64)| {
                Action::View(VA::SetCompare(Some(b)))
            }),
            preference: send(d, |p| Action::Model(ModelAction::SetPreference(p))),
        }
    }
}

/// The page's callbacks, each made once (or when what it closes over changes), so that a view
/// whose data did not change gets equal props and does not re-render.
pub struct PageCallbacks {
    /// the callbacks that only dispatch
    pub cb: Rc<Callbacks>,
    /// the second text box's first value
    pub initial_b: Rc<AttrValue>,
    /// a next token clicked: appended to the text, as if typed
    pub on_append: Rc<Callback<u32>>,
    /// a logit lens (or a slim result's prediction after a token: its last stage) asked for:
    /// (result, position, residual rows)
    pub on_lens: Rc<Callback<(u64, usize, LensOf)>>,
    /// a slim result's attention-flow strip asked for: (result, what)
    pub on_flow: Rc<Callback<(u64, FlowOf)>>,
    /// the whole trace asked for (an export)
    pub on_full: Rc<FullTrace>,
    /// "present": the view on screen, full-screen
    pub on_present: Rc<Callback<()>>,
    /// a model from files: (files, keep it on this device)
    pub on_files: Rc<Callback<(Vec<web_sys::File>, bool)>>,
    /// load the kept model, forget it
    pub on_kept: Rc<(Callback<()>, Callback<()>)>,
    /// the model menu's choice (a served model's id, or None for the bundled one), and
    /// whether to keep it on this device
    pub on_model: Rc<Callback<(Option<&'static str>, bool)>>,
    /// a Hugging Face model id to open, and whether to keep it on this device
    pub on_hub: Rc<Callback<(String, bool)>>,
    /// the selected head switched off or on
    pub on_ablate: Rc<Callback<bool>>,
}

/// The page's callbacks: those that dispatch, and those that also ask the engine.
#[hook]
pub fn use_page_callbacks(state: &UseReducerHandle<State>, engine: &EngineHandle) -> PageCallbacks {
    let cb = use_memo((), {
        let d = state.dispatcher();
        move |_| Callbacks::new(&d)
    });
    let initial_b = use_memo(
        (state.view.compare.is_some(), state.display.solo().is_none()),
        {
            let b = state.view.compare.clone();
            move |_| AttrValue::from(b.unwrap_or_default())
        },
    );
    // a next-token clicked: appended to the text, as if typed
    let on_append = use_memo(state.view.text.clone(), {
        let (engine, preset) = (engine.clone(), cb.preset.clone());
        move |text| {
            let text = text.clone();
            Callback::from(move |id: u32| {
                if let Some(piece) = engine.token_text(id) {
                    preset.emit(format!("{text}{piece}"));
                }
            })
        }
    });
    let on_lens = use_memo((), {
        let engine = engine.clone();
        move |_| {
            Callback::from(move |(of, pos, rows): (u64, usize, LensOf)| engine.lens(of, pos, rows))
        }
    });
    let on_flow = use_memo((), {
        let engine = engine.clone();
        move |_| Callback::from(move |(of, ask): (u64, FlowOf)| engine.flow(of, ask))
    });
    let on_full = use_memo((), {
        let engine = engine.clone();
        move |_| Callback::from(move |(ids, opts, done)| engine.full_trace(ids, opts, done))
    });
    // "present": the view on screen, full-screen (the F key does the same: `use_display`)
    let on_present = use_memo(state.view.lesson, {
        let d = state.dispatcher();
        move |&lesson| {
            Callback::from(move |()| {
                crate::use_display::enter_full_screen();
                d.dispatch(Action::Present(Some(crate::use_display::on_screen(lesson))));
            })
        }
    });
    // a model's engines start with the backend the user asked for
    let on_files = use_memo(state.model.preference, {
        let engine = engine.clone();
        move |&p| {
            Callback::from(move |(files, keep)| {
                wasm_bindgen_futures::spawn_local(engine.clone().load_own(files, keep, p))
            })
        }
    });
    let on_kept = use_memo(state.model.preference, {
        let engine = engine.clone();
        move |&p| {
            let e = engine.clone();
            (
                Callback::from(move |()| {
                    let e = e.clone();
                    wasm_bindgen_futures::spawn_local(async move {
                        e.load_kept(p).await;
                    })
                }),
                Callback::from(move |()| {
                    wasm_bindgen_futures::spawn_local(engine.clone().forget_kept())
                }),
            )
        }
    });
    let on_model = use_memo(state.model.preference, {
        let engine = engine.clone();
        move |&p| {
            Callback::from(move |(id, keep): (Option<&'static str>, bool)| {
                let e = engine.clone();
                match id.and_then(crate::loader::served) {
                    Some(s) => wasm_bindgen_futures::spawn_local(e.load_served(s, keep, p)),
                    None => wasm_bindgen_futures::spawn_local(e.load_bundled(p)),
                }
            })
        }
    });
    let on_hub = use_memo((state.model.preference, state.model.hub_base()), {
        let engine = engine.clone();
        move |(p, base)| {
            let (p, base) = (*p, base.clone());
            Callback::from(move |(id, keep): (String, bool)| {
                let e = engine.clone();
                wasm_bindgen_futures::spawn_local(e.load_hub(base.clone(), id, keep, p))
            })
        }
    });
    let on_ablate = use_memo((state.view.layer, state.view.head), {
        let d = state.dispatcher();
        move |&(l, h)| {
            send(&d, move |off| {
                Action::Intervene(IA::SetAblated((l, h), off))
            })
        }
    });
    PageCallbacks {
        cb,
        initial_b,
        on_append,
        on_lens,
        on_flow,
        on_full,
        on_present,
        on_files,
        on_kept,
        on_model,
        on_hub,
        on_ablate,
    }
}
