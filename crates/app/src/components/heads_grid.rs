//! Every head of every layer as a small heatmap with its role's badge; one click (or Enter)
//! selects it; a filter makes the heads of one role stand out.

use std::rc::Rc;

use attnlab_model::cpu::MASKED;
use attnlab_model::roles::{Role, Scores};
use web_sys::{HtmlCanvasElement, HtmlSelectElement};
use yew::prelude::*;

use super::{target_as, TraceRef};
use crate::draw::{put_matrix, Scale};
use crate::i18n::{role_text, Key, Lang};

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
    /// Every head's roles (text and probe), `layer * n_head + head`.
    pub roles: Rc<Vec<Scores>>,
    pub filter: Option<Role>,
    pub on_filter: Callback<Option<Role>>,
}

#[function_component]
pub fn HeadsGrid(props: &Props) -> Html {
    let lang = props.lang;
    let d = &props.trace.0.dims;
    let (n_layer, n_head) = (d.n_layer, d.n_head);
    let ablated = &props.trace.0.options.ablate;
    let on_filter = {
        let cb = props.on_filter.clone();
        Callback::from(move |e: Event| {
            if let Some(sel) = target_as::<HtmlSelectElement>(&e) {
                cb.emit(Role::from_code(&sel.value()));
            }
        })
    };
    let rows = (0..n_layer).map(|l| {
        let cells = (0..n_head).map(|h| {
            let selected = props.selected == (l, h);
            let onclick = {
                let cb = props.on_select.clone();
                Callback::from(move |_| cb.emit((l, h)))
            };
            let scores = props.roles.get(l * n_head + h).copied().unwrap_or_default();
            let strongest = scores.strongest();
            let mut label = format!("{} {} · {} {}", Key::Layer.text(lang), l, Key::Head.text(lang), h);
            if let Some((role, score)) = strongest {
                label.push_str(&format!(" — {} {score:.2}", role_text(role).0.text(lang)));
            }
            let dim = props.filter.is_some_and(|r| !scores.has(r));
            html! {
                <button class={classes!("head-cell", selected.then_some("selected"),
                        ablated.contains(&(l, h)).then_some("ablated"), dim.then_some("dim"))}
                    {onclick} aria-pressed={selected.to_string()} aria-label={label.clone()}
                    title={label} data-head={format!("{l}.{h}")}>
                    <MiniMap trace={props.trace.clone()} layer={l} head={h} />
                    if let Some((role, _)) = strongest {
                        <span class="role-badge" data-role={role.code()} aria-hidden="true">
                            { role_text(role).1.text(lang) }
                        </span>
                    }
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
            <label class="role-filter">{ Key::RoleFilter.text(lang) }{ " " }
                <select id="role-filter" onchange={on_filter}>
                    <option value="" selected={props.filter.is_none()}>{ Key::RoleFilterAll.text(lang) }</option>
                    { for Role::ALL.iter().map(|&r| html! {
                        <option value={r.code()} selected={props.filter == Some(r)}>
                            { format!("{} {}", role_text(r).0.text(lang), Key::RoleFilterHeads.text(lang)) }
                        </option>
                    }) }
                </select>
            </label>
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
