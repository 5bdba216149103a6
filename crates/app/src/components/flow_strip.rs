//! Where the query's information comes from, layer by layer (attnlab_model::flow): one row
//! per layer, one column per input token — raw or value-weighted attention with the layer's
//! heads averaged, or the rollout up to that layer (an approximation, and said so).
//!
//! It reads every head's weights: for a slim result (a long text, whose maps the page does
//! not hold) the CPU worker computes the strip from its own run, a few rows at a time
//! (`on_need`), and this view shows what comes back in the state (`asked`).

use std::rc::Rc;

use attnlab_model::flow::{self, Method};
use yew::prelude::*;

use super::matrix::{MatrixCanvas, MatrixTable};
use super::{Floats, Labels, TraceRef};
use crate::draw::Scale;
use crate::engine::FlowOf;
use crate::i18n::{Key, Lang};
use crate::state::FlowResult;

/// Up to this many tokens the strip shows its numbers; longer texts as colour.
const NUMBERS_UP_TO: usize = 12;

/// Each layer's strongest key and its share, "key:share" joined by spaces (a canvas's
/// numbers, for whoever reads the page's markup: the end-to-end tests compare them with
/// the CLI's).
fn top_keys(values: &[f32], t: usize) -> String {
    values
        .chunks(t.max(1))
        .map(|row| {
            let (j, x) =
                row.iter()
                    .enumerate()
                    .fold((0, f32::MIN), |b, (j, &x)| if x > b.1 { (j, x) } else { b });
            format!("{j}:{x}")
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[derive(Properties, PartialEq)]
pub struct Props {
    pub lang: Lang,
    pub trace: TraceRef,
    pub labels: Labels,
    pub query: usize,
    pub method: Method,
    /// The result the trace is (`Shown::generation`).
    pub generation: u64,
    /// The latest strip the worker computed (maybe of another result, query or method).
    pub asked: Option<Rc<FlowResult>>,
    /// Asks the worker for the strip of (result, query, method) of a slim result.
    pub on_need: Callback<(u64, FlowOf)>,
}

#[function_component]
pub fn FlowStrip(props: &Props) -> Html {
    let lang = props.lang;
    let every = props.trace.every_head();
    let t = props.trace.0.dims.t;
    let q = props.query.min(t - 1);
    // every head's maps at hand: computed here, once per (result, query, method)
    let local = use_memo((props.trace.clone(), q, props.method), |(tr, q, m)| {
        if !tr.every_head() {
            return Floats(Rc::default());
        }
        let rows = match m {
            Method::Rollout => flow::rollout_rows(&tr.rollout(), tr.0.dims.t, *q),
            _ => flow::strip(&tr.0, *q, *m).unwrap_or_default(),
        };
        Floats(Rc::new(rows.concat()))
    });
    // a slim result's: asked of the worker once per (result, query, method), while the card
    // is near the screen
    let node = use_node_ref();
    let current = {
        let (trace, on_need) = (props.trace.clone(), props.on_need.clone());
        super::use_asked(
            node.clone(),
            props.asked.clone(),
            props.generation,
            (q, props.method),
            !every,
            move |generation, (query, method)| {
                let tr = &trace.0;
                let ask = FlowOf {
                    ids: tr.tokens.clone(),
                    opts: tr.options.clone(),
                    query,
                    method,
                };
                on_need.emit((generation, ask));
            },
        )
    };
    // the numbers shown, or what to say instead
    let data: Result<Floats, Html> = if every {
        Ok((*local).clone())
    } else {
        match current.as_ref().map(|f| &f.values) {
            None => Err(html! {
                <p class="help" role="status" id="flow-strip" aria-busy="true">{ Key::FlowComputing.text(lang) }</p>
            }),
            Some(Err(e)) => Err(html! {
                <p class="error" role="alert" id="flow-strip">{ format!("{}: {e}", Key::FlowFailed.text(lang)) }</p>
            }),
            Some(Ok(rows)) => Ok(Floats(rows.clone())),
        }
    };
    // each layer's strongest key, once per strip (not on every render)
    let top = use_memo((data.as_ref().ok().cloned(), t), |(values, t)| {
        values
            .as_ref()
            .map(|v| top_keys(&v.0, *t))
            .unwrap_or_default()
    });
    let layers = props.trace.0.dims.n_layer;
    let layer_labels = Labels(Rc::new((0..layers).map(|l| format!("L{l}")).collect()));
    let scale = Scale::Weights { max: 1.0 };
    let what = match props.method {
        Method::Raw => Key::FlowStripRaw,
        Method::Value => Key::FlowStripValue,
        Method::Rollout => Key::FlowStripRollout,
    };
    let caption = format!("{} «{}»", what.text(lang), props.labels.get(q));
    html! {
        <section class="card flow-card" id="flow" aria-labelledby="flow-h" ref={node}>
            <h2 id="flow-h">{ Key::FlowTitle.text(lang) }</h2>
            <p class="help">{ caption.clone() }</p>
            if props.method == Method::Rollout {
                <p class="warn" id="flow-approx">{ Key::FlowRolloutNote.text(lang) }</p>
            }
            { match data {
                Err(said) => said,
                Ok(values) => html! {
                    <div class="table-scroll" id="flow-strip" data-method={props.method.code()}
                        data-t={t.to_string()} data-query={q.to_string()} data-top={(*top).clone()}>
                        if t <= NUMBERS_UP_TO {
                            <MatrixTable {values} rows={layers} cols={t} {scale}
                                row_labels={layer_labels} col_labels={Some(props.labels.clone())} caption={caption}
                                corner={format!("{} \\ {}", Key::Layer.text(lang), Key::KeyToken.text(lang))} />
                        } else {
                            <MatrixCanvas {values} rows={layers} cols={t} {scale} label={caption} />
                        }
                    </div>
                },
            } }
        </section>
    }
}
