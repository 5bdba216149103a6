//! One cell of the selected head taken apart: the largest per-dimension products q_i[d]·k_j[d],
//! their sum, ÷√d_k, ÷τ, exp, the row's sum, the weight, and v_j scaled by it. For a
//! Llama-family model, RoPE too: the dimension pairs of q and k before and after their turn,
//! with each pair's angle at the two positions.

use std::rc::Rc;

use yew::prelude::*;

use super::matrix::MatrixCanvas;
use super::{Floats, HeadSel};
use crate::compare::{drill_down, fmt_num};
use crate::draw::Scale;
use crate::i18n::{Key, Lang};
use crate::state::LlamaAttn;

/// Products listed (the largest by magnitude).
const SHOWN: usize = 8;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub lang: Lang,
    pub sel: HeadSel,
    pub cell: (usize, usize),
    /// RoPE and the key/value heads, for a Llama-family model.
    #[prop_or_default]
    pub llama: Option<LlamaAttn>,
}

/// RoPE pairs listed (the largest products q·k of a pair first).
const PAIRS_SHOWN: usize = 6;

/// An angle in degrees, turned into [0°, 360°).
fn degrees(rad: f32) -> String {
    format!("{:.2}°", (rad as f64).to_degrees().rem_euclid(360.0))
}

/// The RoPE table of cell (i, j): q's pairs at position i, k's at j.
fn rope_table(lang: Lang, sel: &HeadSel, a: &LlamaAttn, (i, j): (usize, usize)) -> Html {
    use attnlab_model::llama::rotated_pairs;
    let t = |k: Key| k.text(lang);
    let hv = sel.view();
    let dk = hv.d_k;
    let (q, k) = (&hv.q[i * dk..(i + 1) * dk], &hv.k[j * dk..(j + 1) * dk]);
    let (qp, kp) = (
        rotated_pairs(q, i, &a.inv_freq, a.pairs),
        rotated_pairs(k, j, &a.inv_freq, a.pairs),
    );
    let mut order: Vec<usize> = (0..qp.len()).collect();
    let dot = |n: usize| qp[n].after.0 * kp[n].after.0 + qp[n].after.1 * kp[n].after.1;
    order.sort_by(|&x, &y| dot(y).abs().total_cmp(&dot(x).abs()));
    let pair = |p: (f32, f32)| format!("({:.2}, {:.2})", p.0, p.1).replace('-', "−");
    let rows = order.iter().take(PAIRS_SHOWN).map(|&n| {
        let (qn, kn) = (&qp[n], &kp[n]);
        html! {
            <tr>
                <th scope="row">{ format!("d{}·d{}", qn.dims.0, qn.dims.1) }</th>
                <td>{ fmt_num(qn.freq) }</td>
                <td>{ degrees(qn.angle) }</td><td>{ pair(qn.before) }</td><td>{ pair(qn.after) }</td>
                <td>{ degrees(kn.angle) }</td><td>{ pair(kn.before) }</td><td>{ pair(kn.after) }</td>
                <td>{ degrees(qn.angle - kn.angle) }</td>
                <td class="prod">{ fmt_num(dot(n)) }</td>
            </tr>
        }
    });
    let (qi, kj) = (sel.labels.get(i), sel.labels.get(j));
    html! {
        <div class="rope" id="drill-rope">
            <h4>{ t(Key::RopeTitle) }</h4>
            <p class="help">{ t(Key::RopeHelp) }</p>
            <div class="table-scroll">
            <table class="products rope-table">
                <thead>
                    <tr><th scope="col" rowspan="2">{ t(Key::RopePair) }</th><th scope="col" rowspan="2">{ t(Key::RopeFreq) }</th>
                        <th scope="colgroup" colspan="3">{ format!("q({qi}) · i = {i}") }</th>
                        <th scope="colgroup" colspan="3">{ format!("k({kj}) · j = {j}") }</th>
                        <th scope="col" rowspan="2">{ "(i − j)·θ" }</th><th scope="col" rowspan="2">{ "q·k" }</th></tr>
                    <tr><th scope="col">{ t(Key::RopeAngle) }</th><th scope="col">{ t(Key::RopeBefore) }</th><th scope="col">{ t(Key::RopeAfter) }</th>
                        <th scope="col">{ t(Key::RopeAngle) }</th><th scope="col">{ t(Key::RopeBefore) }</th><th scope="col">{ t(Key::RopeAfter) }</th></tr>
                </thead>
                <tbody>{ for rows }</tbody>
            </table>
            </div>
        </div>
    }
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
            if let Some(a) = &props.llama {
                { rope_table(lang, &props.sel, a, props.cell) }
            }
            <p class="help">{ format!("{} × V({kj})", fmt_num(dd.weight)) }</p>
            <MatrixCanvas values={wv.clone()} rows={1} cols={dd.weighted_v.len()} scale={scale}
                label={format!("{} × V({kj})", fmt_num(dd.weight))} />
        </section>
    }
}
