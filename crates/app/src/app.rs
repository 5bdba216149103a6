//! The root: the page's state (`state`, a reducer), its engine (`use_engine`, which runs the
//! state's request), its callbacks (`page_callbacks`) and what is made once per result (the
//! token labels, the heads' roles), handed to the layout of the mode on screen (`layout`:
//! the whole page, embedded, presented). Timings are `telemetry`'s (a context above the
//! page, so recording a paint does not re-render it).

use std::rc::Rc;

use yew::prelude::*;

use crate::components::{HeadSel, Labels, TraceRef};
use crate::dom;
use crate::i18n::Lang;
use crate::layout;
use crate::page_callbacks::use_page_callbacks;
use crate::state::{Action, State, ViewAction as VA};
use crate::telemetry::{use_recorder, TimingsProvider};
use crate::url_state;
use crate::use_display::use_display;
use crate::use_engine::{use_engine, OnScreen};

/// The app: the timings' context around the page.
#[function_component]
pub fn App() -> Html {
    html! { <TimingsProvider><Page /></TimingsProvider> }
}

#[function_component]
fn Page() -> Html {
    let state = use_reducer(|| {
        let mut s = State::new(Lang::from_tag(&dom::browser_language()));
        let (from_url, notices) = url_state::parse(&dom::location_hash());
        from_url.apply_to(&mut s);
        s.model.url_notices = notices;
        s
    });
    // the heads the views show: all a slim result (a long text) brings
    let heads = use_memo((state.view.layer, state.view.head), |&lh| Rc::new(vec![lh]));
    let on_screen = state.results.shown.as_ref().map(|s| OnScreen {
        engines: s.engine,
        generation: s.generation,
        asked: s.asked.clone(),
        // (a head the model does not have is not asked for)
        holds: heads.iter().all(|&(l, h)| {
            let d = s.run.trace.dims;
            l >= d.n_layer || h >= d.n_head || s.run.trace.has_head(l, h)
        }),
    });
    // the engine runs what the state asks (`State::request`), whenever it changes
    let (engine, vocab) = use_engine(
        state.dispatcher(),
        state
            .model
            .asked
            .clone()
            .map(|a| (a, state.model.hub_base())),
        state.request(),
        state.model.engines,
        ((*heads).clone(), on_screen),
        state.view.input_at,
    );
    let recorder = use_recorder();
    let appearance = use_display(&state.display, state.view.lesson, state.dispatcher());
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
    // the state lives in the URL fragment (replaced, not pushed: no history entry per key),
    // written only when a value it holds changed, and off the keystroke's path (`dom`)
    // (the whole page's fragment is also an embedded view's "open in attnlab" link)
    let page_frag = use_memo(
        (
            state.lang,
            state.view.clone(),
            state.interventions.clone(),
            state.model.preference,
            state.display.theme,
        ),
        {
            let state = state.clone();
            move |_| url_state::page_fragment(&state)
        },
    );
    use_effect_with(
        (page_frag.clone(), url_state::embed_suffix(&state.display)),
        |(page, embed)| dom::replace_hash_soon(&format!("{page}{embed}")),
    );
    // Esc anywhere lets go of a pinned query (typing happens in the text box, not the map)
    {
        let d = state.dispatcher();
        use_effect_with((), move |_| {
            let cb = wasm_bindgen::closure::Closure::<dyn Fn(web_sys::KeyboardEvent)>::new(
                move |e: web_sys::KeyboardEvent| {
                    if e.key() == "Escape" && !e.is_composing() {
                        d.dispatch(Action::View(VA::Pin(None)));
                    }
                },
            );
            dom::listen(dom::document_target(), "keydown", cb)
        });
    }
    // after each new result is painted: the latency for tests and benchmarks, the timings
    {
        let shown = state.results.shown.clone();
        use_effect_with(shown.as_ref().map(|s| s.generation), move |_| {
            if let Some(s) = shown {
                recorder.painted(&s);
            }
        });
    }

    // the run's token labels, built once per result: the views compare props by pointer,
    // so a hover must not hand them new labels (and redraw everything)
    let labels = use_memo(state.results.shown.as_ref().map(|s| s.generation), {
        let shown = state.results.shown.clone();
        move |_| {
            shown.map(|s| {
                let run = &s.tokens[s.run.trace.dropped..];
                Labels(Rc::new(run.iter().map(|t| t.display.clone()).collect()))
            })
        }
    });
    // every head's roles: the text's, with the probe's once it ran
    let roles = use_memo(
        (
            state.results.shown.as_ref().map(|s| s.generation),
            state.results.probe.clone(),
        ),
        {
            let shown = state.results.shown.clone();
            move |(_, probe)| {
                let text = shown.map(|s| s.roles).unwrap_or_default();
                match probe {
                    Some(Ok(p)) => Rc::new(
                        text.iter()
                            .zip(&p.scores)
                            .map(|(t, p)| t.with_probe(p))
                            .collect::<Vec<_>>(),
                    ),
                    _ => text,
                }
            }
        },
    );
    // the text box's value when it is made — the text now: it is made again when it comes
    // back after a view was shown alone, and whenever the page around it is rebuilt — and the
    // texts the page puts in it (lesson presets)
    let d = &state.display;
    let input = d
        .solo()
        .is_none_or(|s| s.wants_input() && (d.present.is_some() || d.input));
    let initial = AttrValue::from(state.view.text.clone());
    let preset = use_memo(state.view.preset_n, {
        let text = state.view.text.clone();
        move |&n| (n, AttrValue::from(text))
    });

    // the result's trace, made once per result (it keeps the rollout the views compute)
    let trace = use_memo(state.results.shown.as_ref().map(|s| s.generation), {
        let shown = state.results.shown.clone();
        move |_| shown.map(|s| TraceRef::new(s.run.trace))
    });
    // the selected head in the result on screen: the views' and the lesson's
    // (a slim result of a long text holds a few heads: while the one picked is computed, the
    // views keep showing the one they showed)
    let head_sel = (*trace).clone().and_then(|trace| {
        let (l, h) = (state.view.layer, state.view.head);
        let (layer, head) = if trace.0.has_head(l, h) {
            (l, h)
        } else {
            trace.0.heads.first().map(|m| (m.layer, m.head))?
        };
        Some(HeadSel {
            trace,
            labels: (*labels)
                .clone()
                .unwrap_or_else(|| Labels(Rc::new(Vec::new()))),
            layer,
            head,
        })
    });
    let pc = use_page_callbacks(&state, &engine);
    let c = layout::Ctx {
        state: &state,
        pc: &pc,
        vocab,
        initial,
        preset: (*preset).clone(),
        input,
        roles: (*roles).clone(),
        head_sel,
        page_frag: (*page_frag).clone(),
        dark: appearance.dark,
        offline: appearance.offline,
    };
    match (d.present, d.embed) {
        (Some(view), _) => layout::present(&c, view),
        (None, Some(_)) => layout::embed(&c),
        (None, None) => layout::page(&c),
    }
}
