//! The logit lens (`attnlab_model::lens`): for one position (the query token), the residual
//! stream after the embedding and after each block through the model's own output head — a
//! stage per row, its most likely next tokens, and the final prediction's probability and
//! rank at every stage. Clicking a token follows its probability through the stages.
//!
//! The heavy part (stages × d_model × V) runs where the model is, on the CPU worker, for a
//! trace from either engine: this view sends the rows (`on_need`) and shows the answer that
//! comes back in the state (`lens`).

use std::rc::Rc;

use attnlab_model::lens::{self, Normalised};
use yew::prelude::*;

use super::{Labels, TraceRef};
use crate::engine::LensOf;
use crate::i18n::{Key, Lang};
use crate::state::LensResult;

/// Tokens shown per stage.
pub const TOP: usize = 5;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub lang: Lang,
    pub trace: TraceRef,
    /// The result the trace is (`Shown::generation`).
    pub generation: u64,
    /// The row looked at (the query token).
    pub position: usize,
    pub labels: Labels,
    pub vocab: Labels,
    /// The latest lens in the state (maybe of another result or position).
    pub lens: Option<Rc<LensResult>>,
    /// How every stage reaches the output head (the model's final norm, if any).
    pub normalised: Normalised,
    /// Asks for the lens of (result, position) from these rows (or, for a slim result, from
    /// the worker's).
    pub on_need: Callback<(u64, usize, LensOf)>,
}

fn pct(p: f32) -> String {
    format!("{:.2}%", p * 100.0)
}

#[function_component]
pub fn LogitLens(props: &Props) -> Html {
    let lang = props.lang;
    let follow = use_state(|| None::<u32>);
    let node = use_node_ref();
    let t = props.trace.0.dims.t;
    let pos = props.position.min(t - 1);
    // asked for once per (result, position), while the card is near the screen
    let current = {
        let (trace, on_need) = (props.trace.clone(), props.on_need.clone());
        super::use_asked(
            node.clone(),
            props.lens.clone(),
            props.generation,
            pos,
            true,
            move |generation, pos| {
                let tr = &trace.0;
                // a slim result's rows stay in the worker: it is asked for the position
                let of = if lens::has_rows(tr) {
                    lens::stage_rows(tr, pos).ok().map(LensOf::Rows)
                } else {
                    Some(LensOf::Position {
                        ids: tr.tokens.clone(),
                        opts: tr.options.clone(),
                        position: pos,
                        last: false,
                    })
                };
                if let Some(of) = of {
                    on_need.emit((generation, pos, of));
                }
            },
        )
    };
    let normalised = props.normalised;
    let how = match normalised {
        Normalised::FinalLayerNorm => Key::LensPreLn,
        Normalised::BlockOutputs => Key::LensPostLn,
        Normalised::FinalRmsNorm => Key::LensRmsNorm,
    };
    let vocab = props.vocab.clone();
    let piece = move |id: u32| vocab.get(id as usize).to_string();
    let body = match current.as_ref().map(|l| &l.values) {
        None => {
            html! { <p class="help" role="status" id="lens-status">{ Key::LensComputing.text(lang) }</p> }
        }
        Some(Err(e)) => html! {
            <p class="error" role="alert" id="lens-status">{ format!("{}: {e}", Key::LensFailed.text(lang)) }</p>
        },
        Some(Ok(probs))
            if probs.len() != (props.trace.0.dims.n_layer + 1) * props.trace.0.dims.vocab =>
        {
            html! {
                // (a lens computed on a model that has just been replaced)
                <p class="error" role="alert" id="lens-status">{ format!("{}: {} ≠ {} × {}", Key::LensFailed.text(lang),
                    probs.len(), props.trace.0.dims.n_layer + 1, props.trace.0.dims.vocab) }</p>
            }
        }
        Some(Ok(probs)) => {
            let v = props.trace.0.dims.vocab;
            let l = lens::from_probs(&props.trace.0, pos, probs, normalised, TOP);
            let followed = (*follow).map(|id| (id, lens::follow(probs, v, id)));
            let stage_name = |layer: Option<usize>| match layer {
                None => Key::LensEmbedding.text(lang).to_string(),
                Some(b) => Key::LensAfterBlock
                    .text(lang)
                    .replace("{l}", &b.to_string()),
            };
            let rows = l.stages.iter().enumerate().map(|(i, s)| {
                let cells = s.top.iter().map(|&(id, p)| {
                    let on = *follow == Some(id);
                    let onclick = {
                        let follow = follow.clone();
                        Callback::from(move |_| follow.set(if on { None } else { Some(id) }))
                    };
                    let title = if on { Key::LensUnfollow } else { Key::LensFollow }.text(lang);
                    html! {
                        <td class={classes!("lens-tok", (id == l.target).then_some("target"), on.then_some("followed"))}>
                            <button type="button" data-token={id.to_string()} data-prob={p.to_string()}
                                aria-pressed={on.to_string()} {title} {onclick}>
                                <span class="piece">{ piece(id) }</span>
                                <span class="num">{ pct(p) }</span>
                            </button>
                        </td>
                    }
                });
                let follow_cell = followed.as_ref().map(|(_, f)| {
                    let (p, r) = f[i];
                    html! { <td class="num follow" data-prob={p.to_string()} data-rank={r.to_string()}>
                        { format!("{} · #{}", pct(p), r + 1) }</td> }
                });
                html! {
                    <tr data-stage={i.to_string()} data-target-prob={s.target_prob.to_string()}
                        data-target-rank={s.target_rank.to_string()}>
                        <th scope="row">{ stage_name(s.layer) }</th>
                        <td class="num final">
                            <span class="bar"><span style={format!("width:{:.1}%", s.target_prob * 100.0)}></span></span>
                            { format!("{} · #{}", pct(s.target_prob), s.target_rank + 1) }
                        </td>
                        { for cells }
                        { for follow_cell }
                    </tr>
                }
            });
            let final_head = Key::LensFinal.text(lang).replace("{tok}", &piece(l.target));
            let follow_head = followed.as_ref().map(|(id, _)| {
                let clear = {
                    let follow = follow.clone();
                    Callback::from(move |_| follow.set(None))
                };
                html! {
                    <th scope="col" class="follow">
                        { Key::LensFollowing.text(lang).replace("{tok}", &piece(*id)) }
                        <button type="button" class="unfollow" onclick={clear}
                            aria-label={Key::LensUnfollow.text(lang)} title={Key::LensUnfollow.text(lang)}>{ "×" }</button>
                    </th>
                }
            });
            html! {
                <div class="table-scroll">
                    <table class="numbers lens" id="lens-table" data-generation={props.generation.to_string()}
                        data-position={pos.to_string()} data-target={l.target.to_string()}>
                        <thead>
                            <tr>
                                <th scope="col">{ Key::LensStage.text(lang) }</th>
                                <th scope="col">{ final_head }<br/><small>{ format!("% · {}", Key::LensRank.text(lang)) }</small></th>
                                <th scope="colgroup" colspan={TOP.to_string()}>{ Key::LensTop.text(lang) }</th>
                                { for follow_head }
                            </tr>
                        </thead>
                        <tbody>{ for rows }</tbody>
                    </table>
                </div>
            }
        }
    };
    html! {
        <section class="card lens-card" id="lens" aria-labelledby="lens-h" ref={node}>
            <h2 id="lens-h">{ Key::LensTitle.text(lang) }</h2>
            <p class="help">{ Key::LensHelp.text(lang).replace("{tok}", props.labels.get(pos)) }</p>
            <p class="help" id="lens-how" data-normalised={match normalised {
                Normalised::FinalLayerNorm => "final-layer-norm", Normalised::BlockOutputs => "block-outputs",
                Normalised::FinalRmsNorm => "final-rms-norm" }}>
                { how.text(lang) }</p>
            { body }
        </section>
    }
}
