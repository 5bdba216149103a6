//! The bar above a presented view: which view, the lesson's previous/next section, and the
//! way back (Esc does the same; F toggles, ←/→ step through the lesson: `use_display`).

use yew::prelude::*;

use crate::display::Solo;
use crate::i18n::{Key, Lang};
use crate::lesson::LESSON_SECTIONS;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub lang: Lang,
    /// The presented view.
    pub view: Solo,
    pub on_view: Callback<Solo>,
    /// The lesson section open (or last open), which "Lesson" presents.
    pub lesson: Option<usize>,
    /// Go to this lesson section.
    pub on_section: Callback<Option<usize>>,
    pub on_exit: Callback<()>,
}

#[function_component]
pub fn PresentBar(props: &Props) -> Html {
    let lang = props.lang;
    let t = |k: Key| k.text(lang);
    let on_change = super::on_select(&props.on_view, Solo::from_code);
    // the lesson as one entry: its section is the one open
    let current = match props.view {
        Solo::Lesson(_) => "lesson".to_string(),
        v => v.code(),
    };
    let lesson_at = match props.view {
        Solo::Lesson(i) => i,
        _ => props.lesson.unwrap_or(0),
    };
    let nav = match props.view {
        Solo::Lesson(i) => {
            let go = |to: Option<usize>| {
                let cb = props.on_section.clone();
                Callback::from(move |_| cb.emit(to))
            };
            html! {
                <>
                    <button id="present-prev" disabled={i == 0} onclick={go(i.checked_sub(1))}>{ t(Key::PresentPrev) }</button>
                    <span class="present-where" aria-live="polite">{ format!("{} / {LESSON_SECTIONS}", i + 1) }</span>
                    <button id="present-next" disabled={i + 1 >= LESSON_SECTIONS} onclick={go(Some(i + 1))}>{ t(Key::PresentNext) }</button>
                </>
            }
        }
        _ => html! {},
    };
    html! {
        <nav class="present-bar" aria-label={t(Key::Present)}>
            <label>
                <span class="sr">{ t(Key::PresentView) }</span>
                <select id="present-view" onchange={on_change}>
                    { for Solo::VIEWS.into_iter().map(|v| html! {
                        <option value={v.code()} selected={current == v.code()}>{ v.label(lang) }</option>
                    }) }
                    <option value={Solo::Lesson(lesson_at).code()} selected={current == "lesson"}>{ t(Key::LessonTitle) }</option>
                </select>
            </label>
            { nav }
            <button id="present-exit" onclick={{
                let cb = props.on_exit.clone();
                Callback::from(move |_| cb.emit(()))
            }}>{ t(Key::PresentExit) }</button>
        </nav>
    }
}
