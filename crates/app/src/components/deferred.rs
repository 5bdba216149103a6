//! A view that shows a new result right away only while it is on (or near) the screen. Off
//! screen it keeps what it last showed, and catches up with the newest result as soon as the
//! page is idle and no result is being computed (`dom::when_idle`: at most `CATCH_UP_MS` after
//! the view before it in the queue) or the moment it scrolls near the viewport, whichever
//! comes first. A keystroke thus renders and paints the views the
//! reader sees first, and the rest in tasks of their own after that frame: nothing is
//! skipped, only ordered. Anything else — a click, a toggle, a hover — updates every view at
//! once, as before: only a new result (a new `generation`) is deferred.
//! `window.__attnlab.stale` counts the views still waiting (the tests wait for 0 before
//! reading one).

use web_sys::Element;
use yew::prelude::*;

use crate::dom;

/// The longest an off-screen view, once first in the idle queue, waits for idle time before it
/// updates anyway.
const CATCH_UP_MS: u32 = 300;

/// How far outside the viewport a view still counts as on screen (it is about to be seen).
const NEAR: &str = "200px 0px";

#[derive(Properties, PartialEq)]
pub struct Props {
    /// The result the children show (`Shown::generation`).
    pub generation: u64,
    pub children: Html,
}

#[function_component]
pub fn Deferred(props: &Props) -> Html {
    let node = use_node_ref();
    // on screen until the observer says otherwise (the first render shows everything)
    let near = super::use_near(node.clone(), NEAR);
    let shown = use_mut_ref(|| props.children.clone());
    // the result `shown` belongs to
    let shown_gen = use_mut_ref(|| props.generation);
    // a catch-up is scheduled (and counted in `stale`)
    let waiting = use_mut_ref(|| false);
    // catch-ups done in a render whose effect has not run yet (still counted in `stale`)
    let caught_up = use_mut_ref(|| 0);
    // the catch-up fired: render the newest children even though off screen
    let due = use_mut_ref(|| false);
    let update = use_force_update();

    let current = near || *due.borrow() || *shown_gen.borrow() == props.generation;
    if current {
        *due.borrow_mut() = false;
        *shown_gen.borrow_mut() = props.generation;
        if *shown.borrow() != props.children {
            *shown.borrow_mut() = props.children.clone();
        }
        // settled here, in the render, not in its effect: when yew renders a component twice
        // before its effects run, only the last render's effect runs, and a view caught up by
        // the first and stale again by the second must still schedule its next catch-up
        if std::mem::take(&mut *waiting.borrow_mut()) {
            *caught_up.borrow_mut() += 1;
        }
    } else if !*waiting.borrow() && *shown.borrow() != props.children {
        *waiting.borrow_mut() = true;
        dom::stale_views(1);
        if let Some(el) = node.cast::<Element>() {
            let _ = el.set_attribute("data-waiting", "1");
        }
        let (due, update) = (due.clone(), update.clone());
        dom::when_idle(CATCH_UP_MS, move || {
            *due.borrow_mut() = true;
            update.force_update();
        });
    }
    // once the newest children are on the page, what this view waited for is no longer stale
    {
        let (caught_up, waiting, node) = (caught_up.clone(), waiting.clone(), node.clone());
        use_effect(move || {
            let n = std::mem::take(&mut *caught_up.borrow_mut());
            if n > 0 {
                dom::stale_views(-n);
                if !*waiting.borrow() {
                    if let Some(el) = node.cast::<Element>() {
                        let _ = el.remove_attribute("data-waiting");
                    }
                }
            }
        });
    }
    // a view that goes away uncounts what it still waited for
    {
        let (waiting, caught_up) = (waiting.clone(), caught_up.clone());
        use_effect_with((), move |_| {
            move || {
                let n = *caught_up.borrow() + i32::from(*waiting.borrow());
                dom::stale_views(-n);
            }
        });
    }
    html! {
        <div class="deferred" ref={node}>{ shown.borrow().clone() }</div>
    }
}
