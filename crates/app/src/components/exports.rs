//! Export the selected head (PNG, SVG, CSV, JSON), all heads as one PNG, or the whole Trace
//! (JSON) — made in the page and saved by the browser; nothing is sent anywhere.

use std::rc::Rc;

use attnlab_model::export::{self, Selection};
use attnlab_model::TokenInfo;
use wasm_bindgen::{Clamped, JsCast};
use web_sys::{HtmlCanvasElement, ImageData};
use yew::prelude::*;

use super::{HeadSel, Labels};
use crate::dom;
use crate::draw::{self, Layout};
use crate::export::{file_name, grid_pixels, heatmap_svg, pooled_grid_pixels};
use crate::i18n::{Key, Lang};

#[derive(Properties, PartialEq, Clone)]
pub struct Props {
    pub lang: Lang,
    pub sel: HeadSel,
    pub tokens: Rc<Vec<TokenInfo>>,
    /// Display strings of the vocabulary, by id.
    pub vocab: Labels,
    /// Every field of the trace is there; else the whole-Trace export asks `on_full` for it.
    #[prop_or(true)]
    pub complete: bool,
    /// Asks for the whole trace of (ids, options); the callback gets it.
    #[prop_or_default]
    pub on_full: Callback<FullTraceAsk>,
}

/// What the whole-Trace export asks for: the ids and options of the result, and where the
/// whole trace (or why not) goes.
pub type FullTraceAsk = (
    Vec<u32>,
    attnlab_model::AttentionOptions,
    Callback<Result<Rc<attnlab_model::Trace>, String>>,
);

/// Saves the whole trace `tr` of `tokens` as JSON; returns the file's name.
fn save_trace(tokens: &[TokenInfo], tr: &attnlab_model::Trace) -> Result<String, String> {
    let mut bytes = Vec::new();
    export::write_full_json(&mut bytes, tokens, tr).map_err(|e| e.to_string())?;
    let name = file_name(None, "trace", "json");
    dom::download_bytes(&name, "application/json", &bytes)?;
    Ok(name)
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Png,
    Svg,
    Grid,
    Csv,
    Json,
    Trace,
}

fn new_canvas() -> Result<HtmlCanvasElement, String> {
    web_sys::window()
        .and_then(|w| w.document())
        .ok_or("no document")?
        .create_element("canvas")
        .map_err(|e| format!("{e:?}"))?
        .dyn_into::<HtmlCanvasElement>()
        .map_err(|_| "no canvas".to_string())
}

fn png_url(canvas: &HtmlCanvasElement) -> Result<String, String> {
    canvas
        .to_data_url_with_type("image/png")
        .map_err(|e| format!("{e:?}"))
}

fn export(props: &Props, kind: Kind) -> Result<String, String> {
    let sel = &props.sel;
    let tr = &sel.trace.0;
    let (l, h) = (sel.layer, sel.head);
    let hv = sel.view();
    let labels = &sel.labels.0;
    let one = Selection(vec![(l, h)]);
    let text = |f: &dyn Fn(&mut Vec<u8>) -> std::io::Result<()>| {
        let mut out = Vec::new();
        f(&mut out).map_err(|e| e.to_string())?;
        Ok::<_, String>(out)
    };
    let name = match kind {
        Kind::Png => {
            let canvas = new_canvas()?;
            let n = hv.t;
            let lay = Layout::new((84.0 + 28.0 * n as f64).clamp(360.0, 2400.0), n);
            draw::heatmap(
                &canvas,
                lay,
                (hv.weights, hv.masked),
                labels,
                draw::INK_LIGHT,
                None,
            );
            let name = file_name(Some((l, h)), "weights", "png");
            dom::download_url(&name, &png_url(&canvas)?)?;
            name
        }
        Kind::Svg => {
            let title = format!(
                "attnlab — {} {l} · {} {h}",
                Key::Layer.text(props.lang),
                Key::Head.text(props.lang)
            );
            let svg = heatmap_svg(hv.weights, hv.masked, labels, &title);
            let name = file_name(Some((l, h)), "weights", "svg");
            dom::download_bytes(&name, "image/svg+xml", svg.as_bytes())?;
            name
        }
        Kind::Grid => {
            // a slim result (a long text): every head's thumbnail, as the heads grid shows it
            let (w, hgt, px, what) = if sel.trace.every_head() {
                let (w, h, px) = grid_pixels(tr);
                (w, h, px, "all-heads".to_string())
            } else {
                let th = tr
                    .thumbnails
                    .as_ref()
                    .ok_or_else(|| Key::NeedsEveryHead.text(props.lang).to_string())?;
                let (w, h, px) = pooled_grid_pixels(th, tr.options.causal_mask);
                let what = match th.span {
                    1 => "all-heads".to_string(),
                    s => format!("all-heads-pooled-{s}x{s}"),
                };
                (w, h, px, what)
            };
            let canvas = new_canvas()?;
            canvas.set_width(w as u32);
            canvas.set_height(hgt as u32);
            let img =
                ImageData::new_with_u8_clamped_array_and_sh(Clamped(&px), w as u32, hgt as u32)
                    .map_err(|e| format!("{e:?}"))?;
            draw::context(&canvas)
                .ok_or("no 2d context")?
                .put_image_data(&img, 0.0, 0.0)
                .map_err(|e| format!("{e:?}"))?;
            let name = file_name(None, &what, "png");
            dom::download_url(&name, &png_url(&canvas)?)?;
            name
        }
        Kind::Csv => {
            let bytes = text(&|o| export::write_csv(o, &props.tokens, tr, &one))?;
            let name = file_name(Some((l, h)), "head", "csv");
            dom::download_bytes(&name, "text/csv", &bytes)?;
            name
        }
        Kind::Json => {
            let vocab = props.vocab.clone();
            let display = move |id: u32| vocab.get(id as usize).to_string();
            let bytes = text(&|o| export::write_json(o, &display, &props.tokens, tr, &one))?;
            let name = file_name(Some((l, h)), "head", "json");
            dom::download_bytes(&name, "application/json", &bytes)?;
            name
        }
        Kind::Trace => save_trace(&props.tokens, tr)?,
    };
    Ok(name)
}

#[function_component]
pub fn Exports(props: &Props) -> Html {
    let lang = props.lang;
    let status = use_state(|| None::<Result<String, String>>);
    let preparing = use_state(|| false);
    let button = |kind: Kind, id: &'static str, key: Key| {
        let onclick = {
            let (status, preparing) = (status.clone(), preparing.clone());
            let props = props.clone();
            Callback::from(move |_| {
                if kind == Kind::Trace && !props.complete {
                    // a lite result: the CPU worker sends the whole trace first
                    let (status, preparing2) = (status.clone(), preparing.clone());
                    let tokens = props.tokens.clone();
                    let done =
                        Callback::from(move |full: Result<Rc<attnlab_model::Trace>, String>| {
                            preparing2.set(false);
                            status.set(Some(full.and_then(|tr| save_trace(&tokens, &tr))));
                        });
                    preparing.set(true);
                    let ids = props.tokens.iter().map(|t| t.id).collect();
                    props
                        .on_full
                        .emit((ids, props.sel.trace.0.options.clone(), done));
                    return;
                }
                status.set(Some(export(&props, kind)))
            })
        };
        html! { <button {id} class="export" {onclick}>{ key.text(lang) }</button> }
    };
    let msg = match &*status {
        _ if *preparing => {
            html! { <p class="help" role="status" id="export-status" aria-busy="true">{ Key::ExportPreparing.text(lang) }</p> }
        }
        Some(Ok(name)) => {
            html! { <p class="help" role="status" id="export-status">{ format!("{}: {name}", Key::Exported.text(lang)) }</p> }
        }
        Some(Err(e)) => {
            html! { <p class="error" role="alert" id="export-status">{ format!("{}: {e}", Key::ExportFailed.text(lang)) }</p> }
        }
        None => html! {},
    };
    html! {
        <section class="card export-card" aria-labelledby="export-h">
            <h2 id="export-h">{ Key::Export.text(lang) }</h2>
            <p class="help">{ format!("{} — {} {} · {} {}", Key::ExportHelp.text(lang),
                Key::Layer.text(lang), props.sel.layer, Key::Head.text(lang), props.sel.head) }</p>
            <div class="export-buttons">
                { button(Kind::Png, "export-png", Key::ExportPng) }
                { button(Kind::Svg, "export-svg", Key::ExportSvg) }
                { button(Kind::Csv, "export-csv", Key::ExportCsv) }
                { button(Kind::Json, "export-json", Key::ExportJson) }
                { button(Kind::Grid, "export-grid", Key::ExportGrid) }
                { button(Kind::Trace, "export-trace", Key::ExportTrace) }
            </div>
            { msg }
        </section>
    }
}
