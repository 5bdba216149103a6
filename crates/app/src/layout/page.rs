//! The whole page: the header, the text box with the comparison switch, the lesson beside the
//! views when it is open, every view, and the model loader.

use yew::prelude::*;

use super::lesson::lesson;
use super::parts::{notices, text_box, views, Ctx};
use crate::components::header::Header;
use crate::components::model_loader::ModelLoader;
use crate::components::notices::cpu_reason;
use crate::i18n::Key;
use crate::lesson::Section;

pub fn page(c: &Ctx) -> Html {
    let (state, pc) = (c.state, c.pc);
    let (cb, lang, v, d) = (&pc.cb, state.lang, &state.view, &state.display);
    let cpu_reason = cpu_reason(&state.model, state.results.shown.as_ref(), lang);
    let compare_toggle = {
        let cb = cb.compare_toggle.clone();
        Callback::from(move |e: Event| {
            if let Some(i) = crate::components::target_as::<web_sys::HtmlInputElement>(&e) {
                cb.emit(i.checked());
            }
        })
    };
    html! {
        <>
            <Header {lang} backend={state.model.backend.clone()} on_lang={cb.lang.clone()}
                lesson={v.lesson.is_some()} on_lesson={cb.lesson_toggle.clone()}
                preference={state.model.preference} on_preference={cb.preference.clone()}
                theme={d.theme} on_theme={cb.theme.clone()} on_present={(*pc.on_present).clone()}
                offline={c.offline} />
            <main data-focus={v.lesson.map(|i| Section::at(i).panel())}>
                { notices(c) }
                { text_box(c) }
                <label class="compare-toggle">
                    <input type="checkbox" id="compare-toggle" checked={v.compare.is_some()}
                        onchange={compare_toggle} />
                    { Key::CompareToggle.text(lang) }
                </label>
                if let Some(section) = v.lesson {
                    { lesson(c, section) }
                }
                { for cpu_reason }
                { views(c, |_| true, 640.0) }
                if state.model.info.is_some() {
                    <ModelLoader {lang} own={state.model.own.clone()} on_files={(*pc.on_files).clone()}
                        kept={state.model.kept.clone()} on_load_kept={pc.on_kept.0.clone()} on_forget={pc.on_kept.1.clone()}
                        source={state.model.source.clone()} on_model={(*pc.on_model).clone()}
                        hub={state.model.hub_base()} on_hub={(*pc.on_hub).clone()} />
                }
            </main>
        </>
    }
}
