//! Title, the backend badge (WebGPU with the adapter's name, or CPU with the reason) and the
//! language switch.

use yew::prelude::*;

use crate::i18n::{Key, Lang};
use crate::state::Backend;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub lang: Lang,
    pub backend: Backend,
    pub on_lang: Callback<Lang>,
    /// Whether lesson mode is open, and its switch.
    pub lesson: bool,
    pub on_lesson: Callback<bool>,
}

#[function_component]
pub fn Header(props: &Props) -> Html {
    let lang = props.lang;
    let t = |k: Key| k.text(lang);
    let (class, label, title) = match &props.backend {
        Backend::Starting => (
            "badge starting",
            t(Key::BackendStarting).to_string(),
            String::new(),
        ),
        Backend::Gpu { .. } => (
            "badge gpu",
            format!(
                "{} · {}",
                t(Key::BackendGpu),
                props.backend.adapter_label(lang)
            ),
            props.backend.adapter_label(lang),
        ),
        Backend::Cpu { reason } => (
            "badge cpu",
            format!("{} · wasm", t(Key::BackendCpu)),
            reason.clone(),
        ),
    };
    let switch = {
        let on_lang = props.on_lang.clone();
        Callback::from(move |_| on_lang.emit(lang.other()))
    };
    html! {
        <header class="top">
            <div class="brand">
                <h1>{ t(Key::AppTitle) }</h1>
                <p class="tagline">{ t(Key::Tagline) }</p>
            </div>
            <div class="top-controls">
                <button class="lesson-toggle" id="lesson-toggle" aria-pressed={props.lesson.to_string()}
                    onclick={{
                        let (cb, on) = (props.on_lesson.clone(), props.lesson);
                        Callback::from(move |_| cb.emit(!on))
                    }}>
                    { t(Key::LessonMode) }
                </button>
                <span id="backend" class={class} title={title} role="status">{ label }</span>
                <button class="lang" onclick={switch} aria-label={t(Key::LanguageSwitchLabel)}
                    lang={lang.other().code()}>
                    { t(Key::LanguageSwitch) }
                </button>
            </div>
        </header>
    }
}
