//! The ten most likely next tokens after the last token, and after the picked one; with an
//! intervention on, each with its change (Δ, percentage points) against the unmodified model.

use yew::prelude::*;

use super::{Labels, TraceRef};
use crate::i18n::{Key, Lang};

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

fn list(props: &Props, pos: usize, id: &'static str, append: Option<&Callback<u32>>) -> Html {
    let lang = props.lang;
    let top = props.trace.0.top_k(pos, 10);
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
    html! {
        <div class="next-list">
            <h3>{ format!("{} «{}»", Key::NextTokenAfter.text(props.lang), props.labels.get(pos)) }</h3>
            <ol {id}>{ for items }</ol>
            if let Some((tok, p)) = base_top {
                <p class="help base-top">{ format!("{}: {} ({:.2}%)", Key::UnmodifiedTop.text(props.lang),
                    props.vocab.get(tok as usize), p * 100.0) }</p>
            }
        </div>
    }
}

#[function_component]
pub fn NextToken(props: &Props) -> Html {
    let last = props.trace.0.dims.t - 1;
    html! {
        <section class="card next-card" aria-labelledby="next-h">
            <h2 id="next-h">{ Key::NextToken.text(props.lang) }</h2>
            if props.baseline.is_some() {
                <p class="help" id="delta-help">{ Key::DeltaHelp.text(props.lang) }</p>
            }
            <div class="next-lists">
                { list(props, last, "next-last", props.on_append.as_ref()) }
                if props.query != last {
                    // a slim result (a long text) holds the prediction after the last token only
                    if props.trace.0.probs_row(props.query).is_some() {
                        { list(props, props.query.min(last), "next-query", None) }
                    } else {
                        <p class="help" id="next-query">{ Key::SlimPrediction.text(props.lang) }</p>
                    }
                }
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
