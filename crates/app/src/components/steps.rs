//! QKᵀ → ÷√d_k → mask → softmax → × V for the selected head: the actual numbers for short
//! inputs, colour for long ones.

use std::rc::Rc;

use yew::prelude::*;

use super::matrix::{MatrixCanvas, MatrixTable};
use super::{Floats, HeadSel, Labels};
use crate::draw::Scale;
use crate::i18n::{Key, Lang};

/// Inputs up to this many tokens show numbers.
pub const NUMBERS_UP_TO: usize = 8;
/// Output dimensions shown for × V.
const OUT_DIMS: usize = 8;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub lang: Lang,
    /// The head shown, in the trace shown.
    pub sel: HeadSel,
    /// The pinned query row, highlighted in the number tables.
    #[prop_or_default]
    pub pin: Option<usize>,
}

#[function_component]
pub fn Steps(props: &Props) -> Html {
    let lang = props.lang;
    let mats = use_memo(props.sel.clone(), |sel| {
        let hv = sel.view();
        let cols = hv.d_k.min(OUT_DIMS);
        let out: Vec<f32> = hv
            .head_out
            .chunks(hv.d_k)
            .flat_map(|r| r[..cols].to_vec())
            .collect();
        let f = |v: &[f32]| Floats(Rc::new(v.to_vec()));
        (
            hv.t,
            cols,
            [f(hv.scores), f(hv.scaled), f(hv.masked), f(hv.weights)],
            Floats(Rc::new(out)),
        )
    });
    let (t, cols, ref steps, ref out) = *mats;
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
    let panel = |name: Key, values: &Floats, scale: Scale, c: usize, col_labels: Option<Labels>| {
        let caption = name.text(lang);
        html! {
            <figure class="step" data-step={format!("{name:?}")}>
                <figcaption>{ caption }</figcaption>
                if numbers {
                    <MatrixTable values={values.clone()} rows={t} cols={c} scale={scale}
                        row_labels={props.sel.labels.clone()} col_labels={col_labels} caption={caption} pinned={props.pin}
                        corner={format!("{} \\ {}", Key::Query.text(lang), Key::KeyToken.text(lang))} />
                } else {
                    <MatrixCanvas values={values.clone()} rows={t} cols={c} scale={scale} label={caption} />
                }
            </figure>
        }
    };
    html! {
        <section class="card steps-card" aria-labelledby="steps-h">
            <h2 id="steps-h">{ Key::Steps.text(lang) }</h2>
            <p class="help">{ Key::StepsHelp.text(lang) }</p>
            if !numbers { <p class="help">{ Key::ManyTokens.text(lang) }</p> }
            <div class={classes!("steps", numbers.then_some("numbers"))}>
                { for (0..4).map(|k| panel(names[k], &steps[k], scales[k], t, Some(props.sel.labels.clone()))) }
                { panel(Key::StepOutput, out, Scale::signed_for(&out.0), cols, Some(dims)) }
            </div>
        </section>
    }
}
