//! One view embedded in another site (`#…&embed=VIEW`): the view alone, the text box beside
//! it unless asked away (`input=0`) or the view is the lesson, and a link to the whole page.

use yew::prelude::*;

use super::lesson::lesson;
use super::parts::{lesson_alone, notices, solo_views, text_box, Ctx};
use crate::i18n::Key;

pub fn embed(c: &Ctx) -> Html {
    html! {
        <>
            <a class="open-full" id="open-full" href={c.page_frag.clone()} target="_blank" rel="noopener">
                { Key::OpenInAttnlab.text(c.state.lang) }
            </a>
            <main>
                { notices(c) }
                { text_box(c) }
                if let Some(section) = c.state.view.lesson.filter(|_| lesson_alone(c)) {
                    { lesson(c, section) }
                }
                { solo_views(c, 640.0) }
            </main>
        </>
    }
}
