//! The tokens as the model sees them: readable pieces, ids on hover, the ones dropped for
//! the context flagged. Clicking a token picks it as the query.

use std::rc::Rc;

use attnlab_model::TokenInfo;
use yew::prelude::*;

use crate::i18n::{Key, Lang};

/// How many of the dropped tokens the strip draws.
pub const SHOWN_DROPPED: usize = 32;

/// The most tokens of the run the strip draws: a longer text's strip is the window around
/// the query, with a button at each side that moves it.
pub const SHOWN_RUN: usize = 128;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub lang: Lang,
    pub tokens: Rc<Vec<TokenInfo>>,
    /// How many tokens at the start did not fit the context.
    pub dropped: usize,
    /// The selected query, as a position in the run (after the dropped tokens).
    pub query: Option<usize>,
    /// Whether the query is pinned (it then stays across keystrokes).
    #[prop_or_default]
    pub pinned: bool,
    pub on_select: Callback<usize>,
}

#[function_component]
pub fn TokenStrip(props: &Props) -> Html {
    let lang = props.lang;
    // of the dropped tokens only the last few are drawn, of the run the window around the
    // query (a pasted book must not become thousands of buttons); chips say how many more
    let run = props.tokens.len() - props.dropped;
    let shown = super::window(props.query.unwrap_or(run.saturating_sub(1)), run, SHOWN_RUN);
    let first = if shown.start == 0 {
        props.dropped.saturating_sub(SHOWN_DROPPED)
    } else {
        props.dropped + shown.start
    };
    let hidden = first.min(props.dropped);
    let (earlier, later) = (shown.start, run - shown.end);
    let step = |to: usize| {
        let cb = props.on_select.clone();
        Callback::from(move |_| cb.emit(to))
    };
    let end = props.dropped + shown.end;
    let items = props.tokens[..end].iter().enumerate().skip(first).map(|(i, tok)| {
        let dropped = i < props.dropped;
        let pos = i.checked_sub(props.dropped);
        let selected = pos.is_some() && pos == props.query;
        let title = format!(
            "id {} · {:?}{}",
            tok.id,
            tok.piece,
            if dropped { format!(" · {}", Key::Dropped.text(lang)) } else { String::new() }
        );
        let onclick = {
            let cb = props.on_select.clone();
            Callback::from(move |_| {
                if let Some(p) = pos {
                    cb.emit(p)
                }
            })
        };
        let class = classes!("tok", dropped.then_some("dropped"), tok.partial.then_some("partial"),
            selected.then_some("selected"), (selected && props.pinned).then_some("pinned"));
        html! {
            <li key={i}>
                <button {class} {title} {onclick} disabled={dropped} aria-pressed={selected.to_string()}
                    data-id={tok.id.to_string()}>
                    <span class="piece">{ tok.display.clone() }</span>
                    <span class="tid">{ tok.id }</span>
                    if selected && props.pinned { <span class="pin-mark">{ Key::Pinned.text(lang) }</span> }
                </button>
            </li>
        }
    });
    html! {
        <section class="card tokens-card" aria-labelledby="tokens-h">
            <h2 id="tokens-h">{ Key::Tokens.text(lang) }
                <span class="count">{ format!(" {}", props.tokens.len()) }</span></h2>
            <p class="help">{ Key::TokensHelp.text(lang) }</p>
            if props.dropped > 0 {
                <p class="warn" role="status">
                    { format!("{} ({} {})", Key::Dropped.text(lang), props.dropped, Key::DroppedTokens.text(lang)) }
                </p>
            }
            <ol id="token-strip" class="token-strip">
                if hidden > 0 && earlier == 0 {
                    <li class="more" id="hidden-dropped">{ format!("+{hidden}") }</li>
                }
                if earlier > 0 {
                    <li class="more"><button type="button" id="strip-earlier" onclick={step(earlier - 1)}>
                        { Key::EarlierTokens.text(lang).replace("{n}", &earlier.to_string()) }</button></li>
                }
                // a fragment of keyed items alone: yew diffs it by key (beside the chip, a
                // list would be diffed by place, from its end, and every item rebuilt)
                <>{ for items }</>
                if later > 0 {
                    <li class="more"><button type="button" id="strip-later" onclick={step(shown.end)}>
                        { Key::LaterTokens.text(lang).replace("{n}", &later.to_string()) }</button></li>
                }
            </ol>
        </section>
    }
}
