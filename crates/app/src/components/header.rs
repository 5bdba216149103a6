//! Title, the backend switch (Auto / WebGPU / CPU) and badge (WebGPU with the adapter's
//! name, or CPU with the reason — "faster here than the software GPU: 14 ms vs 180 ms"), and
//! the language switch.

use yew::prelude::*;

use crate::display::Theme;
use crate::engine::Preference;
use crate::engine::{Backend, CpuWhy};
use crate::i18n::{Key, Lang};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub lang: Lang,
    pub backend: Backend,
    pub on_lang: Callback<Lang>,
    /// Whether lesson mode is open, and its switch.
    pub lesson: bool,
    pub on_lesson: Callback<bool>,
    /// The backend the user asked for, and the switch.
    pub preference: Preference,
    pub on_preference: Callback<Preference>,
    /// The colour theme and its switch.
    pub theme: Theme,
    pub on_theme: Callback<Theme>,
    /// Present the view on screen full-screen.
    pub on_present: Callback<()>,
    /// The offline copy is complete: later visits work without the network.
    #[prop_or_default]
    pub offline: bool,
}

/// The badge's text and its tooltip for `backend`.
pub fn badge(backend: &Backend, lang: Lang) -> (&'static str, String, String) {
    let t = |k: Key| k.text(lang);
    match backend {
        Backend::Starting => (
            "badge starting",
            t(Key::BackendStarting).to_string(),
            String::new(),
        ),
        Backend::Gpu { .. } => (
            "badge gpu",
            format!("{} · {}", t(Key::BackendGpu), backend.adapter_label(lang)),
            backend.adapter_label(lang),
        ),
        Backend::Comparing { .. } => (
            "badge starting",
            t(Key::BackendComparing).to_string(),
            backend.adapter_label(lang),
        ),
        Backend::Cpu { why } => {
            let detail = match why {
                CpuWhy::Faster { cpu_ms, gpu_ms } => format!(
                    " — {}: {cpu_ms:.0} ms {} {gpu_ms:.0} ms",
                    t(Key::CpuFaster),
                    t(Key::Versus)
                ),
                _ => String::new(),
            };
            let title = match why {
                CpuWhy::NoWebGpu(e) => format!("{} ({e})", t(Key::NoWebGpuHere)),
                CpuWhy::Chosen => t(Key::CpuChosen).to_string(),
                CpuWhy::Faster { .. } => t(Key::SoftwareGpuNote).to_string(),
                CpuWhy::SoftwareGpuSlow => t(Key::SoftwareGpuSlow).to_string(),
                CpuWhy::GpuStarting => t(Key::GpuStarting).to_string(),
                CpuWhy::GpuFailed(e) => format!("{} ({e})", t(Key::GpuFailed)),
                CpuWhy::CpuOnlyModel(why) => format!("{} ({why})", t(Key::CpuOnlyModel)),
            };
            (
                "badge cpu",
                format!("{} · wasm{detail}", t(Key::BackendCpu)),
                title,
            )
        }
    }
}

#[function_component]
pub fn Header(props: &Props) -> Html {
    let lang = props.lang;
    let t = |k: Key| k.text(lang);
    let (class, label, title) = badge(&props.backend, lang);
    let on_backend = super::on_select(&props.on_preference, Preference::from_code);
    let option = |p: Preference, label: &str| {
        html! { <option value={p.code()} selected={props.preference == p}>{ label.to_string() }</option> }
    };
    let on_theme = super::on_select(&props.on_theme, Theme::from_code);
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
                <label class="backend-choice">
                    <select id="backend-choice" onchange={on_backend} aria-label={t(Key::BackendChoice)}>
                        { option(Preference::Auto, t(Key::BackendAuto)) }
                        { option(Preference::WebGpu, "WebGPU") }
                        { option(Preference::Cpu, "CPU") }
                    </select>
                </label>
                <select id="theme-choice" class="header-select" onchange={on_theme} aria-label={t(Key::ThemeChoice)}
                    title={t(Key::ThemeChoice)}>
                    { for Theme::ALL.into_iter().map(|th| html! {
                        <option value={th.code()} selected={props.theme == th}>{ format!("◐ {}", th.label(lang)) }</option>
                    }) }
                </select>
                <button class="present-toggle" id="present-toggle" title={t(Key::PresentHelp)}
                    aria-keyshortcuts="F"
                    onclick={{
                        let cb = props.on_present.clone();
                        Callback::from(move |_| cb.emit(()))
                    }}>
                    { t(Key::Present) }
                </button>
                if props.offline {
                    <span id="offline-badge" class="badge offline" title={t(Key::OfflineReadyHelp)}>{ t(Key::OfflineReady) }</span>
                }
                <span id="backend" class={class} title={title} role="status">{ label }</span>
                <button class="lang" onclick={switch} aria-label={t(Key::LanguageSwitchLabel)}
                    lang={lang.other().code()}>
                    { t(Key::LanguageSwitch) }
                </button>
            </div>
        </header>
    }
}
