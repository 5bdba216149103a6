//! The parts every layout is made of: what they draw from (`Ctx`), the notices, the text
//! box, and the views of the result on screen (all of them, or the one shown alone).

use std::rc::Rc;

use attnlab_model::roles::Scores;
use yew::prelude::*;

use crate::components::deferred::Deferred;
use crate::components::exports::Exports;
use crate::components::flow_strip::FlowStrip;
use crate::components::forward_progress::ForwardProgress;
use crate::components::generate::Generate;
use crate::components::head_map::HeadMap;
use crate::components::head_roles::HeadRoles;
use crate::components::heads_grid::HeadsGrid;
use crate::components::legend::Legend;
use crate::components::lens::LogitLens;
use crate::components::model_card::ModelCard;
use crate::components::next_token::NextToken;
use crate::components::notices;
use crate::components::softmax_compare::SoftmaxCompare;
use crate::components::steps::Steps;
use crate::components::text_compare::TextCompare;
use crate::components::text_input::TextInput;
use crate::components::token_strip::TokenStrip;
use crate::components::weighted_sum::WeightedSum;
use crate::components::{HeadSel, Labels, TraceRef};
use crate::display::Solo;
use crate::i18n::Key;
use crate::page_callbacks::PageCallbacks;
use crate::state::State;

/// What the layouts draw from: the state and the page's callbacks, with what the page made
/// once per result (the token labels, the heads' roles, the selected head).
pub struct Ctx<'a> {
    pub state: &'a State,
    pub pc: &'a PageCallbacks,
    /// The vocabulary's display strings, the text box's first value and the texts the page
    /// puts in it (`preset`), and whether it is shown.
    pub vocab: Labels,
    pub initial: AttrValue,
    pub preset: (u32, AttrValue),
    pub input: bool,
    /// Every head's roles (the text's, with the probe's once it ran).
    pub roles: Rc<Vec<Scores>>,
    /// The selected head in the result on screen: the views' and the lesson's.
    pub head_sel: Option<HeadSel>,
    /// The whole page's fragment (an embedded view links to it).
    pub page_frag: String,
    pub dark: bool,
    pub offline: bool,
}

/// The load status and the notices (a failed GPU, a restarted worker, ignored URL parts).
pub fn notices(c: &Ctx) -> Html {
    let (model, lang) = (&c.state.model, c.state.lang);
    let status = notices::load_status(model, lang);
    let url_notice = notices::url_notice(model, lang);
    let notice = notices::notice(model, lang);
    html! { <>{ status }{ for notice }{ for url_notice }</> }
}

/// The text box, where the mode has it (`Ctx::input`).
pub fn text_box(c: &Ctx) -> Html {
    if !c.input {
        return html! {};
    }
    let layers = c.state.model.info.as_ref().map_or(0, |i| i.heads().0);
    html! {
        <>
            <TextInput initial={c.initial.clone()} label={Key::InputLabel.text(c.state.lang)}
                on_text={c.pc.cb.text.clone()} preset={c.preset.clone()} />
            <ForwardProgress lang={c.state.lang} {layers} />
        </>
    }
}

/// Whether the view shown alone (embedded or presented) is the lesson.
pub fn lesson_alone(c: &Ctx) -> bool {
    matches!(c.state.display.solo(), Some(Solo::Lesson(_)))
}

/// The one view shown alone (embedded or presented).
pub fn solo_views(c: &Ctx, map_width: f64) -> Html {
    let solo = c.state.display.solo();
    views(c, |view| solo == Some(view), map_width)
}

/// The views of the result on screen that `shows` picks, in the page's order; the map at most
/// `map_width` wide. Without a result: why (computing, an empty text, an error).
pub fn views(c: &Ctx, shows: impl Fn(Solo) -> bool, map_width: f64) -> Html {
    let (state, pc) = (c.state, c.pc);
    let cb = &pc.cb;
    let lang = state.lang;
    let t = |k: Key| k.text(lang);
    let whole = state.display.solo().is_none();
    let pair = if whole { "grid two" } else { "solo-pair" };
    let (v, iv) = (&state.view, &state.interventions);
    let shown = state.results.shown.as_ref();
    match (shown, &state.model.info, &c.head_sel) {
        (Some(s), Some(info), Some(sel)) => {
            let (trace, labels) = (sel.trace.clone(), sel.labels.clone());
            let dropped = s.run.trace.dropped;
            let q = state.query_index().unwrap_or(0);
            let (l, h) = (v.layer, v.head);
            // RoPE and the key/value heads (Llama family), for the head map and the steps
            let llama = info.llama_attn();
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
                                on_select={cb.head.clone()} roles={c.roles.clone()}
                                filter={v.role_filter} on_filter={cb.role_filter.clone()} />
                            }
                            if shows(Solo::Head) {
                            <HeadMap {lang} sel={sel.clone()}
                                cell={v.cell} on_cell={cb.cell.clone()}
                                ablated={iv.ablate.contains(&(l, h))}
                                on_ablate={(*pc.on_ablate).clone()}
                                pin={v.pin.as_ref().map(|_| q)} on_pin={cb.pin.clone()}
                                flow={v.flow} on_flow={cb.flow.clone()} dark={c.dark}
                                max_width={map_width} llama={llama.clone()} />
                            }
                        </div>
                    </Deferred>
                    }
                    if whole && v.compare.is_some() {
                        <Deferred generation={s.generation}>
                            <TextCompare {lang} a={sel.clone()} b={s.b.clone()} vocab={c.vocab.clone()}
                                a_tokens={s.tokens.len()} pin={v.pin.as_ref().map(|_| q)}
                                initial={(*pc.initial_b).clone()} on_text={cb.text_b.clone()} />
                        </Deferred>
                    }
                    if whole || [Solo::Heads, Solo::Head, Solo::Steps, Solo::Softmax].iter().any(|&x| shows(x)) {
                        <Legend {lang} />
                    }
                    if shows(Solo::Flow) {
                    <Deferred generation={s.generation}>
                        <FlowStrip {lang} trace={trace.clone()} generation={s.generation} labels={labels.clone()}
                            query={q} method={v.flow} asked={state.results.flow.clone()} on_need={(*pc.on_flow).clone()} />
                    </Deferred>
                    }
                    if shows(Solo::Roles) {
                    <Deferred generation={s.generation}>
                        <HeadRoles {lang} roles={c.roles.clone()} n_head={s.run.trace.dims.n_head}
                            probe={state.results.probe.clone()} selected={(l, h)}
                            on_select={cb.head.clone()} />
                    </Deferred>
                    }
                    if shows(Solo::Steps) {
                    <Deferred generation={s.generation}>
                        <Steps {lang} sel={sel.clone()} pin={v.pin.as_ref().map(|_| q)} llama={llama} />
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
                            <NextToken {lang} trace={trace.clone()} baseline={s.run.baseline.clone().map(TraceRef::new)}
                                vocab={c.vocab.clone()} labels={labels.clone()} query={q}
                                on_append={Some((*pc.on_append).clone())}
                                generation={s.generation} lens={state.results.lens.clone()}
                                prediction={state.results.prediction.clone()}
                                on_lens={(*pc.on_lens).clone()} />
                            }
                        </div>
                    </Deferred>
                    }
                    if shows(Solo::Generate) {
                    <Generate {lang} context={info.context()} settings={v.gen.clone()}
                        run={v.gen_run.clone()}
                        on_settings={cb.gen_settings.clone()} on_run={cb.gen.clone()} />
                    }
                    if shows(Solo::Lens) {
                    <Deferred generation={s.generation}>
                        <LogitLens {lang} trace={trace.clone()} generation={s.generation} position={q}
                            labels={labels.clone()} vocab={c.vocab.clone()} lens={state.results.lens.clone()}
                            normalised={info.normalised()} on_need={(*pc.on_lens).clone()} />
                    </Deferred>
                    }
                    if whole {
                    <Deferred generation={s.generation}>
                        <Exports {lang} sel={sel.clone()} tokens={s.tokens.clone()} vocab={c.vocab.clone()}
                            complete={s.run.complete} on_full={(*pc.on_full).clone()} />
                    </Deferred>
                    <ModelCard {lang} info={info.clone()} backend={state.model.backend.clone()} />
                    }
                </>
            }
        }
        (None, Some(info), _) | (Some(_), Some(info), None) => {
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
    }
}
