//! The page's callbacks: those that only dispatch an action (`Callbacks`) and those that also
//! ask the engine (typing, presets, comparing, generation, the lens, exports, the backend,
//! model files), made once per what they close over (`use_page_callbacks`).

use std::rc::Rc;

use attnlab_model::{AttentionOptions, Trace};
use yew::prelude::*;

use crate::display::Solo;
use crate::dom;
use crate::engine::Preference;
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
        }
    }
}

/// The page's callbacks, each made once (or when what it closes over changes), so that a view
/// whose data did not change gets equal props and does not re-render.
pub struct PageCallbacks {
    /// the callbacks that only dispatch
    pub cb: Rc<Callbacks>,
    /// typing: straight to the engine (the state changes once, when the result arrives)
    pub on_text: Rc<Callback<(String, f64)>>,
    /// a text the page puts in the box (a lesson preset), run
    pub on_preset: Rc<Callback<String>>,
    /// comparing on or off: (on, text A, the last text B)
    pub on_compare_toggle: Rc<Callback<(bool, String, String)>>,
    /// the second text typed
    pub on_text_b: Rc<Callback<(String, f64)>>,
    /// the second text box's first value
    pub initial_b: Rc<AttrValue>,
    /// a next token clicked: appended to the text, as if typed
    pub on_append: Rc<Callback<u32>>,
    /// a generation's step: the text it started from and the tokens appended so far
    pub on_gen_step: Rc<Callback<(String, Vec<u32>)>>,
    /// a logit lens asked for: (result, position, residual rows)
    pub on_lens: Rc<Callback<(u64, usize, Vec<f32>)>>,
    /// the whole trace asked for (an export)
    pub on_full: Rc<FullTrace>,
    /// "present": the view on screen, full-screen
    pub on_present: Rc<Callback<()>>,
    /// the backend the user asked for
    pub on_preference: Rc<Callback<Preference>>,
    /// a model from files: (files, keep it on this device)
    pub on_files: Rc<Callback<(Vec<web_sys::File>, bool)>>,
    /// load the kept model, forget it
    pub on_kept: Rc<(Callback<()>, Callback<()>)>,
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
    // typing goes straight to the engine: the state changes once, when the result arrives
    let on_text = use_memo(state.options(), {
        let engine = engine.clone();
        move |opts| {
            let opts = opts.clone();
            Callback::from(move |(text, at): (String, f64)| engine.submit(text, opts.clone(), at))
        }
    });
    let on_preset = use_memo(state.options(), {
        let (engine, d) = (engine.clone(), state.dispatcher());
        move |opts| {
            let opts = opts.clone();
            Callback::from(move |text: String| {
                d.dispatch(Action::View(VA::Preset(text.clone())));
                engine.submit(text, opts.clone(), dom::now());
            })
        }
    });
    let on_compare_toggle = use_memo((), {
        let (engine, d) = (engine.clone(), state.dispatcher());
        move |_| {
            Callback::from(move |(on, a, last): (bool, String, String)| {
                // B is the last second text; the first time, A with 커피 → 차 (the lesson's
                // pair), else A itself
                let b = on.then(|| match (last.is_empty(), a.contains("커피")) {
                    (false, _) => last,
                    (true, true) => a.replacen("커피", "차", 1),
                    (true, false) => a,
                });
                d.dispatch(Action::View(VA::SetCompare(b.clone())));
                engine.set_compare(b);
            })
        }
    });
    let on_text_b = use_memo((), {
        let (engine, d) = (engine.clone(), state.dispatcher());
        move |_| {
            Callback::from(move |(b, _at): (String, f64)| {
                d.dispatch(Action::View(VA::SetCompare(Some(b.clone()))));
                engine.set_compare(Some(b));
            })
        }
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
        let (engine, on_preset) = (engine.clone(), on_preset.clone());
        move |text| {
            let text = text.clone();
            Callback::from(move |id: u32| {
                if let Some(piece) = engine.token_text(id) {
                    on_preset.emit(format!("{text}{piece}"));
                }
            })
        }
    });
    // a generation's step: the text it started from and exactly the tokens appended so far
    let on_gen_step = use_memo(state.options(), {
        let engine = engine.clone();
        move |opts| {
            let opts = opts.clone();
            Callback::from(move |(base, appended): (String, Vec<u32>)| {
                engine.submit_generated(base, appended, opts.clone())
            })
        }
    });
    let on_lens = use_memo((), {
        let engine = engine.clone();
        move |_| {
            Callback::from(move |(of, pos, rows): (u64, usize, Vec<f32>)| {
                engine.lens(of, pos, rows)
            })
        }
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
    let on_preference = use_memo((), {
        let (engine, d) = (engine.clone(), state.dispatcher());
        move |_| {
            Callback::from(move |p: Preference| {
                d.dispatch(Action::Model(ModelAction::SetPreference(p)));
                engine.set_preference(p);
            })
        }
    });
    let on_files = use_memo((), {
        let engine = engine.clone();
        move |_| {
            Callback::from(move |(files, keep)| {
                wasm_bindgen_futures::spawn_local(engine.clone().load_own(files, keep))
            })
        }
    });
    let on_kept = use_memo((), {
        let engine = engine.clone();
        move |_| {
            let e = engine.clone();
            (
                Callback::from(move |()| wasm_bindgen_futures::spawn_local(e.clone().load_kept())),
                Callback::from(move |()| {
                    wasm_bindgen_futures::spawn_local(engine.clone().forget_kept())
                }),
            )
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
        on_text,
        on_preset,
        on_compare_toggle,
        on_text_b,
        initial_b,
        on_append,
        on_gen_step,
        on_lens,
        on_full,
        on_present,
        on_preference,
        on_files,
        on_kept,
        on_ablate,
    }
}
