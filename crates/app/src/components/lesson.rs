//! Lesson mode: a guided path through the nine sections of the self-attention lesson. Each
//! section's text sits beside a small widget bound to the live model and the user's own text,
//! and the page panel it is about is highlighted (and one click away).

use std::rc::Rc;

use attnlab_model::LnPlacement;
use wasm_bindgen::JsCast;
use yew::prelude::*;

use super::{on_checked, target_as, HeadSel};
use crate::compare::fmt_num;
use crate::i18n::{Key, Lang};
use crate::lesson::{self, parse_scores, softmax, Section};
use crate::lesson_text;

use super::lesson_widgets::{self as widgets, num, numbers_input, rnn_diagram, row, small_matrix};
use crate::loader::SMOLLM2;
use crate::state::{Arch, ModelInfo, ModelSource};
use attnlab_model::roles::{Role, Scores};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub lang: Lang,
    /// The open section (0-based).
    pub section: usize,
    pub on_section: Callback<Option<usize>>,
    /// The selected head in the result on screen (None while computing).
    pub sel: Option<HeadSel>,
    pub query: usize,
    pub info: Option<ModelInfo>,
    pub mask: bool,
    pub on_mask: Callback<bool>,
    pub on_preset: Callback<String>,
    /// The head roles measured on the running model (the page's probe), where it came from,
    /// and the model menu (for the real model the lesson points to).
    #[prop_or_default]
    pub roles: Rc<Vec<Scores>>,
    #[prop_or_default]
    pub source: ModelSource,
    #[prop_or_default]
    pub on_model: Callback<Option<&'static str>>,
}

/// The strongest heads of `role` in the probe's scores: "L18H6 0.90, …" (at most `n`).
fn strongest(roles: &[Scores], n_head: usize, role: Role, n: usize) -> String {
    let mut heads: Vec<(usize, f32)> = roles
        .iter()
        .enumerate()
        .filter_map(|(i, s)| s.get(role).map(|x| (i, x)))
        .collect();
    heads.sort_by(|a, b| b.1.total_cmp(&a.1));
    heads
        .iter()
        .take(n)
        .map(|&(i, x)| format!("L{}H{} {x:.2}", i / n_head, i % n_head))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The same view on a real model: a button that opens SmolLM2 with the lesson's English
/// sentence, or — once it runs — its previous-token and induction heads with their scores.
fn real_model(props: &Props) -> Html {
    let lang = props.lang;
    let t = |k: Key| k.text(lang);
    let english = lesson::PRESETS[2];
    let running = props.source == ModelSource::Served(SMOLLM2.id);
    let open = {
        let (model, preset) = (props.on_model.clone(), props.on_preset.clone());
        Callback::from(move |_: MouseEvent| {
            model.emit(Some(SMOLLM2.id));
            preset.emit(english.to_string());
        })
    };
    if !running {
        return html! {
            <div class="lesson-real" id="lesson-real">
                <button id="lesson-real-open" onclick={open}>{ format!("{} ({})", t(Key::LessonOpenReal), SMOLLM2.label) }</button>
            </div>
        };
    }
    let n_head = props.info.as_ref().map_or(1, |i| i.heads().1);
    let heads = if props.roles.iter().all(|s| s.strongest().is_none()) {
        html! { <p class="help">{ t(Key::Computing) }</p> }
    } else {
        html! {
            <ul id="lesson-real-heads">
                <li data-role="previous">{ format!("{}: {}", t(Key::RolePrevious), strongest(&props.roles, n_head, Role::Previous, 3)) }</li>
                <li data-role="induction">{ format!("{}: {}", t(Key::RoleInduction), strongest(&props.roles, n_head, Role::Induction, 3)) }</li>
            </ul>
        }
    };
    let preset = props.on_preset.clone();
    html! {
        <div class="lesson-real" id="lesson-real">
            <p class="help">{ t(Key::LessonRealHeads) }</p>
            { heads }
            <button class="link" id="lesson-real-sentence" onclick={Callback::from(move |_: MouseEvent| preset.emit(english.to_string()))}>
                { format!("{}: {english}", t(Key::LessonUseSentence)) }</button>
        </div>
    }
}

/// Heads listed in the multi-head section (the strongest first).
const HEAD_PICKS: usize = 16;

/// Scrolls the panel `selector` names into view and moves the keyboard focus to its title.
fn show(selector: &str) {
    let Some(el) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.query_selector(selector).ok().flatten())
    else {
        return;
    };
    el.scroll_into_view();
    if let Some(h) = el
        .query_selector("h2")
        .ok()
        .flatten()
        .and_then(|h| h.dyn_into::<web_sys::HtmlElement>().ok())
    {
        let _ = h.set_attribute("tabindex", "-1");
        let _ = h.focus();
    }
}

#[function_component]
pub fn Lesson(props: &Props) -> Html {
    let lang = props.lang;
    let section = Section::at(props.section);
    let i = section.index();
    let scaling = use_state(|| "2, 4, 20, 3".to_string());
    let dk = use_state(|| lesson::SCALING_DK.to_string());
    let soft = use_state(|| "1.2, 0.3, 2.1, -0.4".to_string());
    let seed = use_state(|| 1u64);
    // section 6's head, when the learner picked one instead of the clearest
    let picked = use_state(|| None::<(usize, usize)>);
    // the variance demo's draws, once per seed (not on every render)
    let variance = use_memo(*seed, |&seed| {
        lesson::VARIANCE_DKS.map(|d| (d, lesson::dot_variance(d, 2000, seed)))
    });
    let (title, paras) = lesson_text::text(section, lang);

    let go = |to: Option<usize>| {
        let cb = props.on_section.clone();
        Callback::from(move |_: MouseEvent| cb.emit(to))
    };
    let show_panel = Callback::from(move |_: MouseEvent| show(&format!(".{}", section.panel())));
    let preset = section.preset().map(|p| {
        let cb = props.on_preset.clone();
        html! {
            <button class="preset" id="lesson-preset" onclick={Callback::from(move |_| cb.emit(p.to_string()))}>
                { format!("{}: {p}", Key::LessonPreset.text(lang)) }
            </button>
        }
    });

    let sel = props.sel.as_ref();
    let q = props.query;
    let waiting = || html! { <p class="help">{ Key::Computing.text(lang) }</p> };
    let widget = match section {
        Section::WhyNotRnn => rnn_diagram(lang, sel),
        Section::Qkv => match (sel, &props.info) {
            (Some(s), Some(info)) => {
                let (d_model, (_, n_head)) = (info.d_model(), info.heads());
                let hv = s.view();
                let dk = hv.d_k;
                let show = dk.min(12);
                let vec_row = |name: &str, v: &[f32], f: &'static str| {
                    row(
                        name,
                        v[q * dk..q * dk + show].iter().map(|&x| fmt_num(x)),
                        f,
                    )
                };
                html! {
                    <>
                        <ul class="shapes" id="qkv-shapes">
                            <li>{ format!("X: T × d_model = {} × {}", hv.t, d_model) }</li>
                            <li>{ format!("W_Q, W_K, W_V: {0} × {0} = {1} {2} × d_k {3}", d_model, Key::LessonHeads.text(lang), n_head, dk) }</li>
                            <li>{ format!("Q, K, V {}: T × d_k = {} × {}", Key::LessonPerHead.text(lang), hv.t, dk) }</li>
                        </ul>
                        <p class="help">{ format!("{} «{}» · {} {} · {} {} ({} {show}/{dk})", Key::LessonToken.text(lang),
                            s.labels.get(q), Key::Layer.text(lang), s.layer, Key::Head.text(lang), s.head,
                            Key::LessonDims.text(lang)) }</p>
                        <table class="lesson-table" id="qkv-table"><tbody>
                            { vec_row("q", hv.q, "q") }
                            { vec_row("k", hv.k, "k") }
                            { vec_row("v", hv.v, "v") }
                        </tbody></table>
                    </>
                }
            }
            _ => waiting(),
        },
        Section::Scores => match sel {
            Some(s) => small_matrix(s, s.view().scores, q, "scores-table"),
            None => waiting(),
        },
        Section::Scaling => widgets::scaling(lang, (&scaling, &dk), &variance[..], &seed, sel),
        Section::Softmax => {
            let body = match parse_scores(&soft) {
                Ok(xs) => {
                    let max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    let w = softmax(&xs);
                    html! {
                        <table class="lesson-table" id="softmax-table"><tbody>
                            { row(Key::LessonScoreX.text(lang), xs.iter().map(|&x| num(x)), "x") }
                            { row("exp(x − max)", xs.iter().map(|&x| num((x - max).exp())), "exp") }
                            { row(Key::LessonWeight.text(lang), w.iter().map(|&x| num(x)), "weight") }
                            { row(Key::LessonRounded.text(lang), w.iter().map(|&x| format!("{x:.2}")), "rounded") }
                            { row("Σ", [num(w.iter().sum())], "sum") }
                        </tbody></table>
                    }
                }
                Err(e) => {
                    html! { <p class="error" role="alert">{ format!("{}: {e}", Key::LessonNotANumber.text(lang)) }</p> }
                }
            };
            let live = sel.map(|s| {
                let hv = s.view();
                let r = &hv.weights[q * hv.t..(q + 1) * hv.t];
                let sum: f32 = r.iter().sum();
                html! { <p class="help" id="live-row-sum">{ format!("{} «{}»: Σ {} = {}", Key::LessonModelRow.text(lang),
                    s.labels.get(q), Key::LessonWeights.text(lang), fmt_num(sum)) }</p> }
            });
            html! { <>{ numbers_input("lesson-softmax", Key::LessonScores.text(lang), &soft) }{ body }{ for live }</> }
        }
        Section::WeightedSum => match sel {
            Some(s) => {
                let tr = &s.trace.0;
                // the head where the query's largest weight is highest, unless one was picked
                let tops = lesson::top_keys(tr, q);
                let best = tops[0];
                // (a pick from another model's heads does not apply)
                let (l, h) = picked
                    .filter(|&(l, h)| tr.has_head(l, h))
                    .unwrap_or((best.layer, best.head));
                let hv = tr.head(l, h);
                let mut w: Vec<(usize, f32)> = hv.weights[q * hv.t..(q + 1) * hv.t]
                    .iter()
                    .copied()
                    .enumerate()
                    .collect();
                w.sort_by(|a, b| b.1.total_cmp(&a.1));
                let terms: Vec<String> = w
                    .iter()
                    .take(6)
                    .filter(|(_, x)| *x > 0.0)
                    .map(|(j, x)| format!("{:.2} × V({})", x, s.labels.get(*j)))
                    .collect();
                let qlabel = s.labels.get(q).trim_start_matches('␣').to_string();
                let name = format!(
                    "{} {l} · {} {h}",
                    Key::Layer.text(lang),
                    Key::Head.text(lang)
                );
                let why = if (l, h) == (best.layer, best.head) {
                    format!(
                        "{name}: {} ({:.2} → {})",
                        Key::ClearestFor.text(lang).replace("{q}", &qlabel),
                        best.weight,
                        s.labels.get(best.key)
                    )
                } else {
                    format!("{name} ({})", Key::PickedHead.text(lang))
                };
                // the lesson's own pattern: does any head look from 마셨다 to the word 커피를 most?
                // Counted word by word, since the tokenizer may split a word (␣커피 + 를): a
                // word's weight is the sum of its tokens' weights (lesson::word_pattern).
                let upto: String = (0..=q).map(|j| s.labels.get(j)).collect();
                let words = lesson::word_spans(&s.labels.0, q + 1);
                let coffee = words
                    .iter()
                    .position(|w| w.end <= q && lesson::word_text(&s.labels.0, w) == "커피를");
                let pattern = upto
                    .ends_with("마셨다")
                    .then_some(())
                    .and(coffee)
                    .and_then(|c| Some((c, lesson::word_pattern(tr, q, &words, c)?)))
                    .map(|(c, p)| {
                        let head_name = |w: &lesson::WordWeight| {
                            format!(
                                "{} {} · {} {}",
                                Key::Layer.text(lang),
                                w.layer,
                                Key::Head.text(lang),
                                w.head
                            )
                        };
                        // "␣커피 0.05 + 를 0.80 = 0.85", or "0.85" for a word of one token
                        let sum_text = |w: &lesson::WordWeight| {
                            if w.parts.len() < 2 {
                                format!("{:.2}", w.weight)
                            } else {
                                let parts: Vec<String> = words[c]
                                    .clone()
                                    .zip(&w.parts)
                                    .map(|(j, x)| format!("{} {x:.2}", s.labels.get(j)))
                                    .collect();
                                format!("{} = {:.2}", parts.join(" + "), w.weight)
                            }
                        };
                        let text = match p.top.first() {
                            Some(k) => Key::PatternFound
                                .text(lang)
                                .replace("{n}", &p.top.len().to_string())
                                .replace("{head}", &head_name(k))
                                .replace("{w}", &sum_text(k)),
                            None => Key::PatternMissing
                                .text(lang)
                                .replace("{head}", &head_name(&p.best))
                                .replace("{w}", &sum_text(&p.best)),
                        };
                        // one click shows that head's mix (unless it is already shown)
                        let w = p.top.first().unwrap_or(&p.best);
                        let show = ((w.layer, w.head) != (l, h)).then(|| {
                            let picked = picked.clone();
                            let at = (w.layer, w.head);
                            let onclick = Callback::from(move |_: MouseEvent| picked.set(Some(at)));
                            html! { <button type="button" class="link" id="lesson-pattern-show" {onclick}>
                                { format!("{} →", Key::ShowThisHead.text(lang)) }</button> }
                        });
                        html! { <p class="help" id="lesson-pattern">{ text }{ " " }{ for show }</p> }
                    });
                let onchange = {
                    let picked = picked.clone();
                    let nh = tr.dims.n_head;
                    Callback::from(move |e: Event| {
                        if let Some(sel) = target_as::<web_sys::HtmlSelectElement>(&e) {
                            picked.set(sel.value().parse::<usize>().ok().map(|i| (i / nh, i % nh)));
                        }
                    })
                };
                let options = tops.iter().map(|k| {
                    let i = k.layer * tr.dims.n_head + k.head;
                    html! {
                        <option value={i.to_string()} selected={(k.layer, k.head) == (l, h)}>
                            { format!("L{} H{} — {:.2} → {}", k.layer, k.head, k.weight, s.labels.get(k.key)) }
                        </option>
                    }
                });
                html! {
                    <>
                        <p class="help" id="lesson-head-name">{ why }</p>
                        <p class="formula" id="lesson-mix">{ format!("{}({}) = {}{}", Key::LessonNewRepr.text(lang), s.labels.get(q),
                            terms.join(" + "), if w.len() > 6 { " + …" } else { "" }) }</p>
                        { for pattern }
                        <label class="lesson-field">{ Key::OtherHead.text(lang) }
                            <select id="lesson-head" {onchange}>{ for options }</select>
                        </label>
                    </>
                }
            }
            None => waiting(),
        },
        Section::CausalMask => {
            let labels: Vec<String> = sel
                .map(|s| {
                    let t = s.view().t;
                    (t.saturating_sub(5)..t)
                        .map(|i| s.labels.get(i).to_string())
                        .collect()
                })
                .unwrap_or_default();
            let n = labels.len();
            let grid = html! {
                <table class="lesson-table mask-grid" id="mask-grid">
                    <thead><tr><th></th>{ for labels.iter().map(|l| html! { <th scope="col">{ l.clone() }</th> }) }</tr></thead>
                    <tbody>{ for (0..n).map(|i| html! {
                        <tr><th scope="row">{ labels[i].clone() }</th>
                        { for (0..n).map(|j| {
                            let seen = !props.mask || j <= i;
                            html! { <td class={if seen { "seen" } else { "hidden" }}>{ if seen { "O" } else { "X" } }</td> }
                        }) }</tr>
                    }) }</tbody>
                </table>
            };
            html! {
                <>
                    <label class="check">
                        <input id="lesson-mask" type="checkbox" checked={props.mask} onchange={on_checked(&props.on_mask)} />
                        { format!(" {}", Key::CausalMask.text(lang)) }
                    </label>
                    { grid }
                </>
            }
        }
        Section::MultiHead => match sel {
            Some(s) => {
                // every head's strongest key from the last token, strongest first
                let tr = &s.trace.0;
                let last = tr.dims.t - 1;
                // a real model has hundreds of heads: the strongest 16 (all of the bundled model), and how many more
                let tops = lesson::top_keys(tr, last);
                let more = tops.len().saturating_sub(HEAD_PICKS);
                let items = tops.into_iter().take(HEAD_PICKS).enumerate().map(|(rank, k)| {
                    html! {
                        <li data-pick={format!("{}.{}", k.layer, k.head)} class={classes!((rank == 0).then_some("clearest"))}>
                            { format!("L{} H{}: «{}» → «{}» {:.2}", k.layer, k.head, s.labels.get(last), s.labels.get(k.key), k.weight) }
                            if rank == 0 { { format!(" — {}", Key::ClearestHead.text(lang)) } }
                        </li>
                    }
                });
                html! { <>
                    <ol class="head-picks" id="head-picks">{ for items }</ol>
                    if more > 0 { <p class="help">{ format!("… {more} {}", Key::MoreHeads.text(lang)) }</p> }
                </> }
            }
            None => waiting(),
        },
        Section::Block => match &props.info {
            Some(info) => {
                let (kind, lines, sizes) = match &info.arch {
                    Arch::Gpt2 { config: c, .. } => {
                        let lines = match c.ln_placement {
                            LnPlacement::Post => vec![
                                "x ← LayerNorm(x + MultiHead(x))".to_string(),
                                "x ← LayerNorm(x + FFN(x))".to_string(),
                            ],
                            LnPlacement::Pre => vec![
                                "x ← x + MultiHead(LayerNorm(x))".to_string(),
                                "x ← x + FFN(LayerNorm(x))".to_string(),
                                format!("{} LayerNorm (ln_f)", Key::LessonThenFinal.text(lang)),
                            ],
                        };
                        let kind = match c.ln_placement {
                            LnPlacement::Post => Key::LessonPostLn.text(lang),
                            LnPlacement::Pre => Key::LessonPreLn.text(lang),
                        };
                        (
                            kind,
                            lines,
                            format!(
                                "× N = {} · d_model {} · FFN {} → {} → {} · {} {}",
                                c.n_layer,
                                c.n_embd,
                                c.n_embd,
                                c.d_ff(),
                                c.n_embd,
                                Key::Heads.text(lang),
                                c.n_head
                            ),
                        )
                    }
                    Arch::Llama { config: c, .. } => (
                        Key::LessonPreLn.text(lang),
                        vec![
                            "x ← x + MultiHead(RMSNorm(x))   (RoPE: q, k)".to_string(),
                            "x ← x + SwiGLU(RMSNorm(x))".to_string(),
                            format!("{} RMSNorm", Key::LessonThenFinal.text(lang)),
                        ],
                        format!(
                            "× N = {} · d_model {} · FFN {} → {} → {} · {} {} · {} {}",
                            c.n_layer,
                            c.n_embd,
                            c.n_embd,
                            c.n_ff,
                            c.n_embd,
                            Key::Heads.text(lang),
                            c.n_head,
                            Key::KvHeads.text(lang),
                            c.n_kv_head
                        ),
                    ),
                };
                html! {
                    <>
                        <p class="help" id="block-kind">{ kind }</p>
                        <pre class="formula">{ lines.join("\n") }</pre>
                        <p class="help">{ sizes }</p>
                        <button class="link" id="lesson-lens-link" onclick={Callback::from(|_: MouseEvent| show(".lens-card"))}>
                            { Key::LensLessonLink.text(lang) }</button>
                    </>
                }
            }
            None => waiting(),
        },
    };

    let dots = (0..Section::ALL.len()).map(|k| {
        let (t, _) = lesson_text::text(Section::at(k), lang);
        html! {
            <button class={classes!("dot", (k == i).then_some("current"))} aria-current={(k == i).then_some("step")}
                aria-label={format!("{} {}: {t}", k + 1, Key::LessonOfNine.text(lang))} title={t} onclick={go(Some(k))}>
                { k + 1 }
            </button>
        }
    });
    let paras = Rc::new(paras);
    html! {
        <section class="card lesson-card" id="lesson" aria-labelledby="lesson-h" data-section={(i + 1).to_string()}>
            <div class="lesson-head">
                <h2 id="lesson-h">{ format!("{} {}/9 · {title}", Key::LessonTitle.text(lang), i + 1) }</h2>
                <button class="close" id="lesson-close" onclick={go(None)}>{ Key::LessonClose.text(lang) }</button>
            </div>
            <nav class="lesson-dots" aria-label={Key::LessonSections.text(lang)}>{ for dots }</nav>
            <div class="lesson-body">
                <div class="lesson-text">
                    { for paras.iter().map(|p| html! { <p>{ *p }</p> }) }
                    { for preset }
                    <button class="link" id="lesson-show-panel" onclick={show_panel}>{ Key::LessonShowPanel.text(lang) }</button>
                </div>
                <div class="lesson-widget">{ widget }
                if matches!(section, Section::WeightedSum | Section::MultiHead) {
                    { real_model(props) }
                }</div>
            </div>
            <div class="lesson-nav">
                <button id="lesson-prev" disabled={i == 0} onclick={go(Some(i.saturating_sub(1)))}>{ Key::LessonPrev.text(lang) }</button>
                <button id="lesson-next" disabled={i + 1 == Section::ALL.len()} onclick={go(Some(i + 1))}>{ Key::LessonNext.text(lang) }</button>
            </div>
        </section>
    }
}
