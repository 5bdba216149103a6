//! The ten most likely next tokens after the last token, and after the picked one.

use yew::prelude::*;

use super::{Labels, TraceRef};
use crate::i18n::{Key, Lang};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub lang: Lang,
    pub trace: TraceRef,
    /// Display strings of the whole vocabulary, by id.
    pub vocab: Labels,
    pub labels: Labels,
    pub query: usize,
}

fn list(props: &Props, pos: usize, id: &'static str) -> Html {
    let top = props.trace.0.top_k(pos, 10);
    let items = top.iter().map(|&(tok, p)| {
        html! {
            <li data-token={tok.to_string()}>
                <span class="piece">{ props.vocab.get(tok as usize).to_string() }</span>
                <span class="bar"><span style={format!("width:{:.1}%", p * 100.0)}></span></span>
                <span class="num">{ format!("{:.2}%", p * 100.0) }</span>
            </li>
        }
    });
    html! {
        <div class="next-list">
            <h3>{ format!("{} «{}»", Key::NextTokenAfter.text(props.lang), props.labels.get(pos)) }</h3>
            <ol {id}>{ for items }</ol>
        </div>
    }
}

#[function_component]
pub fn NextToken(props: &Props) -> Html {
    let last = props.trace.0.dims.t - 1;
    html! {
        <section class="card next-card" aria-labelledby="next-h">
            <h2 id="next-h">{ Key::NextToken.text(props.lang) }</h2>
            <div class="next-lists">
                { list(props, last, "next-last") }
                if props.query != last { { list(props, props.query.min(last), "next-query") } }
            </div>
        </section>
    }
}
