//! Every head of every layer as a small heatmap with its role's badge; one click (or Enter)
//! selects it; a filter makes the heads of one role stand out.

use std::rc::Rc;

use attnlab_model::cpu::MASKED;
use attnlab_model::roles::{Role, Scores};
use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlCanvasElement, HtmlElement, HtmlSelectElement};
use yew::prelude::*;

use super::{target_as, use_measured, TraceRef};
use crate::draw::{heads_canvas, put_matrix, Scale, Tile};
use crate::i18n::{role_text, Key, Lang};

#[derive(Properties, PartialEq)]
pub struct MiniProps {
    pub trace: TraceRef,
    pub layer: usize,
    pub head: usize,
    #[prop_or_default]
    pub class: Classes,
}

/// One head's weights, one pixel per cell (scaled up crisp by CSS) — a canvas of its own, for
/// the few maps of the two-text comparison (the all-heads grid draws one canvas for all).
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

/// Where the heads' slots are inside the grid (CSS px, the slots' inner boxes, in order) and
/// the grid's size. Measured when the grid is laid out at a new size (a ResizeObserver: the
/// layout is fresh then, so reading it forces nothing), never per result.
#[derive(Clone, Debug, PartialEq)]
struct Geometry {
    size: (f64, f64),
    slots: Vec<(f64, f64, f64, f64)>,
}

fn measure(grid: &Element) -> Geometry {
    let g = grid.get_bounding_client_rect();
    let slots = grid.query_selector_all(".mini-slot").ok();
    let slots = (0..slots.as_ref().map_or(0, |s| s.length()))
        .filter_map(|i| slots.as_ref()?.item(i)?.dyn_into::<HtmlElement>().ok())
        .map(|el| {
            let r = el.get_bounding_client_rect();
            (
                r.left() - g.left() + el.client_left() as f64,
                r.top() - g.top() + el.client_top() as f64,
                el.client_width() as f64,
                el.client_height() as f64,
            )
        })
        .collect();
    Geometry {
        size: (g.width(), g.height()),
        slots,
    }
}

/// How opaque a head's tile is: switched off or filtered out heads fade (as their buttons).
fn alpha(ablated: bool, dim: bool, selected: bool) -> f64 {
    match (dim, selected, ablated) {
        (true, true, _) => 0.6,
        (true, false, _) => 0.25,
        (false, _, true) => 0.35,
        _ => 1.0,
    }
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
    let grid = use_node_ref();
    let canvas = use_node_ref();
    let geometry = use_measured(grid.clone(), measure);
    let faded: Vec<f64> = (0..n_layer * n_head)
        .map(|i| {
            let (l, h) = (i / n_head.max(1), i % n_head.max(1));
            let scores = props.roles.get(i).copied().unwrap_or_default();
            alpha(
                ablated.contains(&(l, h)),
                props.filter.is_some_and(|r| !scores.has(r)),
                props.selected == (l, h),
            )
        })
        .collect();
    // the selected head's thumbnail, for the end-to-end tests (`window.__attnlab.thumbnail`)
    use_effect_with((props.trace.clone(), props.selected), |(tr, (l, h))| {
        if let Some(th) = &tr.0.thumbnails {
            let weights = js_sys::Float32Array::from(th.head(*l, *h));
            let fields: [(&str, wasm_bindgen::JsValue); 5] = [
                ("layer", (*l as f64).into()),
                ("head", (*h as f64).into()),
                ("span", (th.span as f64).into()),
                ("cells", (th.cells as f64).into()),
                ("weights", weights.into()),
            ];
            crate::dom::expose("thumbnail", &crate::dom::object(&fields).into());
        }
    });
    // every head on one canvas: once per result, model, size or fading — never on a hover
    {
        let canvas = canvas.clone();
        use_effect_with(
            (props.trace.clone(), geometry, faded),
            move |(tr, geometry, faded)| {
                let (Some(c), Some(g)) = (canvas.cast::<HtmlCanvasElement>(), geometry) else {
                    return;
                };
                let d = &tr.0.dims;
                let tiles: Vec<Tile> = g
                    .slots
                    .iter()
                    .zip(faded)
                    .map(|(&(x, y, w, h), &alpha)| Tile { x, y, w, h, alpha })
                    .collect();
                if tiles.len() != d.n_layer * d.n_head {
                    return; // the slots of another model: re-measured on the next layout
                }
                let n_head = d.n_head;
                if !tr.every_head() {
                    // a slim result (a long text): every head pooled small, when it came
                    // with its thumbnails
                    match &tr.0.thumbnails {
                        Some(th) => {
                            // a cell wholly after its rows under the causal mask is the
                            // mask's grey, as in the whole grid and the all-heads PNG
                            let mask =
                                crate::export::pooled_mask(th.cells, tr.0.options.causal_mask);
                            heads_canvas(&c, g.size, th.cells, &tiles, |i| {
                                (th.head(i / n_head, i % n_head), &mask[..])
                            });
                        }
                        None => heads_canvas(&c, g.size, 0, &tiles, |_| (&[][..], &[][..])),
                    }
                    return;
                }
                heads_canvas(&c, g.size, d.t, &tiles, |i| {
                    let hv = tr.0.head(i / n_head, i % n_head);
                    (hv.weights, hv.masked)
                });
            },
        );
    }
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
                    <span class="mini-slot" aria-hidden="true"></span>
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
            if !props.trace.every_head() {
                <p class="help" id="heads-slim" data-span={props.trace.0.thumbnails.as_ref().map(|t| t.span.to_string())}>
                    { match &props.trace.0.thumbnails {
                        Some(t) if t.span <= 1 => Key::HeadsSmall.text(lang).to_string(),
                        Some(t) => Key::HeadsPooled.text(lang).replace("{span}", &t.span.to_string()),
                        None => Key::SlimHeads.text(lang).to_string(),
                    } }
                </p>
                if !props.trace.0.has_head(props.selected.0, props.selected.1) {
                    <p class="help" role="status" id="heads-computing" aria-busy="true">
                        { format!("{} {} · {} {} — {}", Key::Layer.text(lang), props.selected.0,
                            Key::Head.text(lang), props.selected.1, Key::Computing.text(lang)) }
                    </p>
                }
            }
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
            <div class="heads-grid" ref={grid} style={format!("--heads: {n_head}")}>
                <canvas class="heads-canvas" ref={canvas} aria-hidden="true" />
                <div class="heads-row head-labels" aria-hidden="true">
                    <span class="row-label"></span>
                    { for (0..n_head).map(|h| html!{ <span class="col-label">{ format!("H{h}") }</span> }) }
                </div>
                { for rows }
            </div>
        </section>
    }
}
