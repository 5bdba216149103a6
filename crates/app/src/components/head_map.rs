//! The selected head, large: query rows and key columns labelled with tokens, the masked
//! triangle hatched, and the numbers of the cell under the mouse or keyboard focus. A long
//! map zooms (Ctrl+wheel, + / −, the buttons) and pans (drag, wheel, the minimap, the focus).

use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlCanvasElement, HtmlElement};
use yew::prelude::*;

use attnlab_model::flow::{self, Method};

use super::{on_checked, use_measured, HeadSel};
use crate::compare::fmt_num;
use crate::draw::{heatmap, highlight, Layout, Window, INK_DARK, INK_LIGHT, MIN_SPAN, ZOOM_STEP};
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

/// The shortest text whose map offers zooming (twice the smallest window).
const ZOOMS_FROM: usize = 16;

/// The window one zoom step in (`factor` < 1) or out makes of the layout's, about the
/// focused cell when it is on screen, else the window's middle; `None` for the whole map.
fn zoomed(lay: Layout, factor: f64, focus: Option<(usize, usize)>) -> Option<Window> {
    let w = lay.window();
    let mid = (w.r0 + w.span / 2, w.c0 + w.span / 2);
    let (r, c) = focus.filter(|&f| w.shows(f)).unwrap_or(mid);
    let next = w.zoom(lay.t, factor, (r as f64 + 0.5, c as f64 + 0.5));
    (!next.is_whole(lay.t)).then_some(next)
}

/// How many cells a wheel's delta moves (pixels, lines or pages by its mode).
fn wheel_cells(delta: f64, mode: u32, lay: Layout) -> isize {
    let cells = match mode {
        0 => delta / lay.cell,
        1 => delta,
        _ => delta * lay.n as f64,
    };
    if cells == 0.0 {
        0
    } else {
        // a small delta still moves one cell
        (cells.abs().round().max(1.0) * cells.signum()) as isize
    }
}

/// The (T, T) matrix the map shows for `method`.
fn matrix_shown(sel: &HeadSel, method: Method) -> Vec<f32> {
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
    let minimap = use_node_ref();
    // the zoomed part of the map (None: the whole map), kept across results and heads
    let win = use_state(|| None::<Window>);
    let shown = (*win)
        .map(|w| w.clamp(t))
        .filter(|w| t >= ZOOMS_FROM && !w.is_whole(t));
    // the matrix shown: once per result, head or method (zooming and panning redraw it)
    let values = use_memo((props.sel.clone(), props.flow), |(sel, method)| {
        matrix_shown(sel, *method)
    });
    // the heatmap: drawn once per result, head, zoom or window size
    {
        let (node, minimap) = (node.clone(), minimap.clone());
        let layout = layout.clone();
        // (`values` follows the result and the method, both in the dependencies: an Rc of the
        // matrix itself would be compared number by number at every hover)
        use_effect_with(
            (
                props.sel.clone(),
                measured,
                props.flow,
                props.dark,
                props.max_width.to_bits(),
                shown,
            ),
            move |(sel, measured, _, dark, max_width, shown)| {
                // drawn once the wrapper's width is known (the observer reports it after the
                // first layout)
                let (Some(canvas), Some(width)) = (node.cast::<HtmlCanvasElement>(), *measured)
                else {
                    return;
                };
                let width = if width > 0.0 { width } else { 480.0 }.min(f64::from_bits(*max_width));
                let hv = sel.view();
                let lay = Layout::windowed(width, hv.t, shown.unwrap_or(Window::whole(hv.t)));
                *layout.borrow_mut() = lay;
                let ink = if *dark { INK_DARK } else { INK_LIGHT };
                let mini = minimap.cast::<HtmlCanvasElement>();
                let matrix = (&values[..], hv.masked);
                heatmap(&canvas, lay, matrix, &sel.labels.0, ink, mini.as_ref());
                // the geometry, for tests that point at a cell
                let _ = canvas.set_attribute("data-margin", &lay.margin.to_string());
                let _ = canvas.set_attribute("data-cell-size", &lay.cell.to_string());
                let w = lay.window();
                let _ =
                    canvas.set_attribute("data-window", &format!("{},{},{}", w.r0, w.c0, w.span));
            },
        );
    }
    // the focused cell's outline, on the canvas above it: a hover redraws only this (and an
    // overlay that is empty and stays empty is not touched)
    {
        let (overlay, layout) = (overlay.clone(), layout.clone());
        let drawn = use_mut_ref(|| false);
        use_effect_with(
            (props.cell, props.pin, props.sel.clone(), measured, shown),
            move |(cell, pin, _, _, _)| {
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
    // a zoomed map follows the focused cell and the pinned row when they move (only then: a
    // map moved away from them by the wheel, a drag or the minimap stays where it was moved)
    {
        let win = win.clone();
        use_effect_with((props.cell, props.pin), move |(cell, pin)| {
            let Some(w) = shown else {
                return;
            };
            let target = cell.or(pin.map(|i| (i, w.c0)));
            if let Some(target) = target.filter(|&(i, j)| i < t && j < t && !w.shows((i, j))) {
                win.set(Some(w.follow(t, target)));
            }
        });
    }
    // the wheel, on the canvas itself (the page's own listeners are passive): Ctrl+wheel (or a
    // pinch) zooms about the pointer, the wheel moves a zoomed map and scrolls the page
    // once the map is at its edge
    {
        let (node, layout, set) = (node.clone(), layout.clone(), win.setter());
        use_effect_with((), move |_| {
            let cb = Closure::<dyn Fn(web_sys::WheelEvent)>::new(move |e: web_sys::WheelEvent| {
                let lay = *layout.borrow();
                let (t, w) = (lay.t, lay.window());
                if t < ZOOMS_FROM {
                    return;
                }
                let next = if e.ctrl_key() || e.meta_key() {
                    e.prevent_default();
                    let factor = if e.delta_y() < 0.0 {
                        1.0 / ZOOM_STEP
                    } else {
                        ZOOM_STEP
                    };
                    w.zoom(t, factor, lay.at(e.offset_x() as f64, e.offset_y() as f64))
                } else if !w.is_whole(t) {
                    let (dx, dy) = if e.shift_key() {
                        (e.delta_y(), 0.0)
                    } else {
                        (e.delta_x(), e.delta_y())
                    };
                    let mode = e.delta_mode();
                    w.pan(t, wheel_cells(dy, mode, lay), wheel_cells(dx, mode, lay))
                } else {
                    return;
                };
                if next != w {
                    e.prevent_default();
                    set.set((!next.is_whole(t)).then_some(next));
                }
            });
            let target = node.cast::<web_sys::Node>().map(web_sys::EventTarget::from);
            crate::dom::listen(target, "wheel", cb)
        });
    }
    // dragging a zoomed map moves it: where the drag started, the window then, and whether it
    // has moved (a press that has not moved is still a click)
    let drag = use_mut_ref(|| None::<(f64, f64, Window, bool)>);
    let onpointerdown = {
        let (layout, drag) = (layout.clone(), drag.clone());
        Callback::from(move |e: PointerEvent| {
            let lay = *layout.borrow();
            let on_cells = lay.hit(e.offset_x() as f64, e.offset_y() as f64).is_some();
            if e.button() != 0 || lay.window().is_whole(lay.t) || !on_cells {
                return;
            }
            let (x, y) = (e.client_x() as f64, e.client_y() as f64);
            *drag.borrow_mut() = Some((x, y, lay.window(), false));
            if let Some(el) = e.target().and_then(|t| t.dyn_into::<Element>().ok()) {
                let _ = el.set_pointer_capture(e.pointer_id());
            }
        })
    };
    let onpointermove = {
        let (layout, drag, set) = (layout.clone(), drag.clone(), win.setter());
        Callback::from(move |e: PointerEvent| {
            let mut drag = drag.borrow_mut();
            let Some((x0, y0, w0, moved)) = drag.as_mut() else {
                return;
            };
            let (dx, dy) = (e.client_x() as f64 - *x0, e.client_y() as f64 - *y0);
            if !*moved && dx * dx + dy * dy < 9.0 {
                return;
            }
            *moved = true;
            let lay = *layout.borrow();
            let cells = |d: f64| -(d / lay.cell).round() as isize;
            let next = w0.pan(lay.t, cells(dy), cells(dx));
            if next != lay.window() {
                set.set(Some(next));
            }
        })
    };
    let onpointerup = {
        let drag = drag.clone();
        Callback::from(move |_: PointerEvent| {
            drag.borrow_mut().take();
        })
    };
    // the minimap: a press or a drag on it centres the map there
    let on_minimap = {
        let (layout, set) = (layout.clone(), win.setter());
        Callback::from(move |e: PointerEvent| {
            if e.type_() == "pointermove" && e.buttons() & 1 == 0 {
                return;
            }
            let Some(el) = e.target().and_then(|t| t.dyn_into::<HtmlElement>().ok()) else {
                return;
            };
            if e.type_() == "pointerdown" {
                let _ = el.set_pointer_capture(e.pointer_id());
            }
            let lay = *layout.borrow();
            let side = f64::from(el.client_width().max(1));
            let at = |v: i32| ((v as f64 / side) * lay.t as f64).clamp(0.0, (lay.t - 1) as f64);
            let next = lay.window().centre_on(
                lay.t,
                (at(e.offset_y()) as usize, at(e.offset_x()) as usize),
            );
            if next != lay.window() {
                set.set(Some(next));
            }
        })
    };
    let onmousemove = {
        let (layout, drag) = (layout.clone(), drag.clone());
        let on_cell = props.on_cell.clone();
        let current = props.cell;
        Callback::from(move |e: MouseEvent| {
            if drag.borrow().is_some_and(|d| d.3) {
                return;
            }
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
        let (layout, set) = (layout.clone(), win.setter());
        Callback::from(move |e: KeyboardEvent| {
            let (i, j) = current.unwrap_or((0, 0));
            // zooming: + and − about the focused cell, 0 for the whole map
            let zoom = match e.key().as_str() {
                "+" | "=" => Some(1.0 / ZOOM_STEP),
                "-" | "_" => Some(ZOOM_STEP),
                "0" => Some(f64::INFINITY),
                _ => None,
            };
            if let Some(factor) = zoom.filter(|_| !e.ctrl_key() && !e.meta_key()) {
                let lay = *layout.borrow();
                if lay.t >= ZOOMS_FROM {
                    e.prevent_default();
                    set.set(if factor.is_finite() {
                        zoomed(lay, factor, current)
                    } else {
                        None
                    });
                }
                return;
            }
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
                    html! {
                        <label>
                            <input type="radio" name="flow" id={format!("flow-{}", m.code())} checked={props.flow == m}
                                onchange={Callback::from(move |_| cb.emit(m))} />
                            { key.text(lang) }
                        </label>
                    }
                }) }
            </fieldset>
            if props.flow != Method::Raw {
                <p class="help" id="flow-note">{ match props.flow {
                    Method::Value => Key::FlowValueNote.text(lang),
                    _ if !props.sel.trace.every_head() => Key::RolloutInStrip.text(lang),
                    _ => Key::FlowRolloutNote.text(lang),
                } }</p>
            }
            if t >= ZOOMS_FROM { { zoom_bar(lang, t, shown, &layout, props.cell, &win, minimap, on_minimap) } }
            <div class="heatmap-wrap" ref={wrap}>
                <canvas id="head-map" ref={node} tabindex="0" role="img" aria-label={title}
                    class={classes!(shown.is_some().then_some("zoomed"))}
                    aria-describedby="cell-readout" data-t={t.to_string()}
                    {onmousemove} {onkeydown} {onfocus} {onclick}
                    {onpointerdown} {onpointermove} onpointerup={onpointerup.clone()} onpointercancel={onpointerup} />
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

/// The zoom buttons above a long map, where the window is, and the minimap of the whole map
/// while zoomed.
#[allow(clippy::too_many_arguments)]
fn zoom_bar(
    lang: Lang,
    t: usize,
    shown: Option<Window>,
    layout: &std::rc::Rc<std::cell::RefCell<Layout>>,
    focus: Option<(usize, usize)>,
    win: &UseStateHandle<Option<Window>>,
    minimap: NodeRef,
    on_minimap: Callback<PointerEvent>,
) -> Html {
    let step = |factor: f64| {
        let (layout, win) = (layout.clone(), win.clone());
        Callback::from(move |_: MouseEvent| win.set(zoomed(*layout.borrow(), factor, focus)))
    };
    let whole = {
        let win = win.clone();
        Callback::from(move |_: MouseEvent| win.set(None))
    };
    let at_most_in = shown.is_some_and(|w| w.span <= MIN_SPAN);
    let where_ = shown.map(|w| {
        Key::ZoomShows
            .text(lang)
            .replace("{a}", &w.r0.to_string())
            .replace("{b}", &(w.r0 + w.span - 1).to_string())
            .replace("{c}", &w.c0.to_string())
            .replace("{d}", &(w.c0 + w.span - 1).to_string())
            .replace("{t}", &t.to_string())
    });
    html! {
        <div class="map-zoom" role="group" aria-label={Key::MapZoom.text(lang)}>
            <button id="zoom-in" type="button" title={Key::ZoomIn.text(lang)} aria-label={Key::ZoomIn.text(lang)}
                disabled={at_most_in} onclick={step(1.0 / ZOOM_STEP)}>{ "+" }</button>
            <button id="zoom-out" type="button" title={Key::ZoomOut.text(lang)} aria-label={Key::ZoomOut.text(lang)}
                disabled={shown.is_none()} onclick={step(ZOOM_STEP)}>{ "−" }</button>
            <button id="zoom-whole" type="button" disabled={shown.is_none()} onclick={whole}>{ Key::WholeMap.text(lang) }</button>
            <span id="zoom-where" class="help" aria-live="polite">{ where_.unwrap_or_default() }</span>
            if shown.is_some() {
                <canvas id="head-minimap" ref={minimap} title={Key::Minimap.text(lang)} aria-label={Key::Minimap.text(lang)}
                    role="img" onpointerdown={on_minimap.clone()} onpointermove={on_minimap} />
            }
        </div>
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
