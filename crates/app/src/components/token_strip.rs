//! The tokens as the model sees them: readable pieces, ids on hover, the ones dropped for
//! the context flagged. Clicking a token picks it as the query.

use std::rc::Rc;

use attnlab_model::TokenInfo;
use yew::prelude::*;

use crate::i18n::{Key, Lang};

/// How many of the dropped tokens the strip draws.
pub const SHOWN_DROPPED: usize = 32;

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
    // of the dropped tokens only the last few are drawn (a pasted book must not become
    // thousands of buttons); a chip says how many more there are
    let first = props.dropped.saturating_sub(SHOWN_DROPPED);
    let hidden = first;
    let items = props.tokens.iter().enumerate().skip(first).map(|(i, tok)| {
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
                if hidden > 0 {
                    <li class="more" id="hidden-dropped">{ format!("+{hidden}") }</li>
                }
                // a fragment of keyed items alone: yew diffs it by key (beside the chip, a
                // list would be diffed by place, from its end, and every item rebuilt)
                <>{ for items }</>
            </ol>
        </section>
    }
}
