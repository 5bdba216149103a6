//! The ten most likely next tokens after the last token, and after the picked one; with an
//! intervention on, each with its change (Δ, percentage points) against the unmodified model.
//!
//! A slim result (a long text) holds the prediction after the last token only: the one after
//! a picked token is the last stage of the logit lens at that position, which the CPU worker
//! computes from its run (`on_lens` with `last`: that stage alone), or which the lens card's lens
//! of the same position already holds (`lens`).

use std::rc::Rc;

use attnlab_model::trace::top_k_of;
use yew::prelude::*;

use super::{Labels, TraceRef};
use crate::engine::LensOf;
use crate::i18n::{Key, Lang};
use crate::state::LensResult;

/// Tokens listed per position.
const TOP: usize = 10;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub lang: Lang,
    pub trace: TraceRef,
    /// The unmodified model's trace for the same tokens (only when an intervention is on).
    #[prop_or_default]
    pub baseline: Option<TraceRef>,
    /// Display strings of the whole vocabulary, by id.
    pub vocab: Labels,
    pub labels: Labels,
    pub query: usize,
    /// Appends a token to the text (the list after the last token only).
    #[prop_or_default]
    pub on_append: Option<Callback<u32>>,
    /// The result the trace is (`Shown::generation`).
    pub generation: u64,
    /// The latest logit lens in the state (maybe of another result or position): a slim
    /// result's prediction after the picked token is its last stage.
    pub lens: Option<Rc<LensResult>>,
    /// The latest prediction after a picked token of a slim result (maybe of another result
    /// or position): V values.
    pub prediction: Option<Rc<LensResult>>,
    /// Asks the CPU worker for the prediction after (result, position) of a slim result (the
    /// lens's last stage: `LensOf::Position` with `last`).
    pub on_lens: Callback<(u64, usize, LensOf)>,
}

/// `p − p_base` in percentage points, as shown: "+1.23", "−0.40", "±0.00".
pub fn fmt_delta(p: f32, base: f32) -> String {
    let d = (p - base) * 100.0;
    if d.abs() < 0.005 {
        "±0.00".to_string()
    } else if d > 0.0 {
        format!("+{d:.2}")
    } else {
        format!("−{:.2}", -d)
    }
}

/// The list after `pos` of the distribution `top` was taken from (its `TOP` most likely).
fn list(
    props: &Props,
    pos: usize,
    top: Vec<(u32, f32)>,
    id: &'static str,
    append: Option<&Callback<u32>>,
) -> Html {
    let lang = props.lang;
    let base = props.baseline.as_ref().and_then(|b| b.0.probs_row(pos));
    let items = top.iter().map(|&(tok, p)| {
        let delta = base.map(|b| {
            let pb = b[tok as usize];
            let class = if p > pb + 5e-5 {
                "delta up"
            } else if p < pb - 5e-5 {
                "delta down"
            } else {
                "delta"
            };
            html! { <span class={class} data-base={pb.to_string()}>{ fmt_delta(p, pb) }</span> }
        });
        html! {
            <li data-token={tok.to_string()} data-prob={p.to_string()}>
                <span class="piece">{ props.vocab.get(tok as usize).to_string() }</span>
                <span class="bar"><span style={format!("width:{:.1}%", p * 100.0)}></span></span>
                <span class="num">{ format!("{:.2}%", p * 100.0) }</span>
                { for delta }
                if let Some(cb) = append {
                    <button type="button" class="append" title={Key::AppendToken.text(lang)}
                        aria-label={format!("{} «{}»", Key::AppendToken.text(lang), props.vocab.get(tok as usize))}
                        onclick={{ let cb = cb.clone(); Callback::from(move |_| cb.emit(tok)) }}>{ "+" }</button>
                }
            </li>
        }
    });
    let base_top = base.and_then(|b| attnlab_model::trace::top_k_of(b, 1).first().copied());
    // an intervention is on, but the unmodified model's slim result has no row here
    let no_delta = props.baseline.is_some() && base.is_none();
    html! {
        <div class="next-list" data-pos={pos.to_string()}>
            <h3>{ format!("{} «{}»", Key::NextTokenAfter.text(props.lang), props.labels.get(pos)) }</h3>
            <ol {id}>{ for items }</ol>
            if no_delta {
                <p class="help no-delta">{ Key::SlimNoDelta.text(props.lang) }</p>
            }
            if let Some((tok, p)) = base_top {
                <p class="help base-top">{ format!("{}: {} ({:.2}%)", Key::UnmodifiedTop.text(props.lang),
                    props.vocab.get(tok as usize), p * 100.0) }</p>
            }
        </div>
    }
}

#[function_component]
pub fn NextToken(props: &Props) -> Html {
    let lang = props.lang;
    let tr = &props.trace.0;
    let last = tr.dims.t - 1;
    let q = props.query.min(last);
    let held = tr.probs_row(q).is_some();
    let (v, stages) = (tr.dims.vocab, tr.dims.n_layer + 1);
    // the lens card's lens of this result at this position, when it holds one: its last stage
    let lensed = props
        .lens
        .as_ref()
        .filter(|l| l.of == props.generation && l.at == q)
        .and_then(|l| l.values.as_ref().ok())
        .filter(|p| p.len() == stages * v)
        .cloned();
    // else a slim result's prediction after a picked token: that stage alone, asked of the
    // worker once per (result, position), while the card is near the screen
    let node = use_node_ref();
    let asked = {
        let (trace, on_lens) = (props.trace.clone(), props.on_lens.clone());
        super::use_asked(
            node.clone(),
            props.prediction.clone(),
            props.generation,
            q,
            !held && lensed.is_none(),
            move |generation, position| {
                let tr = &trace.0;
                let of = LensOf::Position {
                    ids: tr.tokens.clone(),
                    opts: tr.options.clone(),
                    position,
                    last: true,
                };
                on_lens.emit((generation, position, of));
            },
        )
    };
    let picked = if q == last {
        html! {}
    } else if held {
        list(props, q, tr.top_k(q, TOP), "next-query", None)
    } else if let Some(probs) = lensed {
        let top = top_k_of(&probs[(stages - 1) * v..], TOP);
        list(props, q, top, "next-query", None)
    } else {
        match asked.as_ref().map(|a| &a.values) {
            None => html! {
                <p class="help" role="status" id="next-query-status" aria-busy="true">{ Key::SlimPrediction.text(lang) }</p>
            },
            Some(Ok(probs)) if probs.len() == v => {
                list(props, q, top_k_of(probs, TOP), "next-query", None)
            }
            Some(Ok(probs)) => html! {
                // (a prediction computed on a model that has just been replaced)
                <p class="error" role="alert" id="next-query-status">{ format!("{}: {} ≠ {v}",
                    Key::SlimPredictionFailed.text(lang), probs.len()) }</p>
            },
            Some(Err(e)) => html! {
                <p class="error" role="alert" id="next-query-status">{ format!("{}: {e}", Key::SlimPredictionFailed.text(lang)) }</p>
            },
        }
    };
    html! {
        <section class="card next-card" aria-labelledby="next-h" ref={node}>
            <h2 id="next-h">{ Key::NextToken.text(props.lang) }</h2>
            if props.baseline.is_some() {
                <p class="help" id="delta-help">{ Key::DeltaHelp.text(props.lang) }</p>
            }
            <div class="next-lists">
                { list(props, last, tr.top_k(last, TOP), "next-last", props.on_append.as_ref()) }
                { picked }
            </div>
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::fmt_delta;

    #[test]
    fn deltas_are_signed_percentage_points() {
        assert_eq!(fmt_delta(0.30, 0.25), "+5.00");
        assert_eq!(fmt_delta(0.10, 0.1040), "−0.40");
        assert_eq!(fmt_delta(0.5, 0.50001), "±0.00");
    }
}
