//! The lesson's panel: section `section` with its widgets, on the selected head of the result
//! on screen (beside the views on the whole page, or alone when embedded or presented).

use yew::prelude::*;

use super::parts::Ctx;
use crate::components::deferred::Deferred;
use crate::components::lesson::Lesson;

pub fn lesson(c: &Ctx, section: usize) -> Html {
    let (state, cb) = (c.state, &c.pc.cb);
    let generation = state.results.shown.as_ref().map_or(0, |s| s.generation);
    html! {
        <Deferred {generation}>
            <Lesson lang={state.lang} {section} on_section={cb.lesson.clone()}
                sel={c.head_sel.clone()} query={state.query_index().unwrap_or(0)} info={state.model.info.clone()}
                mask={state.interventions.mask} on_mask={cb.mask.clone()} on_preset={cb.preset.clone()}
                roles={c.roles.clone()} source={state.model.source.clone()} on_model={c.pc.on_model.reform(|id| (id, false))} />
        </Deferred>
    }
}
