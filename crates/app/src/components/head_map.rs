//! The selected head, large: query rows and key columns labelled with tokens, the masked
//! triangle hatched, and the numbers of the cell under the mouse or keyboard focus.

use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlCanvasElement, HtmlElement};
use yew::prelude::*;

use attnlab_model::flow::{self, Method};

use super::{on_checked, use_measured, HeadSel};
use crate::compare::fmt_num;
use crate::draw::{heatmap, highlight, Layout, INK_DARK, INK_LIGHT};
use crate::i18n::{Key, Lang};
use crate::state::LlamaAttn;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub lang: Lang,
    /// The head shown, in the trace shown.
    pub sel: HeadSel,
    pub cell: Option<(usize, usize)>,
    pub on_cell: Callback<Option<(usize, usize)>>,
    /// Whether the selected head is switched off, and the switch.
    pub ablated: bool,
    pub on_ablate: Callback<bool>,
    /// The pinned query row, and the pin's switch (a row, or None to unpin).
    #[prop_or_default]
    pub pin: Option<usize>,
    #[prop_or_default]
    pub on_pin: Callback<Option<usize>>,
    /// What the map shows: the head's raw weights, value-weighted, or the rollout up to its
    /// layer — and the switch.
    #[prop_or(Method::Raw)]
    pub flow: Method,
    #[prop_or_default]
    pub on_flow: Callback<Method>,
    /// The dark theme is on (the labels are drawn light).
    #[prop_or_default]
    pub dark: bool,
    /// RoPE and the key/value heads, for a Llama-family model.
    #[prop_or_default]
    pub llama: Option<LlamaAttn>,
    /// The widest the map is drawn, in CSS px (larger when presented).
    #[prop_or(640.0)]
    pub max_width: f64,
}

/// How many rows PageUp and PageDown move the focused cell.
const PAGE_ROWS: usize = 16;

/// The (T, T) matrix the map shows for `method`.
fn shown(sel: &HeadSel, method: Method) -> Vec<f32> {
    let tr = &sel.trace.0;
    match method {
        Method::Value => flow::value_weighted(tr, sel.layer, sel.head),
        // the rollout reads every head: a slim result (a long text) shows the raw weights
        Method::Rollout if sel.trace.every_head() => sel.trace.rollout()[sel.layer].clone(),
        Method::Raw | Method::Rollout => sel.view().weights.to_vec(),
    }
}

/// An element's width in CSS px (its border box; the map's wrapper has neither border nor
/// padding).
fn width_of(el: &Element) -> f64 {
    el.get_bounding_client_rect().width().floor()
}

#[function_component]
pub fn HeadMap(props: &Props) -> Html {
    let lang = props.lang;
    let node = use_node_ref();
    let layout = use_mut_ref(|| Layout::new(400.0, 1));
    let wrap = use_node_ref();
    let measured = use_measured(wrap.clone(), width_of);
    let t = props.sel.trace.0.dims.t;
    let overlay = use_node_ref();
    // the heatmap: drawn once per result, head or window size
    {
        let node = node.clone();
        let layout = layout.clone();
        use_effect_with(
            (
                props.sel.clone(),
                measured,
                props.flow,
                props.dark,
                props.max_width.to_bits(),
            ),
            move |(sel, measured, method, dark, max_width)| {
                // drawn once the wrapper's width is known (the observer reports it after the
                // first layout)
                let (Some(canvas), Some(width)) = (node.cast::<HtmlCanvasElement>(), *measured)
                else {
                    return;
                };
                let values = shown(sel, *method);
                let width = if width > 0.0 { width } else { 480.0 }.min(f64::from_bits(*max_width));
                let hv = sel.view();
                let lay = Layout::new(width, hv.t);
                *layout.borrow_mut() = lay;
                let ink = if *dark { INK_DARK } else { INK_LIGHT };
                heatmap(&canvas, lay, &values, hv.masked, &sel.labels.0, ink);
                // the geometry, for tests that point at a cell
                let _ = canvas.set_attribute("data-margin", &lay.margin.to_string());
                let _ = canvas.set_attribute("data-cell-size", &lay.cell.to_string());
            },
        );
    }
    // the focused cell's outline, on the canvas above it: a hover redraws only this (and an
    // overlay that is empty and stays empty is not touched)
    {
        let (overlay, layout) = (overlay.clone(), layout.clone());
        let drawn = use_mut_ref(|| false);
        use_effect_with(
            (props.cell, props.pin, props.sel.clone(), measured),
            move |(cell, pin, _, _)| {
                let empty = cell.is_none() && pin.is_none();
                if empty && !*drawn.borrow() {
                    return;
                }
                if let Some(canvas) = overlay.cast::<HtmlCanvasElement>() {
                    highlight(&canvas, *layout.borrow(), *cell, *pin);
                    *drawn.borrow_mut() = !empty;
                }
            },
        );
    }
    let onmousemove = {
        let layout = layout.clone();
        let on_cell = props.on_cell.clone();
        let current = props.cell;
        Callback::from(move |e: MouseEvent| {
            let hit = layout
                .borrow()
                .hit(e.offset_x() as f64, e.offset_y() as f64);
            if hit.is_some() && hit != current {
                on_cell.emit(hit);
            }
        })
    };
    // a click on a row's label pins that query (a second click unpins)
    let onclick = {
        let layout = layout.clone();
        let on_pin = props.on_pin.clone();
        Callback::from(move |e: MouseEvent| {
            if let Some(r) = layout
                .borrow()
                .row_label(e.offset_x() as f64, e.offset_y() as f64)
            {
                on_pin.emit(Some(r));
            }
        })
    };
    let onkeydown = {
        let on_cell = props.on_cell.clone();
        let on_pin = props.on_pin.clone();
        let current = props.cell;
        let pinned = props.pin.is_some();
        Callback::from(move |e: KeyboardEvent| {
            let (i, j) = current.unwrap_or((0, 0));
            let next = match e.key().as_str() {
                "Enter" | " " if current.is_some() => {
                    e.prevent_default();
                    on_pin.emit(Some(i));
                    return;
                }
                "ArrowUp" => Some((i.saturating_sub(1), j)),
                "ArrowDown" => Some(((i + 1).min(t - 1), j)),
                "ArrowLeft" => Some((i, j.saturating_sub(1))),
                "ArrowRight" => Some((i, (j + 1).min(t - 1))),
                // a long map: pages of rows, and its corners
                "PageUp" => Some((i.saturating_sub(PAGE_ROWS), j)),
                "PageDown" => Some(((i + PAGE_ROWS).min(t - 1), j)),
                "Home" if e.ctrl_key() => Some((0, 0)),
                "End" if e.ctrl_key() => Some((t - 1, t - 1)),
                "Home" => Some((i, 0)),
                "End" => Some((i, t - 1)),
                "Escape" => {
                    if pinned {
                        on_pin.emit(None);
                    }
                    on_cell.emit(None);
                    return;
                }
                _ => return,
            };
            e.prevent_default();
            on_cell.emit(if current.is_none() {
                Some((0, 0))
            } else {
                next
            });
        })
    };
    let onfocus = {
        let on_cell = props.on_cell.clone();
        let current = props.cell;
        Callback::from(move |e: FocusEvent| {
            // only a keyboard focus starts at a cell; a click is handled by the mouse
            let keyboard = e
                .target()
                .and_then(|t| t.dyn_into::<HtmlElement>().ok())
                .map(|el| el.matches(":focus-visible").unwrap_or(false))
                .unwrap_or(false);
            if current.is_none() && keyboard {
                on_cell.emit(Some((0, 0)));
            }
        })
    };
    let table = use_state(|| false);
    let hv = props.sel.view();
    // the drill-down follows the focused cell, else the pinned row at its largest weight
    let drill_cell = props.cell.filter(|&(i, j)| i < t && j < t).or_else(|| {
        let i = props.pin.filter(|&i| i < t)?;
        let row = &hv.weights[i * t..(i + 1) * t];
        let j = (0..t).max_by(|&a, &b| row[a].total_cmp(&row[b]).then(b.cmp(&a)))?;
        Some((i, j))
    });
    let readout = match props.cell.filter(|&(i, j)| i < t && j < t) {
        Some((i, j)) => {
            let e = i * t + j;
            let masked = hv.masked[e] == attnlab_model::cpu::MASKED;
            html! {
                <dl id="cell-readout" class="readout" data-cell={format!("{i},{j}")}>
                    <div><dt>{ Key::Query.text(lang) }</dt><dd>{ format!("{i} {}", props.sel.labels.get(i)) }</dd></div>
                    <div><dt>{ Key::KeyToken.text(lang) }</dt><dd>{ format!("{j} {}", props.sel.labels.get(j)) }</dd></div>
                    <div><dt>{ Key::RawScore.text(lang) }</dt><dd data-field="score">{ fmt_num(hv.scores[e]) }</dd></div>
                    <div><dt>{ Key::Scaled.text(lang) }</dt><dd data-field="scaled">{ fmt_num(hv.scaled[e]) }</dd></div>
                    <div><dt>{ Key::Masked.text(lang) }</dt><dd data-field="masked">{ fmt_num(hv.masked[e]) }</dd></div>
                    <div><dt>{ Key::Weight.text(lang) }</dt><dd data-field="weight">{ fmt_num(hv.weights[e]) }</dd></div>
                    if masked { <div class="masked-note">{ Key::MaskedCell.text(lang) }</div> }
                </dl>
            }
        }
        None => {
            html! { <p id="cell-readout" class="readout empty">{ Key::SelectedHeadHelp.text(lang) }</p> }
        }
    };
    let title = format!(
        "{} — {} {} · {} {}",
        Key::SelectedHead.text(lang),
        Key::Layer.text(lang),
        props.sel.layer,
        Key::Head.text(lang),
        props.sel.head
    );
    // grouped-query attention: the key/value head this head reads, and who shares it
    let gqa = props.llama.as_ref().map(|a| {
        let (kv, group) = a.kv_of(props.sel.head);
        let heads: Vec<String> = group.map(|h| h.to_string()).collect();
        format!(
            "{} {kv} · {} {}",
            Key::ReadsKvHead.text(lang),
            Key::SharedBy.text(lang),
            heads.join(", ")
        )
    });
    html! {
        <section class="card head-card" aria-labelledby="head-h">
            <h2 id="head-h">{ title.clone() }</h2>
            if let Some(g) = gqa {
                <p class="help" id="gqa-label">{ g }</p>
            }
            <fieldset class="flow-switch" id="flow-switch">
                <legend>{ Key::FlowShows.text(lang) }</legend>
                { for Method::ALL.iter().map(|&m| {
                    let cb = props.on_flow.clone();
                    let key = match m {
                        Method::Raw => Key::FlowRaw,
                        Method::Value => Key::FlowValue,
                        Method::Rollout => Key::FlowRollout,
                    };
                    let off = m == Method::Rollout && !props.sel.trace.every_head();
                    html! {
                        <label>
                            <input type="radio" name="flow" id={format!("flow-{}", m.code())} checked={props.flow == m}
                                disabled={off} onchange={Callback::from(move |_| cb.emit(m))} />
                            { key.text(lang) }
                        </label>
                    }
                }) }
            </fieldset>
            if props.flow != Method::Raw {
                <p class="help" id="flow-note">{ match props.flow {
                    Method::Value => Key::FlowValueNote.text(lang),
                    _ if !props.sel.trace.every_head() => Key::NeedsEveryHead.text(lang),
                    _ => Key::FlowRolloutNote.text(lang),
                } }</p>
            }
            <div class="heatmap-wrap" ref={wrap}>
                <canvas id="head-map" ref={node} tabindex="0" role="img" aria-label={title}
                    aria-describedby="cell-readout" data-t={t.to_string()}
                    {onmousemove} {onkeydown} {onfocus} {onclick} />
                <canvas id="head-highlight" class="overlay" ref={overlay} aria-hidden="true" />
            </div>
            <div aria-live="polite">{ readout }</div>
            if let Some(cell) = drill_cell {
                <super::drill::Drill {lang} sel={props.sel.clone()} {cell} llama={props.llama.clone()} />
            }
            <label class="check ablate">
                <input id="ablate" type="checkbox" checked={props.ablated} onchange={on_checked(&props.on_ablate)} />
                { format!(" {}", Key::AblateHead.text(lang)) }
            </label>
            <label class="check">
                <input id="table-view" type="checkbox" checked={*table} onchange={{
                    let table = table.clone();
                    on_checked(&Callback::from(move |on| table.set(on)))
                }} />
                { format!(" {}", Key::TableView.text(lang)) }
            </label>
            if *table { { weights_table(props) } }
        </section>
    }
}

/// The most rows and columns the table view shows at once: a longer text's table is a
/// window of the map around the focused cell (the page stays small at any length).
pub const TABLE_SIDE: usize = 64;

/// The selected head's weights as an HTML table: the screen-reader alternative to the canvas
/// (row and column headers are the tokens; masked cells say so). Past `TABLE_SIDE` tokens,
/// the window of it around the focused cell, and the caption says which.
fn weights_table(props: &Props) -> Html {
    let lang = props.lang;
    let hv = props.sel.view();
    let (t, labels) = (hv.t, &props.sel.labels);
    let (ci, cj) = props.cell.unwrap_or((0, 0));
    let (rows_shown, cols_shown) = (
        super::window(ci, t, TABLE_SIDE),
        super::window(cj, t, TABLE_SIDE),
    );
    let part = (t > TABLE_SIDE).then(|| {
        format!(
            " ({} {}–{}, {} {}–{} / {t})",
            Key::Query.text(lang),
            rows_shown.start,
            rows_shown.end - 1,
            Key::KeyToken.text(lang),
            cols_shown.start,
            cols_shown.end - 1
        )
    });
    let rows = rows_shown.map(|i| {
        let cells = cols_shown.clone().map(|j| {
            let e = i * t + j;
            if hv.masked[e] == attnlab_model::cpu::MASKED {
                html! { <td key={j} class="masked" aria-label={Key::MaskedCell.text(lang)}>{ "—" }</td> }
            } else {
                html! { <td key={j}>{ format!("{:.4}", hv.weights[e]) }</td> }
            }
        });
        html! { <tr key={i}><th scope="row">{ format!("{i} {}", labels.get(i)) }</th><>{ for cells }</></tr> }
    });
    html! {
        <div class="table-wrap" tabindex="0" role="region" aria-labelledby="head-table-caption">
            <table id="head-table">
                <caption id="head-table-caption">{ format!("{} — {} {} · {} {}{}", Key::TableCaption.text(lang),
                    Key::Layer.text(lang), props.sel.layer, Key::Head.text(lang), props.sel.head, part.unwrap_or_default()) }</caption>
                <thead><tr>
                    <th scope="col">{ format!("{} \\ {}", Key::Query.text(lang), Key::KeyToken.text(lang)) }</th>
                    <>{ for cols_shown.clone().map(|j| html! { <th key={j} scope="col">{ format!("{j} {}", labels.get(j)) }</th> }) }</>
                </tr></thead>
                <tbody>{ for rows }</tbody>
            </table>
        </div>
    }
}
