//! Every head of every layer as a small heatmap; one click (or Enter) selects it.

use attnlab_model::cpu::MASKED;
use web_sys::HtmlCanvasElement;
use yew::prelude::*;

use super::TraceRef;
use crate::draw::{put_matrix, Scale};
use crate::i18n::{Key, Lang};

#[derive(Properties, PartialEq)]
pub struct MiniProps {
    pub trace: TraceRef,
    pub layer: usize,
    pub head: usize,
    #[prop_or_default]
    pub class: Classes,
}

/// One head's weights, one pixel per cell (scaled up crisp by CSS).
#[function_component]
pub fn MiniMap(props: &MiniProps) -> Html {
    let node = use_node_ref();
    {
        let node = node.clone();
        use_effect_with(
            (props.trace.clone(), props.layer, props.head),
            move |(tr, l, h)| {
                if let Some(canvas) = node.cast::<HtmlCanvasElement>() {
                    crate::dom::count_draw("mini-map");
                    let hv = tr.0.head(*l, *h);
                    let max = hv.weights.iter().copied().fold(0.0f32, f32::max);
                    put_matrix(
                        &canvas,
                        hv.t,
                        hv.t,
                        hv.weights,
                        Scale::Weights { max },
                        |i, j| hv.masked[i * hv.t + j] == MASKED,
                    );
                }
            },
        );
    }
    html! { <canvas ref={node} class={classes!("mini", props.class.clone())} aria-hidden="true" /> }
}

#[derive(Properties, PartialEq)]
pub struct Props {
    pub lang: Lang,
    pub trace: TraceRef,
    pub selected: (usize, usize),
    pub on_select: Callback<(usize, usize)>,
}

#[function_component]
pub fn HeadsGrid(props: &Props) -> Html {
    let lang = props.lang;
    let d = &props.trace.0.dims;
    let (n_layer, n_head) = (d.n_layer, d.n_head);
    let ablated = &props.trace.0.options.ablate;
    let rows = (0..n_layer).map(|l| {
        let cells = (0..n_head).map(|h| {
            let selected = props.selected == (l, h);
            let onclick = {
                let cb = props.on_select.clone();
                Callback::from(move |_| cb.emit((l, h)))
            };
            let label = format!("{} {} · {} {}", Key::Layer.text(lang), l, Key::Head.text(lang), h);
            html! {
                <button class={classes!("head-cell", selected.then_some("selected"),
                        ablated.contains(&(l, h)).then_some("ablated"))}
                    {onclick} aria-pressed={selected.to_string()} aria-label={label.clone()}
                    title={label} data-head={format!("{l}.{h}")}>
                    <MiniMap trace={props.trace.clone()} layer={l} head={h} />
                </button>
            }
        });
        html! {
            <div class="heads-row" role="group" aria-label={format!("{} {l}", Key::Layer.text(lang))}>
                <span class="row-label">{ format!("L{l}") }</span>
                { for cells }
            </div>
        }
    });
    html! {
        <section class="card heads-card" aria-labelledby="heads-h">
            <h2 id="heads-h">{ Key::AllHeads.text(lang) }</h2>
            <p class="help">{ Key::AllHeadsHelp.text(lang) }</p>
            <div class="heads-grid" style={format!("--heads: {n_head}")}>
                <div class="heads-row head-labels" aria-hidden="true">
                    <span class="row-label"></span>
                    { for (0..n_head).map(|h| html!{ <span class="col-label">{ format!("H{h}") }</span> }) }
                </div>
                { for rows }
            </div>
        </section>
    }
}
