//! One cell of the selected head taken apart: the largest per-dimension products q_i[d]·k_j[d],
//! their sum, ÷√d_k, ÷τ, exp, the row's sum, the weight, and v_j scaled by it.

use std::rc::Rc;

use yew::prelude::*;

use super::matrix::MatrixCanvas;
use super::{Floats, HeadSel};
use crate::compare::{drill_down, fmt_num};
use crate::draw::Scale;
use crate::i18n::{Key, Lang};

/// Products listed (the largest by magnitude).
const SHOWN: usize = 8;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub lang: Lang,
    pub sel: HeadSel,
    pub cell: (usize, usize),
}

#[function_component]
pub fn Drill(props: &Props) -> Html {
    let lang = props.lang;
    let t = |k: Key| k.text(lang);
    let dd = use_memo((props.sel.clone(), props.cell), |(sel, (i, j))| {
        let hv = sel.view();
        let dd = drill_down(&hv, &sel.trace.0.options, *i, *j);
        let v = Floats(Rc::new(dd.weighted_v.clone()));
        (dd, v, Scale::signed_for(hv.v))
    });
    let (ref dd, ref wv, scale) = *dd;
    let (i, j) = props.cell;
    let (qi, kj) = (props.sel.labels.get(i), props.sel.labels.get(j));
    let opts = &props.sel.trace.0.options;
    let rows = dd.products.iter().take(SHOWN).map(|&(d, q, k, p)| {
        html! {
            <tr><th scope="row">{ format!("d{d}") }</th><td>{ fmt_num(q) }</td><td>{ fmt_num(k) }</td>
                <td class="prod">{ fmt_num(p) }</td></tr>
        }
    });
    let more = dd.products.len().saturating_sub(SHOWN);
    let divisor = if opts.scale {
        format!("÷ √{}", props.sel.trace.0.dims.d_k)
    } else {
        "÷ 1".to_string()
    };
    let step = |label: String, value: String, field: &'static str| {
        html! { <div><dt>{ label }</dt><dd data-field={field}>{ value }</dd></div> }
    };
    html! {
        <section class="drill" id="drill" aria-labelledby="drill-h">
            <h3 id="drill-h">{ format!("{} ({i} {qi} · {j} {kj})", t(Key::DrillTitle)) }</h3>
            <table class="products">
                <thead><tr><th scope="col">{ t(Key::Dimension) }</th><th scope="col">{ format!("q({qi})") }</th>
                    <th scope="col">{ format!("k({kj})") }</th><th scope="col">{ "q·k" }</th></tr></thead>
                <tbody>{ for rows }</tbody>
            </table>
            if more > 0 { <p class="help">{ format!("… {more} {}", t(Key::MoreDims)) }</p> }
            <dl class="chain">
                { step(format!("Σ q·k ({})", t(Key::RawScore)), fmt_num(dd.sum), "drill-sum") }
                { step(divisor, fmt_num(dd.scaled), "drill-scaled") }
                { step(format!("÷ τ ({})", opts.temperature), fmt_num(dd.over_tau), "drill-tau") }
                if dd.masked {
                    { step(t(Key::Masked).to_string(), t(Key::MaskedCell).to_string(), "drill-masked") }
                } else {
                    { step(t(Key::ExpShifted).to_string(), format!("{:.6}", dd.exp), "drill-exp") }
                }
                { step(t(Key::RowSum).to_string(), format!("{:.6}", dd.row_sum), "drill-rowsum") }
                { step(t(Key::Weight).to_string(), fmt_num(dd.weight), "drill-weight") }
            </dl>
            <p class="help">{ format!("{} × V({kj})", fmt_num(dd.weight)) }</p>
            <MatrixCanvas values={wv.clone()} rows={1} cols={dd.weighted_v.len()} scale={scale}
                label={format!("{} × V({kj})", fmt_num(dd.weight))} />
        </section>
    }
}
