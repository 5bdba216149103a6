//! The weighted sum of V for one query token: each key's weight × its V vector as colour
//! strips, their sum (the head's output), and the formula with the live numbers.

use std::rc::Rc;

use web_sys::HtmlSelectElement;
use yew::prelude::*;

use super::matrix::MatrixCanvas;
use super::{target_as, Floats, HeadSel};
use crate::compare::formula;
use crate::draw::Scale;
use crate::i18n::{Key, Lang};

/// At most this many key rows are drawn (the largest weights).
const MAX_ROWS: usize = 12;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub lang: Lang,
    /// The head shown, in the trace shown.
    pub sel: HeadSel,
    pub query: usize,
    pub on_query: Callback<usize>,
}

struct Row {
    key: usize,
    weight: f32,
    v: Floats,
    wv: Floats,
}

#[function_component]
pub fn WeightedSum(props: &Props) -> Html {
    let lang = props.lang;
    let data = use_memo((props.sel.clone(), props.query), |(sel, q)| {
        let hv = sel.view();
        let (t, dk) = (hv.t, hv.d_k);
        let q = (*q).min(t - 1);
        let w = &hv.weights[q * t..(q + 1) * t];
        let mut keys: Vec<usize> = (0..t).filter(|&j| w[j] > 0.0).collect();
        keys.sort_by(|&a, &b| w[b].total_cmp(&w[a]));
        keys.truncate(MAX_ROWS);
        keys.sort_unstable();
        let rows: Vec<Row> = keys
            .iter()
            .map(|&j| {
                let v = &hv.v[j * dk..(j + 1) * dk];
                Row {
                    key: j,
                    weight: w[j],
                    v: Floats(Rc::new(v.to_vec())),
                    wv: Floats(Rc::new(v.iter().map(|x| x * w[j]).collect())),
                }
            })
            .collect();
        let out = Floats(Rc::new(hv.head_out[q * dk..(q + 1) * dk].to_vec()));
        let scale = Scale::signed_for(hv.v);
        (q, dk, w.to_vec(), rows, out, scale)
    });
    let (q, dk, ref wrow, ref rows, ref out, scale) = *data;
    let onchange = {
        let cb = props.on_query.clone();
        Callback::from(move |e: Event| {
            if let Some(s) = target_as::<HtmlSelectElement>(&e) {
                if let Ok(i) = s.value().parse() {
                    cb.emit(i);
                }
            }
        })
    };
    let t = props.sel.trace.0.dims.t;
    let options = (0..t).map(|i| {
        html! { <option key={i} value={i.to_string()} selected={i == q}>{ format!("{i} · {}", props.sel.labels.get(i)) }</option> }
    });
    let strip_rows = rows.iter().map(|r| {
        html! {
            <tr key={r.key}>
                <th scope="row">{ props.sel.labels.get(r.key).to_string() }</th>
                <td class="num">{ format!("{:.4}", r.weight) }</td>
                <td class="bar"><span style={format!("width:{:.1}%", r.weight * 100.0)}></span></td>
                <td><MatrixCanvas values={r.v.clone()} rows={1} cols={dk} scale={scale}
                    label={format!("V({})", props.sel.labels.get(r.key))} /></td>
                <td><MatrixCanvas values={r.wv.clone()} rows={1} cols={dk} scale={scale}
                    label={format!("{:.4}×V({})", r.weight, props.sel.labels.get(r.key))} /></td>
            </tr>
        }
    });
    let text = formula(wrow, &props.sel.labels.0, 6);
    html! {
        <section class="card sum-card" aria-labelledby="sum-h">
            <h2 id="sum-h">{ Key::WeightedSum.text(lang) }</h2>
            <p class="help">{ Key::WeightedSumHelp.text(lang) }</p>
            <label for="query-select">{ Key::Query.text(lang) }</label>
            <select id="query-select" {onchange}>{ for options }</select>
            <p class="formula" id="formula">{ format!("{} = {text}", props.sel.labels.get(q)) }</p>
            <table class="strips">
                <thead><tr><th scope="col">{ Key::KeyToken.text(lang) }</th><th scope="col">{ Key::Weight.text(lang) }</th>
                    <th scope="col"><span class="sr">{ Key::Weight.text(lang) }</span></th><th scope="col">{ "V" }</th><th scope="col">{ "weight × V" }</th></tr></thead>
                <tbody>
                    <>{ for strip_rows }</>
                    <tr class="sum-row">
                        <th scope="row">{ "Σ" }</th><td></td><td></td>
                        <td>{ Key::Output.text(lang) }</td>
                        <td><MatrixCanvas values={out.clone()} rows={1} cols={dk} scale={scale} label={Key::Output.text(lang)} /></td>
                    </tr>
                </tbody>
            </table>
        </section>
    }
}
