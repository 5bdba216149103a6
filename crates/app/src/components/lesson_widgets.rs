//! The lesson's widgets and the small pieces they are made of: numbers typed by the learner,
//! rows and small matrices of numbers, the RNN-vs-attention diagram, and the scaling section's
//! tables.

use web_sys::HtmlInputElement;
use yew::prelude::*;

use super::{target_as, HeadSel};
use crate::compare::fmt_num;
use crate::i18n::{Key, Lang};
use crate::lesson::{parse_scores, softmax};

pub fn num(x: f64) -> String {
    fmt_num(x as f32)
}

/// A text box holding a list of numbers; `value` is the current text.
pub fn numbers_input(id: &'static str, label: &str, value: &UseStateHandle<String>) -> Html {
    let oninput = {
        let value = value.clone();
        Callback::from(move |e: InputEvent| {
            if let Some(i) = target_as::<HtmlInputElement>(&e) {
                value.set(i.value());
            }
        })
    };
    html! {
        <label class="lesson-field">{ label }
            <input {id} type="text" inputmode="decimal" value={(**value).clone()} {oninput} spellcheck="false" />
        </label>
    }
}

pub fn row(head: &str, cells: impl IntoIterator<Item = String>, field: &'static str) -> Html {
    html! {
        <tr data-row={field}>
            <th scope="row">{ head.to_string() }</th>
            { for cells.into_iter().map(|c| html! { <td>{ c }</td> }) }
        </tr>
    }
}

/// Up to the last 8 tokens of a (T, T) matrix as a table, the query's row marked.
pub fn small_matrix(sel: &HeadSel, m: &[f32], query: usize, id: &'static str) -> Html {
    let t = sel.view().t;
    let from = t.saturating_sub(8);
    let head = html! {
        <tr><th></th>{ for (from..t).map(|j| html! { <th scope="col">{ sel.labels.get(j).to_string() }</th> }) }</tr>
    };
    let rows = (from..t).map(|i| {
        html! {
            <tr class={classes!((i == query).then_some("query-row"))}>
                <th scope="row">{ sel.labels.get(i).to_string() }</th>
                { for (from..t).map(|j| html! { <td>{ fmt_num(m[i * t + j]) }</td> }) }
            </tr>
        }
    });
    html! { <table class="lesson-table" {id}><thead>{ head }</thead><tbody>{ for rows }</tbody></table> }
}

pub fn rnn_diagram(lang: Lang, sel: Option<&HeadSel>) -> Html {
    let labels: Vec<String> = match sel {
        Some(s) => {
            let t = s.view().t;
            (t.saturating_sub(6)..t)
                .map(|i| s.labels.get(i).to_string())
                .collect()
        }
        None => vec!["나는".into(), "커피를".into(), "마셨다".into()],
    };
    let n = labels.len().max(1);
    let gap = 96.0;
    let x = |i: usize| 50.0 + gap * i as f64;
    let w = x(n - 1) + 60.0;
    let boxes = |y: f64| {
        labels.iter().enumerate().map(move |(i, l)| html! {
            <g>
                <rect x={(x(i) - 40.0).to_string()} y={(y - 14.0).to_string()} width="80" height="28" rx="6" class="tok-box" />
                <text x={x(i).to_string()} y={(y + 5.0).to_string()} text-anchor="middle">{ l.clone() }</text>
            </g>
        })
    };
    let seq = (1..n).map(|i| html! {
        <line x1={(x(i - 1) + 40.0).to_string()} y1="30" x2={(x(i) - 42.0).to_string()} y2="30"
            class="seq-arrow" style={format!("animation-delay: {}ms", 400 * i)} marker-end="url(#arrow)" />
    });
    let pairs = (0..n).flat_map(|i| (0..i).map(move |j| (i, j))).map(|(i, j)| {
        let (a, b) = (x(j), x(i));
        let h = 10.0 + 14.0 * (i - j) as f64;
        html! { <path d={format!("M {a} 118 Q {} {} {b} 118", (a + b) / 2.0, 118.0 - h)} class="pair-arc" /> }
    });
    let t = labels.len();
    let caption = Key::RnnCaption
        .text(lang)
        .replace("{steps}", &t.saturating_sub(1).to_string())
        .replace("{pairs}", &(t * (t + 1) / 2).to_string());
    html! {
        <figure class="lesson-figure">
            <svg viewBox={format!("0 0 {w} 150")} role="img" aria-label={caption.clone()} class="rnn-vs-attn">
                <defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" orient="auto">
                    <path d="M0 0 L10 5 L0 10 z" /></marker></defs>
                <text x="4" y="10" class="diagram-label">{ "RNN" }</text>
                { for boxes(30.0) }
                { for seq }
                <text x="4" y="78" class="diagram-label">{ Key::SelfAttention.text(lang) }</text>
                { for pairs }
                { for boxes(132.0) }
            </svg>
            <figcaption id="rnn-caption">{ caption }</figcaption>
        </figure>
    }
}

/// Section 4's widget: scores the learner types, softmax before and after ÷√d_k, and the
/// variance of q·k growing with d_k (with a fresh draw on request).
pub fn scaling(
    lang: Lang,
    (scaling, dk): (&UseStateHandle<String>, &UseStateHandle<String>),
    variance: &[(usize, (f64, f64))],
    seed: &UseStateHandle<u64>,
    sel: Option<&HeadSel>,
) -> Html {
    let parsed = parse_scores(scaling);
    let d = dk
        .trim()
        .parse::<usize>()
        .ok()
        .filter(|&d| (1..=4096).contains(&d));
    let table = match (parsed, d) {
        (Ok(xs), Some(d)) => {
            let scaled: Vec<f64> = xs.iter().map(|x| x / (d as f64).sqrt()).collect();
            html! {
                <table class="lesson-table" id="scaling-table"><tbody>
                    { row(Key::LessonScores.text(lang), xs.iter().map(|&x| num(x)), "raw") }
                    { row("softmax", softmax(&xs).iter().map(|&x| num(x)), "raw-softmax") }
                    { row(&format!("÷√{d}"), scaled.iter().map(|&x| num(x)), "scaled") }
                    { row(&format!("softmax(÷√{d})"), softmax(&scaled).iter().map(|&x| num(x)), "scaled-softmax") }
                </tbody></table>
            }
        }
        (Err(e), _) => {
            html! { <p class="error" role="alert">{ format!("{}: {e}", Key::LessonNotANumber.text(lang)) }</p> }
        }
        (_, None) => html! { <p class="error" role="alert">{ "d_k: 1 … 4096" }</p> },
    };
    let var_rows = variance.iter().map(|&(d, (v, vs))| {
        let bar = (v / 256.0 * 100.0).clamp(0.5, 100.0);
        html! {
            <tr data-dk={d.to_string()}>
                <th scope="row">{ d }</th>
                <td class="var">{ format!("{v:.2}") }</td>
                <td class="bar-cell"><span class="bar"><span style={format!("width:{bar:.1}%")}></span></span></td>
                <td class="var-scaled">{ format!("{vs:.2}") }</td>
            </tr>
        }
    });
    let resample = {
        let seed = seed.clone();
        Callback::from(move |_| seed.set(*seed + 1))
    };
    html! {
        <>
            <div class="lesson-inputs">
                { numbers_input("lesson-scores", Key::LessonScores.text(lang), scaling) }
                { numbers_input("lesson-dk", "d_k", dk) }
            </div>
            { table }
            <h4>{ Key::LessonVarianceTitle.text(lang) }</h4>
            <table class="lesson-table" id="variance-table">
                <thead><tr><th>{ "d_k" }</th><th>{ "Var(q·k)" }</th><th></th><th>{ "Var(q·k ÷ √d_k)" }</th></tr></thead>
                <tbody>{ for var_rows }</tbody>
            </table>
            <button id="resample" onclick={resample}>{ Key::LessonResample.text(lang) }</button>
            if let Some(s) = sel {
                <p class="help">{ format!("{}: d_k = {}", Key::LessonThisModel.text(lang), s.view().d_k) }</p>
            }
        </>
    }
}
