//! One view presented full-screen (the "present" button, F): the bar to switch views or
//! lesson sections, the text box, and the view as large as fits.

use yew::prelude::*;

use super::lesson::lesson;
use super::parts::{lesson_alone, notices, solo_views, text_box, Ctx};
use crate::components::present_bar::PresentBar;
use crate::display::Solo;
use crate::dom;

pub fn present(c: &Ctx, view: Solo) -> Html {
    let (state, cb) = (c.state, &c.pc.cb);
    // the map as large as fits below the bar and the text box
    let map_width = dom::viewport_height().map_or(640.0, |h| (h - 340.0).clamp(360.0, 1200.0));
    html! {
        <>
            <PresentBar lang={state.lang} {view} lesson={state.view.lesson} on_view={cb.present.clone()}
                on_section={cb.lesson.clone()} on_exit={cb.present_exit.clone()} />
            <main>
                { notices(c) }
                { text_box(c) }
                if let Some(section) = state.view.lesson.filter(|_| lesson_alone(c)) {
                    { lesson(c, section) }
                }
                { solo_views(c, map_width) }
            </main>
        </>
    }
}
