//! The bar under the text box while a long text's forward runs on the CPU worker: how many
//! of the model's blocks are done (a pasted page of text takes seconds on a real model).

use yew::prelude::*;

use crate::engine::progress::use_forward_progress;
use crate::i18n::{Key, Lang};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub lang: Lang,
    /// The model's blocks.
    pub layers: usize,
}

#[function_component]
pub fn ForwardProgress(props: &Props) -> Html {
    let done = use_forward_progress();
    let Some(done) = done.filter(|_| props.layers > 0) else {
        return html! {};
    };
    let (done, layers) = (done.min(props.layers), props.layers);
    let label = Key::LayersDone
        .text(props.lang)
        .replace("{done}", &done.to_string())
        .replace("{layers}", &layers.to_string());
    html! {
        <div id="forward-progress" class="forward-progress" role="status" data-done={done.to_string()}>
            <progress max={layers.to_string()} value={done.to_string()} aria-label={label.clone()}></progress>
            <span>{ label }</span>
        </div>
    }
}
