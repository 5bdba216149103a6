//! The text box. Uncontrolled (yew never rewrites its value, which would break an IME
//! composition); every input event outside a composition, and each composition's end,
//! reports the text with the time of the event.
//!
//! The box sits in a form of its own. Chromium's autofill looks at the form of a control whose
//! value changed, and for a control outside any form that is every other control on the page
//! outside a form (the query menus, sliders and switches of every view), checking each one's
//! layout: a forced layout of the whole page, off-screen views included, on every keystroke
//! (≈ 6 ms at 120 tokens, measured with `web/e2e/trace-keystroke.mjs`), which the worker's
//! answer then waits behind. In a form of its own, autofill looks at the box alone (≈ 1 ms).

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{CompositionEvent, HtmlTextAreaElement, InputEvent};
use yew::prelude::*;

use crate::dom::now;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub initial: AttrValue,
    /// Text put in by the page (a lesson preset), with a counter that changes each time.
    #[prop_or_default]
    pub preset: (u32, AttrValue),
    pub label: AttrValue,
    /// The textarea's id ("text" for the main box).
    #[prop_or(AttrValue::Static("text"))]
    pub id: AttrValue,
    /// (text, performance.now() of the event)
    pub on_text: Callback<(String, f64)>,
}

fn value_of(e: &Event) -> Option<String> {
    e.target()?
        .dyn_into::<HtmlTextAreaElement>()
        .ok()
        .map(|t| t.value())
}

#[function_component]
pub fn TextInput(props: &Props) -> Html {
    let node = use_node_ref();
    let composing = use_mut_ref(|| false);
    {
        let node = node.clone();
        let initial = props.initial.clone();
        use_effect_with((), move |_| {
            if let Some(el) = node.cast::<HtmlTextAreaElement>() {
                el.set_value(&initial);
            }
        });
    }
    {
        let (node, composing) = (node.clone(), composing.clone());
        // the preset already in the text when the box is made (a box made again after one
        // shows the text now, not that preset)
        let seen = use_mut_ref(|| props.preset.0);
        use_effect_with(props.preset.clone(), move |(n, text)| {
            let new = std::mem::replace(&mut *seen.borrow_mut(), *n) != *n;
            // never over a syllable being composed (a generation's step landing meanwhile)
            if new && *n > 0 && !*composing.borrow() {
                if let Some(el) = node.cast::<HtmlTextAreaElement>() {
                    el.set_value(text);
                }
            }
        });
    }
    let oninput = {
        let on_text = props.on_text.clone();
        let composing = composing.clone();
        Callback::from(move |e: InputEvent| {
            if e.is_composing() || *composing.borrow() {
                return; // wait for the syllable to finish
            }
            if let Some(v) = value_of(&e) {
                on_text.emit((v, now()));
            }
        })
    };
    // yew has no typed composition listeners: attach them to the element directly
    {
        let node = node.clone();
        let on_text = props.on_text.clone();
        use_effect_with((), move |_| {
            let el = node.cast::<HtmlTextAreaElement>();
            let start = {
                let composing = composing.clone();
                Closure::<dyn Fn(CompositionEvent)>::new(move |_| *composing.borrow_mut() = true)
            };
            let end = Closure::<dyn Fn(CompositionEvent)>::new(move |e: CompositionEvent| {
                *composing.borrow_mut() = false;
                if let Some(v) = value_of(&e) {
                    on_text.emit((v, now()));
                }
            });
            if let Some(el) = &el {
                let _ = el.add_event_listener_with_callback(
                    "compositionstart",
                    start.as_ref().unchecked_ref(),
                );
                let _ = el.add_event_listener_with_callback(
                    "compositionend",
                    end.as_ref().unchecked_ref(),
                );
            }
            move || {
                if let Some(el) = el {
                    let _ = el.remove_event_listener_with_callback(
                        "compositionstart",
                        start.as_ref().unchecked_ref(),
                    );
                    let _ = el.remove_event_listener_with_callback(
                        "compositionend",
                        end.as_ref().unchecked_ref(),
                    );
                }
            }
        });
    }
    // the form holds only the textarea, which Enter never submits; should anything submit it
    // (requestSubmit, a field added later), the page stays
    let onsubmit = Callback::from(|e: SubmitEvent| e.prevent_default());
    html! {
        <form class="input" {onsubmit}>
            <label for={props.id.clone()}>{ props.label.clone() }</label>
            <textarea id={props.id.clone()} ref={node} rows="2" spellcheck="false" autocomplete="off"
                {oninput} />
        </form>
    }
}
