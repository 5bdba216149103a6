//! The selected head's scores through softmax three ways — unscaled, ÷√d_k, and ÷√d_k with
//! temperature τ — each row with its entropy and largest weight (past `ROWS_SHOWN` tokens, the
//! rows around the query row), and a switch that applies the chosen way to the whole model.

use std::rc::Rc;

use web_sys::HtmlInputElement;
use yew::prelude::*;

use super::matrix::MatrixCanvas;
use super::steps::ROWS_SHOWN;
use super::{on_checked, target_as, Floats, HeadSel};
use crate::compare::{rows_unchanged, variant_weights_after, Earlier, Variant};
use crate::draw::Scale;
use crate::i18n::{Key, Lang};
use crate::state::{TAU_MAX, TAU_MIN};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub lang: Lang,
    /// The head shown, in the trace shown.
    pub sel: HeadSel,
    pub variant: Variant,
    pub tau: f32,
    pub apply: bool,
    pub mask: bool,
    pub query: usize,
    pub on_variant: Callback<Variant>,
    pub on_tau: Callback<f32>,
    pub on_apply: Callback<bool>,
    pub on_mask: Callback<bool>,
}

/// What the comparison computed last: the head's raw scores (T × T), τ's bits, the mask and
/// d_k, and each variant's weights (in `Variant::ALL`'s order).
struct Last {
    scores: Vec<f32>,
    t: usize,
    options: (u32, bool, usize),
    results: [Rc<crate::compare::VariantWeights>; 3],
}

#[function_component]
pub fn SoftmaxCompare(props: &Props) -> Html {
    let lang = props.lang;
    let t = |k: Key| k.text(lang);
    // the last head's scores and weights: a keystroke at the end of a long text computes the
    // rows whose scores changed, not all three T × T softmaxes again
    let last = use_mut_ref(|| None::<Last>);
    let results = use_memo(
        (props.sel.clone(), props.tau.to_bits(), props.mask),
        |(sel, tau, mask)| {
            let hv = sel.view();
            let mut last = last.borrow_mut();
            let now = (*tau, *mask, hv.d_k);
            // the rows whose scores did not change, counted once for the three variants
            let prev = last.take();
            let kept = prev.as_ref().filter(|l| l.options == now).map(|l| {
                let rows = rows_unchanged(hv.scores, hv.t, &l.scores, l.t);
                (l, rows)
            });
            let results = Variant::ALL.map(|v| {
                let earlier = kept.map(|(l, rows)| Earlier {
                    weights: &l.results[v as usize],
                    t: l.t,
                    rows,
                });
                let tau = f32::from_bits(*tau);
                let w = variant_weights_after(hv.scores, hv.t, hv.d_k, v, tau, *mask, earlier);
                (Floats(Rc::clone(&w.weights)), Rc::new(w))
            });
            // the scores kept for the next keystroke, in the last ones' allocation
            let mut scores = prev.map(|l| l.scores).unwrap_or_default();
            scores.clear();
            scores.extend_from_slice(hv.scores);
            *last = Some(Last {
                scores,
                t: hv.t,
                options: now,
                results: results.each_ref().map(|(_, w)| Rc::clone(w)),
            });
            results
        },
    );
    let n = props.sel.trace.0.dims.t;
    let d_k = props.sel.trace.0.dims.d_k;
    let q = props.query.min(n - 1);
    let panels = Variant::ALL.iter().zip(results.iter()).map(|(&v, (floats, w))| {
        let name = match v {
            Variant::Unscaled => "softmax(QKᵀ)".to_string(),
            Variant::Scaled => format!("softmax(QKᵀ ÷ √{d_k})"),
            Variant::Temperature => format!("softmax(QKᵀ ÷ √{d_k} ÷ {:.2})", props.tau),
        };
        let label = match v {
            Variant::Unscaled => t(Key::Unscaled),
            Variant::Scaled => t(Key::ScaledVariant),
            Variant::Temperature => t(Key::WithTemperature),
        };
        let chosen = props.variant == v;
        let onchange = {
            let cb = props.on_variant.clone();
            Callback::from(move |_: Event| cb.emit(v))
        };
        // a long text's rows: a window around the query row, so the page stays small
        let shown = super::window(q, n, ROWS_SHOWN);
        let part = (n > ROWS_SHOWN).then(|| {
            t(Key::RowsShown)
                .replace("{a}", &shown.start.to_string())
                .replace("{b}", &(shown.end - 1).to_string())
                .replace("{t}", &n.to_string())
        });
        let rows = shown.map(|i| {
            html! {
                <tr key={i} class={classes!((i == q).then_some("current"))}>
                    <th scope="row">{ props.sel.labels.get(i).to_string() }</th>
                    <td>{ format!("{:.3}", w.entropy[i].abs()) }</td>
                    <td>{ format!("{:.3}", w.max[i]) }</td>
                </tr>
            }
        });
        html! {
            <figure class={classes!("variant", chosen.then_some("chosen"))} data-variant={v.code()}
                data-mean-entropy={format!("{:.6}", w.mean_entropy())}>
                <figcaption>
                    <label>
                        <input type="radio" name="variant" value={v.code()} checked={chosen} {onchange} />
                        { format!(" {label}") }
                    </label>
                    <code>{ name }</code>
                </figcaption>
                <MatrixCanvas values={floats.clone()} rows={n} cols={n} scale={Scale::Weights { max: 1.0 }}
                    label={label} />
                <p class="stat">{ format!("{} {:.3} · {} ({}) {:.3} / {:.3}", t(Key::MeanEntropy), w.mean_entropy().abs(),
                    t(Key::Row), props.sel.labels.get(q), w.entropy[q].abs(), w.max[q]) }</p>
                if let Some(part) = &part {
                    <p class="stat rows-part">{ part.clone() }</p>
                }
                // scrolls when the rows outgrow it: reachable and named for the keyboard
                <div class="rows-scroll" tabindex="0" role="region"
                    aria-label={format!("{label}: {} · {}{}", t(Key::Entropy), t(Key::MaxWeight),
                        part.as_ref().map(|p| format!(" ({p})")).unwrap_or_default())}>
                    <table class="row-stats">
                        <thead><tr><th scope="col">{ t(Key::Row) }</th><th scope="col">{ t(Key::Entropy) }</th>
                            <th scope="col">{ t(Key::MaxWeight) }</th></tr></thead>
                        <tbody>{ for rows }</tbody>
                    </table>
                </div>
            </figure>
        }
    });
    let on_tau = {
        let cb = props.on_tau.clone();
        Callback::from(move |e: InputEvent| {
            if let Some(i) = target_as::<HtmlInputElement>(&e) {
                if let Ok(v) = i.value().parse::<f32>() {
                    cb.emit(v);
                }
            }
        })
    };
    let on_apply = on_checked(&props.on_apply);
    let on_mask = on_checked(&props.on_mask);
    html! {
        <section class="card compare-card" aria-labelledby="compare-h">
            <h2 id="compare-h">{ t(Key::Compare) }</h2>
            <p class="help">{ t(Key::CompareHelp) }</p>
            <div class="controls">
                <label for="tau">{ format!("{} = {:.2}", t(Key::Temperature), props.tau) }</label>
                <input id="tau" type="range" min={TAU_MIN.to_string()} max={TAU_MAX.to_string()} step="0.05"
                    value={props.tau.to_string()} oninput={on_tau} />
                <label class="check"><input id="apply" type="checkbox" checked={props.apply} onchange={on_apply} />
                    { format!(" {}", t(Key::ApplyToModel)) }</label>
                <label class="check"><input id="mask" type="checkbox" checked={props.mask} onchange={on_mask} />
                    { format!(" {}", t(Key::CausalMask)) }</label>
            </div>
            <div class="variants" role="radiogroup" aria-label={t(Key::ApplyChoice)}>{ for panels }</div>
        </section>
    }
}
