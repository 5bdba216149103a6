//! Where the query's information comes from, layer by layer (attnlab_model::flow): one row
//! per layer, one column per input token — raw or value-weighted attention with the layer's
//! heads averaged, or the rollout up to that layer (an approximation, and said so).

use std::rc::Rc;

use attnlab_model::flow::{self, Method};
use yew::prelude::*;

use super::matrix::{MatrixCanvas, MatrixTable};
use super::{Floats, Labels, TraceRef};
use crate::draw::Scale;
use crate::i18n::{Key, Lang};

/// Up to this many tokens the strip shows its numbers; longer texts as colour.
const NUMBERS_UP_TO: usize = 12;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub lang: Lang,
    pub trace: TraceRef,
    pub labels: Labels,
    pub query: usize,
    pub method: Method,
}

#[function_component]
pub fn FlowStrip(props: &Props) -> Html {
    let lang = props.lang;
    let data = use_memo(
        (props.trace.clone(), props.query, props.method),
        |(tr, q, m)| {
            if !tr.every_head() {
                return Floats(Rc::default());
            }
            let q = (*q).min(tr.0.dims.t - 1);
            let rows = match m {
                Method::Rollout => flow::rollout_rows(&tr.rollout(), tr.0.dims.t, q),
                _ => flow::strip(&tr.0, q, *m),
            };
            Floats(Rc::new(rows.concat()))
        },
    );
    let d = props.trace.0.dims;
    let (layers, t) = (d.n_layer, d.t);
    let q = props.query.min(t - 1);
    let layer_labels = Labels(Rc::new((0..layers).map(|l| format!("L{l}")).collect()));
    let scale = Scale::Weights { max: 1.0 };
    let what = match props.method {
        Method::Raw => Key::FlowStripRaw,
        Method::Value => Key::FlowStripValue,
        Method::Rollout => Key::FlowStripRollout,
    };
    let caption = format!("{} «{}»", what.text(lang), props.labels.get(q));
    html! {
        <section class="card flow-card" id="flow" aria-labelledby="flow-h">
            <h2 id="flow-h">{ Key::FlowTitle.text(lang) }</h2>
            <p class="help">{ caption.clone() }</p>
            if props.method == Method::Rollout {
                <p class="warn" id="flow-approx">{ Key::FlowRolloutNote.text(lang) }</p>
            }
            if !props.trace.every_head() {
                <p class="help" id="flow-strip">{ Key::NeedsEveryHead.text(lang) }</p>
            } else {
            <div class="table-scroll" id="flow-strip" data-method={props.method.code()}>
                if t <= NUMBERS_UP_TO {
                    <MatrixTable values={(*data).clone()} rows={layers} cols={t} {scale}
                        row_labels={layer_labels} col_labels={Some(props.labels.clone())} caption={caption}
                        corner={format!("{} \\ {}", Key::Layer.text(lang), Key::KeyToken.text(lang))} />
                } else {
                    <MatrixCanvas values={(*data).clone()} rows={layers} cols={t} {scale} label={caption} />
                }
            </div>
            }
        </section>
    }
}
