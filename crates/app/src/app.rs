//! The root: the page's layout, in its modes (the whole page, lesson, embed, present). Its
//! callbacks are `page_callbacks`', its status lines `components::notices`'. Loading the
//! model and running it is `use_engine`'s; timings are `telemetry`'s (a context above the
//! page, so recording a paint does not re-render it); the state and its actions are `state`'s.

use std::rc::Rc;

use yew::prelude::*;

use crate::components::deferred::Deferred;
use crate::components::exports::Exports;
use crate::components::flow_strip::FlowStrip;
use crate::components::generate::Generate;
use crate::components::head_map::HeadMap;
use crate::components::head_roles::HeadRoles;
use crate::components::header::Header;
use crate::components::heads_grid::HeadsGrid;
use crate::components::legend::Legend;
use crate::components::lens::LogitLens;
use crate::components::lesson::Lesson;
use crate::components::model_card::ModelCard;
use crate::components::model_loader::ModelLoader;
use crate::components::next_token::NextToken;
use crate::components::notices;
use crate::components::present_bar::PresentBar;
use crate::components::softmax_compare::SoftmaxCompare;
use crate::components::steps::Steps;
use crate::components::text_compare::TextCompare;
use crate::components::text_input::TextInput;
use crate::components::token_strip::TokenStrip;
use crate::components::weighted_sum::WeightedSum;
use crate::components::{HeadSel, Labels, TraceRef};
use crate::display::Solo;
use crate::dom;
use crate::i18n::{Key, Lang};
use crate::lesson::Section;
use crate::page_callbacks::{use_page_callbacks, PageCallbacks};
use crate::state::{Action, State, ViewAction as VA};
use crate::telemetry::{use_recorder, TimingsProvider};
use crate::url_state;
use crate::use_display::use_display;
use crate::use_engine::use_engine;

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
    // the engine runs what the state asks (`State::request`), whenever it changes
    let (engine, vocab) = use_engine(
        state.dispatcher(),
        state.request(),
        state.model.engines,
        state
            .results
            .shown
            .as_ref()
            .map(|s| (s.engine, s.asked.clone())),
        state.view.input_at,
    );
    let recorder = use_recorder();
    let appearance = use_display(&state.display, state.view.lesson, state.dispatcher());
    let dark = appearance.dark;
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
    let lang = state.lang;
    let t = |k: Key| k.text(lang);
    let PageCallbacks {
        cb,
        initial_b,
        on_append,
        on_lens,
        on_full,
        on_present,
        on_files,
        on_kept,
        on_ablate,
    } = use_page_callbacks(&state, &engine);
    // the text box's first value, and the texts the page puts in it (lesson presets)
    // (remade whenever the box comes back, after a view was shown alone: with the text now)
    let d = &state.display;
    let input = d
        .solo()
        .is_none_or(|s| s.wants_input() && (d.present.is_some() || d.input));
    let initial = use_memo(input, {
        let text = state.view.text.clone();
        move |_| AttrValue::from(text)
    });
    let preset = use_memo(state.view.preset_n, {
        let text = state.view.text.clone();
        move |&n| (n, AttrValue::from(text))
    });

    let status = notices::load_status(&state.model, lang);
    let url_notice = notices::url_notice(&state.model, lang);
    let notice = notices::notice(&state.model, lang);
    let shown = state.results.shown.as_ref();
    let cpu_reason = notices::cpu_reason(&state.model, shown, lang);

    let (v, iv) = (&state.view, &state.interventions);
    // one view on its own (embedded or presented), or the whole page
    let solo = d.solo();
    let shows = |view: Solo| match (solo, view) {
        (None, _) => true,
        (Some(Solo::Lesson(_)), Solo::Lesson(_)) => true,
        (Some(s), view) => s == view,
    };
    let whole = solo.is_none();
    let pair = if whole { "grid two" } else { "solo-pair" };
    // presented, the map is as large as fits below the bar and the text box
    let present_map = match d.present {
        Some(_) => dom::viewport_height().map_or(640.0, |h| (h - 340.0).clamp(360.0, 1200.0)),
        None => 640.0,
    };
    // the selected head in the result on screen: the views' and the lesson's
    let head_sel = shown.map(|s| HeadSel {
        trace: TraceRef(s.run.trace.clone()),
        labels: (*labels)
            .clone()
            .unwrap_or_else(|| Labels(Rc::new(Vec::new()))),
        layer: v.layer,
        head: v.head,
    });
    let views = match (shown, &state.model.info, &head_sel) {
        (Some(s), Some(info), Some(sel)) => {
            let (trace, labels) = (sel.trace.clone(), sel.labels.clone());
            let dropped = s.run.trace.dropped;
            let q = state.query_index().unwrap_or(0);
            let (l, h) = (v.layer, v.head);
            html! {
                <>
                    if shows(Solo::Tokens) {
                    <Deferred generation={s.generation}>
                        <TokenStrip {lang} tokens={s.tokens.clone()} {dropped} query={Some(q)} pinned={v.pin.is_some()}
                            on_select={cb.query.clone()} />
                    </Deferred>
                    }
                    if shows(Solo::Heads) || shows(Solo::Head) {
                    <Deferred generation={s.generation}>
                        <div class={pair}>
                            if shows(Solo::Heads) {
                            <HeadsGrid {lang} trace={trace.clone()} selected={(l, h)}
                                on_select={cb.head.clone()} roles={(*roles).clone()}
                                filter={v.role_filter} on_filter={cb.role_filter.clone()} />
                            }
                            if shows(Solo::Head) {
                            <HeadMap {lang} sel={sel.clone()}
                                cell={v.cell} on_cell={cb.cell.clone()}
                                ablated={iv.ablate.contains(&(l, h))}
                                on_ablate={(*on_ablate).clone()}
                                pin={v.pin.as_ref().map(|_| q)} on_pin={cb.pin.clone()}
                                flow={v.flow} on_flow={cb.flow.clone()} {dark}
                                max_width={present_map} />
                            }
                        </div>
                    </Deferred>
                    }
                    if whole && v.compare.is_some() {
                        <Deferred generation={s.generation}>
                            <TextCompare {lang} a={sel.clone()} b={s.b.clone()} vocab={vocab.clone()}
                                a_tokens={s.tokens.len()} pin={v.pin.as_ref().map(|_| q)}
                                initial={(*initial_b).clone()} on_text={cb.text_b.clone()} />
                        </Deferred>
                    }
                    if whole || [Solo::Heads, Solo::Head, Solo::Steps, Solo::Softmax].iter().any(|&x| shows(x)) {
                        <Legend {lang} />
                    }
                    if shows(Solo::Flow) {
                    <Deferred generation={s.generation}>
                        <FlowStrip {lang} trace={trace.clone()} labels={labels.clone()} query={q} method={v.flow} />
                    </Deferred>
                    }
                    if shows(Solo::Roles) {
                    <Deferred generation={s.generation}>
                        <HeadRoles {lang} roles={(*roles).clone()} n_head={s.run.trace.dims.n_head}
                            probe={state.results.probe.clone()} selected={(l, h)}
                            on_select={cb.head.clone()} />
                    </Deferred>
                    }
                    if shows(Solo::Steps) {
                    <Deferred generation={s.generation}>
                        <Steps {lang} sel={sel.clone()} pin={v.pin.as_ref().map(|_| q)} />
                    </Deferred>
                    }
                    if shows(Solo::Softmax) {
                    <Deferred generation={s.generation}>
                        <SoftmaxCompare {lang} sel={sel.clone()}
                            variant={iv.variant} tau={iv.tau} apply={iv.apply} mask={iv.mask} query={q}
                            on_variant={cb.variant.clone()} on_tau={cb.tau.clone()}
                            on_apply={cb.apply.clone()} on_mask={cb.mask.clone()} />
                    </Deferred>
                    }
                    if shows(Solo::Sum) || shows(Solo::Next) {
                    <Deferred generation={s.generation}>
                        <div class={pair}>
                            if shows(Solo::Sum) {
                            <WeightedSum {lang} sel={sel.clone()}
                                query={q} on_query={cb.query.clone()} />
                            }
                            if shows(Solo::Next) {
                            <NextToken {lang} trace={trace.clone()} baseline={s.run.baseline.clone().map(TraceRef)}
                                vocab={vocab.clone()} labels={labels.clone()} query={q}
                                on_append={Some((*on_append).clone())} />
                            }
                        </div>
                    </Deferred>
                    }
                    if shows(Solo::Generate) {
                    <Generate {lang} context={info.config.n_positions} settings={v.gen.clone()}
                        run={v.gen_run.clone()}
                        on_settings={cb.gen_settings.clone()} on_run={cb.gen.clone()} />
                    }
                    if shows(Solo::Lens) {
                    <Deferred generation={s.generation}>
                        <LogitLens {lang} trace={trace.clone()} generation={s.generation} position={q}
                            labels={labels.clone()} vocab={vocab.clone()} lens={state.results.lens.clone()}
                            has_ln_f={info.has_ln_f} on_need={(*on_lens).clone()} />
                    </Deferred>
                    }
                    if whole {
                    <Deferred generation={s.generation}>
                        <Exports {lang} sel={sel.clone()} tokens={s.tokens.clone()} vocab={vocab.clone()}
                            complete={s.run.complete} on_full={(*on_full).clone()} />
                    </Deferred>
                    <ModelCard {lang} info={info.clone()} backend={state.model.backend.clone()} />
                    }
                </>
            }
        }
        (None, Some(info), _) => {
            let msg = match &state.results.error {
                Some(e) if !e.is_empty() => e.clone(),
                Some(_) => t(Key::EmptyInput).to_string(),
                None => t(Key::Computing).to_string(),
            };
            html! {
                <>
                    <p class="empty" role="status" id="run-status">{ msg }</p>
                    if whole {
                        <ModelCard {lang} info={info.clone()} backend={state.model.backend.clone()} />
                    }
                </>
            }
        }
        _ => html! {},
    };

    // the text box (`input`, above): on the whole page, and beside one view unless it is the
    // lesson (which has its own inputs) or an embed without it (`input=0`)
    let top = match (d.present, d.embed) {
        (Some(view), _) => html! {
            <PresentBar {lang} {view} lesson={v.lesson} on_view={cb.present.clone()} on_section={cb.lesson.clone()}
                on_exit={cb.present_exit.clone()} />
        },
        // embedded: the view alone, with the way to the whole page
        (None, Some(_)) => html! {
            <a class="open-full" id="open-full" href={(*page_frag).clone()} target="_blank" rel="noopener">
                { t(Key::OpenInAttnlab) }
            </a>
        },
        (None, None) => html! {
            <Header {lang} backend={state.model.backend.clone()} on_lang={cb.lang.clone()}
                lesson={v.lesson.is_some()} on_lesson={cb.lesson_toggle.clone()}
                preference={state.model.preference} on_preference={cb.preference.clone()}
                theme={d.theme} on_theme={cb.theme.clone()} on_present={(*on_present).clone()}
                offline={appearance.offline} />
        },
    };

    html! {
        <>
            { top }
            <main data-focus={(whole).then(|| v.lesson.map(|i| Section::at(i).panel())).flatten()}>
                { status }
                { for notice }
                { for url_notice }
                if input {
                <TextInput initial={(*initial).clone()} label={t(Key::InputLabel)}
                    on_text={cb.text.clone()} preset={(*preset).clone()} />
                }
                if whole {
                <label class="compare-toggle">
                    <input type="checkbox" id="compare-toggle" checked={v.compare.is_some()}
                        onchange={{
                            let cb = cb.compare_toggle.clone();
                            Callback::from(move |e: Event| {
                                if let Some(i) = crate::components::target_as::<web_sys::HtmlInputElement>(&e) {
                                    cb.emit(i.checked());
                                }
                            })
                        }} />
                    { t(Key::CompareToggle) }
                </label>
                }
                if let Some(section) = v.lesson.filter(|&i| shows(Solo::Lesson(i))) {
                    <Deferred generation={shown.map_or(0, |s| s.generation)}>
                        <Lesson {lang} {section} on_section={cb.lesson.clone()}
                            sel={head_sel.clone()} query={state.query_index().unwrap_or(0)} info={state.model.info.clone()}
                            mask={iv.mask} on_mask={cb.mask.clone()} on_preset={cb.preset.clone()} />
                    </Deferred>
                }
                if whole {
                    { for cpu_reason }
                }
                { views }
                if whole && state.model.info.is_some() {
                    <ModelLoader {lang} own={state.model.own.clone()} on_files={(*on_files).clone()}
                        kept={state.model.kept.clone()} on_load_kept={on_kept.0.clone()} on_forget={on_kept.1.clone()} />
                }
            </main>
        </>
    }
}
