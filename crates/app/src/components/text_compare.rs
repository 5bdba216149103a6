//! Two texts compared on the selected head: A's and B's attention side by side; where both
//! have as many tokens, the difference B − A (diverging scale) and how much each query row
//! changed; and the next-token lists of both.

use std::rc::Rc;

use attnlab_model::Trace;
use yew::prelude::*;

use super::heads_grid::MiniMap;
use super::matrix::MatrixCanvas;
use super::text_input::TextInput;
use super::{Floats, HeadSel, Labels, TraceRef};
use crate::compare::fmt_num;
use crate::draw::Scale;
use crate::i18n::{Key, Lang};
use crate::state::Side;

/// How one query row changed from A to B.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RowChange {
    /// Total variation ½·Σ|B − A| over the row's keys: 0 = the same weights, 1 = disjoint.
    pub tv: f32,
    /// The key whose weight changed most, and by how much (B − A).
    pub key: usize,
    pub delta: f32,
}

/// B − A for two (T, T) weight matrices of the same size.
pub fn difference(a: &[f32], b: &[f32]) -> Vec<f32> {
    a.iter().zip(b).map(|(x, y)| y - x).collect()
}

/// Each query row's change, from the difference B − A of a (T, T) matrix.
pub fn row_changes(diff: &[f32], t: usize) -> Vec<RowChange> {
    (0..t)
        .map(|i| {
            let row = &diff[i * t..(i + 1) * t];
            let (key, &delta) = row
                .iter()
                .enumerate()
                .max_by(|x, y| x.1.abs().total_cmp(&y.1.abs()).then(y.0.cmp(&x.0)))
                .expect("a row has a key");
            RowChange {
                tv: row.iter().map(|d| d.abs()).sum::<f32>() / 2.0,
                key,
                delta,
            }
        })
        .collect()
}

#[derive(Properties, PartialEq)]
pub struct Props {
    pub lang: Lang,
    /// The first text's run, with the selected head, and how many tokens the text has (the
    /// run may have dropped the start).
    pub a: HeadSel,
    pub a_tokens: usize,
    /// The pinned query row, highlighted in the row changes.
    #[prop_or_default]
    pub pin: Option<usize>,
    /// The second text's run (None until it arrives).
    pub b: Option<Rc<Side>>,
    pub vocab: Labels,
    /// The second text box's first value.
    pub initial: AttrValue,
    pub on_text: Callback<(String, f64)>,
}

fn top5(tr: &Trace, vocab: &Labels) -> Html {
    let last = tr.dims.t - 1;
    html! {
        <ol class="next-list">
            { for tr.top_k(last, 5).into_iter().map(|(id, p)| html! {
                <li data-token={id.to_string()}>
                    <span class="tok">{ vocab.get(id as usize).to_string() }</span>
                    <span class="num">{ format!("{:.1} %", p * 100.0) }</span>
                </li>
            }) }
        </ol>
    }
}

#[function_component]
pub fn TextCompare(props: &Props) -> Html {
    let lang = props.lang;
    let (l, h) = (props.a.layer, props.a.head);
    let a = &props.a.trace.0;
    let title = format!(
        "{} · {} {l} · {} {h}",
        Key::CompareTexts.text(lang),
        Key::Layer.text(lang),
        Key::Head.text(lang)
    );
    let input = html! {
        <TextInput id="text-b" initial={props.initial.clone()} label={Key::SecondText.text(lang)}
            on_text={props.on_text.clone()} />
    };
    let body = match props.b.as_deref() {
        // (a slim result of a long text holds the heads it was asked for: another is coming)
        None => html! { <p class="help" role="status">{ Key::Computing.text(lang) }</p> },
        Some(Side {
            run: Ok((_, b)), ..
        }) if !b.has_head(l, h) => {
            html! { <p class="help" role="status">{ Key::Computing.text(lang) }</p> }
        }
        Some(Side { run: Err(e), .. }) => {
            let msg = if e.is_empty() {
                Key::EmptyInput.text(lang).to_string()
            } else {
                e.clone()
            };
            html! { <p class="help" role="status" id="compare-status">{ msg }</p> }
        }
        Some(Side {
            run: Ok((tokens, b)),
            ..
        }) => {
            let ta = a.dims.t;
            let a_labels: Vec<&str> = props.a.labels.0.iter().map(String::as_str).collect();
            let b_labels: Vec<&str> = tokens[b.dropped..]
                .iter()
                .map(|t| t.display.as_str())
                .collect();
            let side = |name: &str, tr: &Rc<Trace>, labels: &[&str]| {
                html! {
                    <figure class="compare-side">
                        <figcaption>{ format!("{name}: {}", labels.join(" · ")) }</figcaption>
                        <MiniMap trace={TraceRef::new(tr.clone())} layer={l} head={h} class="compare-map" />
                    </figure>
                }
            };
            // position by position only when both texts have as many tokens, cut alike
            let aligned = props.a_tokens == tokens.len() && a.dropped == b.dropped;
            let diff = aligned.then(|| {
                let d = difference(a.head(l, h).weights, b.head(l, h).weights);
                let rows = row_changes(&d, ta);
                let scale = Scale::signed_for(&d);
                let items = rows.iter().enumerate().map(|(i, r)| {
                    let (qa, qb) = (a_labels[i], b_labels[i]);
                    let q = if qa == qb { qa.to_string() } else { format!("{qa} → {qb}") };
                    let key = if a_labels[r.key] == b_labels[r.key] {
                        a_labels[r.key].to_string()
                    } else {
                        format!("{} → {}", a_labels[r.key], b_labels[r.key])
                    };
                    html! {
                        <tr data-row={i.to_string()} class={classes!((props.pin == Some(i)).then_some("pinned"))}>
                            <th scope="row">{ q }</th>
                            <td class="num tv">{ format!("{:.3}", r.tv) }</td>
                            <td>{ key }</td>
                            <td class="num">{ fmt_num(r.delta) }</td>
                        </tr>
                    }
                });
                let map = html! {
                    <figure class="compare-side">
                        <figcaption>{ Key::DifferenceMap.text(lang) }</figcaption>
                        <MatrixCanvas values={Floats(Rc::new(d))} rows={ta} cols={ta} {scale}
                            label={Key::DifferenceMap.text(lang)} id={Some(AttrValue::from("compare-diff"))} />
                    </figure>
                };
                let table = html! {
                        <div class="table-scroll compare-rows">
                            <table id="compare-rows" class="roles">
                                <thead><tr>
                                    <th scope="col">{ Key::Query.text(lang) }</th>
                                    <th scope="col" title={Key::RowChangeHelp.text(lang)}>{ Key::RowChange.text(lang) }</th>
                                    <th scope="col">{ Key::MostChangedKey.text(lang) }</th>
                                    <th scope="col">{ "Δ" }</th>
                                </tr></thead>
                                <tbody>{ for items }</tbody>
                            </table>
                        </div>
                };
                (map, table)
            });
            let (diff_map, diff_rows) = diff.unzip();
            let no_diff = (!aligned).then(|| {
                let msg = Key::TokenCountsDiffer
                    .text(lang)
                    .replace("{a}", &props.a_tokens.to_string())
                    .replace("{b}", &tokens.len().to_string());
                html! { <p class="help" id="compare-status">{ msg }</p> }
            });
            let b_cut = (b.dropped > 0).then(|| html! {
                <p class="warn" id="compare-dropped">{ format!("B: {} ({} {})", Key::Dropped.text(lang), b.dropped, Key::DroppedTokens.text(lang)) }</p>
            });
            html! {
                <>
                    <div class="compare-maps">
                        { side("A", a, &a_labels) }
                        { side("B", b, &b_labels) }
                        { for diff_map }
                    </div>
                    { for diff_rows }
                    { for no_diff }
                    { for b_cut }
                    <div class="grid two compare-next">
                        <div id="compare-next-a"><h3>{ format!("A · {}", Key::NextToken.text(lang)) }</h3>{ top5(a, &props.vocab) }</div>
                        <div id="compare-next-b"><h3>{ format!("B · {}", Key::NextToken.text(lang)) }</h3>{ top5(b, &props.vocab) }</div>
                    </div>
                </>
            }
        }
    };
    html! {
        <section class="card compare-card" id="compare" aria-labelledby="compare-h">
            <h2 id="compare-h">{ title }</h2>
            <p class="help">{ Key::CompareTextsHelp.text(lang) }</p>
            { input }
            { body }
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_changes_measure_how_far_each_row_moved() {
        // 2 × 2: row 0 the same, row 1 moves all its weight from key 0 to key 1
        let a = [1.0, 0.0, 1.0, 0.0];
        let b = [1.0, 0.0, 0.0, 1.0];
        let d = difference(&a, &b);
        assert_eq!(d, [0.0, 0.0, -1.0, 1.0]);
        let r = row_changes(&d, 2);
        assert_eq!(r[0].tv, 0.0);
        assert_eq!(r[1].tv, 1.0);
        assert_eq!(
            (r[1].key, r[1].delta),
            (0, -1.0),
            "ties go to the first key"
        );
    }
}
