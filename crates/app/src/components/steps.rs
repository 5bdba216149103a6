//! QKᵀ → ÷√d_k → mask → softmax → × V for the selected head: the actual numbers for short
//! inputs, colour for long ones. For a Llama-family model, RoPE first: q and k before and
//! after their turn (the first dimensions, where the angles turn fastest).

use std::rc::Rc;

use yew::prelude::*;

use super::matrix::{MatrixCanvas, MatrixTable};
use super::{Floats, HeadSel, Labels};
use crate::draw::Scale;
use crate::i18n::{Key, Lang};
use crate::state::LlamaAttn;

/// Inputs up to this many tokens show numbers.
pub const NUMBERS_UP_TO: usize = 8;
/// Output dimensions shown for × V.
const OUT_DIMS: usize = 8;
/// The most rows a (T × dimensions) panel draws: a longer text's are the rows around the
/// pinned query (else the last ones), and the caption says which.
pub const ROWS_SHOWN: usize = 64;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub lang: Lang,
    /// The head shown, in the trace shown.
    pub sel: HeadSel,
    /// The pinned query row, highlighted in the number tables.
    #[prop_or_default]
    pub pin: Option<usize>,
    /// RoPE and the key/value heads, for a Llama-family model.
    #[prop_or_default]
    pub llama: Option<LlamaAttn>,
}

/// The first `cols` dimensions of the rows `rows` of `x` (rows of `dk`, row i at position i)
/// before RoPE turned them, and as they are.
fn before_after(
    x: &[f32],
    (dk, cols): (usize, usize),
    rows: std::ops::Range<usize>,
    a: &LlamaAttn,
) -> (Vec<f32>, Vec<f32>) {
    let (mut before, mut after) = (Vec::new(), Vec::new());
    for pos in rows {
        let row = &x[pos * dk..(pos + 1) * dk];
        let mut turned_back = row.to_vec();
        for p in attnlab_model::llama::rotated_pairs(row, pos, &a.inv_freq, a.pairs) {
            turned_back[p.dims.0] = p.before.0;
            turned_back[p.dims.1] = p.before.1;
        }
        before.extend_from_slice(&turned_back[..cols]);
        after.extend_from_slice(&row[..cols]);
    }
    (before, after)
}

#[function_component]
pub fn Steps(props: &Props) -> Html {
    let lang = props.lang;
    let mats = use_memo(
        (props.sel.clone(), props.llama.clone(), props.pin),
        |(sel, llama, pin)| {
            let hv = sel.view();
            let cols = hv.d_k.min(OUT_DIMS);
            let rows = super::window(pin.unwrap_or(hv.t.saturating_sub(1)), hv.t, ROWS_SHOWN);
            let dk = hv.d_k;
            let out: Vec<f32> = hv.head_out[rows.start * dk..rows.end * dk]
                .chunks(dk)
                .flat_map(|r| r[..cols].to_vec())
                .collect();
            let f = |v: &[f32]| Floats(Rc::new(v.to_vec()));
            // RoPE: q and k of the rows shown, before and after their turn
            let rope = llama.as_ref().map(|a| {
                let (qb, qa) = before_after(hv.q, (dk, cols), rows.clone(), a);
                let (kb, ka) = before_after(hv.k, (dk, cols), rows.clone(), a);
                [qb, qa, kb, ka].map(|v| Floats(Rc::new(v)))
            });
            (
                hv.t,
                cols,
                [f(hv.scores), f(hv.scaled), f(hv.masked), f(hv.weights)],
                Floats(Rc::new(out)),
                rope,
                rows,
            )
        },
    );
    let (t, cols, ref steps, ref out, ref rope, ref rows) = *mats;
    let part = (rows.len() < t).then(|| {
        Key::RowsShown
            .text(lang)
            .replace("{a}", &rows.start.to_string())
            .replace("{b}", &(rows.end - 1).to_string())
            .replace("{t}", &t.to_string())
    });
    let names = [
        Key::StepScores,
        Key::StepScaled,
        Key::StepMasked,
        Key::StepSoftmax,
    ];
    let scales = [
        Scale::signed_for(&steps[0].0),
        Scale::signed_for(&steps[1].0),
        Scale::signed_for(&steps[2].0),
        Scale::Weights { max: 1.0 },
    ];
    let numbers = t <= NUMBERS_UP_TO;
    let dims = Labels(Rc::new((0..cols).map(|d| format!("d{d}")).collect()));
    // (a panel of `r` rows: all T of a map, or the rows shown of a T × dimensions one)
    let panel = |name: Key,
                 values: &Floats,
                 scale: Scale,
                 (r, c): (usize, usize),
                 col_labels: Option<Labels>| {
        let caption = name.text(lang);
        let cut = (r < t).then(|| part.clone()).flatten();
        html! {
            <figure class="step" data-step={format!("{name:?}")}>
                <figcaption>{ caption }{ for cut.map(|p| format!(" · {p}")) }</figcaption>
                if numbers {
                    <MatrixTable values={values.clone()} rows={r} cols={c} scale={scale}
                        row_labels={props.sel.labels.clone()} col_labels={col_labels} caption={caption} pinned={props.pin}
                        corner={format!("{} \\ {}", Key::Query.text(lang), Key::KeyToken.text(lang))} />
                } else {
                    <MatrixCanvas values={values.clone()} rows={r} cols={c} scale={scale} label={caption} />
                }
            </figure>
        }
    };
    html! {
        <section class="card steps-card" aria-labelledby="steps-h">
            <h2 id="steps-h">{ Key::Steps.text(lang) }</h2>
            <p class="help">{ Key::StepsHelp.text(lang) }</p>
            if !numbers { <p class="help">{ Key::ManyTokens.text(lang) }</p> }
            if let Some(r) = rope {
                <div class={classes!("steps", "rope-steps", numbers.then_some("numbers"))} id="rope-steps">
                    { for [Key::StepQBefore, Key::StepQAfter, Key::StepKBefore, Key::StepKAfter].iter().zip(r.iter())
                        .map(|(&k, v)| panel(k, v, Scale::signed_for(&v.0), (rows.len(), cols), Some(dims.clone()))) }
                </div>
            }
            <div class={classes!("steps", numbers.then_some("numbers"))}>
                { for (0..4).map(|k| panel(names[k], &steps[k], scales[k], (t, t), Some(props.sel.labels.clone()))) }
                { panel(Key::StepOutput, out, Scale::signed_for(&out.0), (rows.len(), cols), Some(dims)) }
            </div>
        </section>
    }
}
