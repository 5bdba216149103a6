//! The page's display in the document (`display` is the state): the theme on
//! `<html data-theme>`, the marks the stylesheet lays one view out by (`data-embed`,
//! `data-present`), the system's dark preference, full-screen, and the presenting keys —
//! F presents the view on screen (or stops), Esc stops, ←/→ (and Page Up/Down) step through
//! the lesson's sections while it is presented.

use std::cell::Cell;
use std::rc::Rc;

use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use yew::prelude::*;

use crate::display::{Display, Solo, Theme};
use crate::dom;
use crate::lesson::LESSON_SECTIONS;
use crate::state::{Action, State, ViewAction};

fn root() -> Option<web_sys::Element> {
    web_sys::window()?.document()?.document_element()
}

fn set_attr(name: &str, value: Option<&str>) {
    if let Some(r) = root() {
        let _ = match value {
            Some(v) => r.set_attribute(name, v),
            None => r.remove_attribute(name),
        };
    }
}

const DARK_QUERY: &str = "(prefers-color-scheme: dark)";

/// The view to present when none is named: the open lesson, else the card that takes most of
/// the screen (the selected head's map when none can be measured).
pub fn on_screen(lesson: Option<usize>) -> Solo {
    if let Some(i) = lesson {
        return Solo::Lesson(i);
    }
    let Some((win, doc)) = web_sys::window().and_then(|w| Some((w.clone(), w.document()?))) else {
        return Solo::Head;
    };
    let height = win
        .inner_height()
        .ok()
        .and_then(|h| h.as_f64())
        .unwrap_or(0.0);
    let mut best = (0.0, Solo::Head);
    for v in Solo::VIEWS {
        let Ok(Some(el)) = doc.query_selector(v.card_selector()) else {
            continue;
        };
        let r = el.get_bounding_client_rect();
        let seen = (r.bottom().min(height) - r.top().max(0.0)).max(0.0) * r.width();
        if seen > best.0 {
            best = (seen, v);
        }
    }
    best.1
}

/// Asks for full-screen (only a click or a key may); a browser that refuses leaves the page
/// presenting in its window.
pub fn enter_full_screen() {
    let Some(r) = root() else { return };
    let ask = crate::dom::get(&r, "requestFullscreen");
    let Some(ask) = ask.dyn_ref::<js_sys::Function>() else {
        return;
    };
    if let Ok(p) = ask.call0(&r) {
        if let Ok(p) = p.dyn_into::<js_sys::Promise>() {
            // a refusal is no error: the page presents in its window
            thread_local!(static IGNORE: Closure<dyn FnMut(wasm_bindgen::JsValue)> =
                Closure::new(|_| {}));
            IGNORE.with(|c| {
                let _ = p.catch(c);
            });
        }
    }
}

fn leave_full_screen() {
    if let Some(doc) = web_sys::window().and_then(|w| w.document()) {
        if doc.fullscreen_element().is_some() {
            doc.exit_fullscreen();
        }
    }
}

/// Whether a key went to something that takes keys itself (a text field, a list, the map).
fn typed_into(e: &web_sys::KeyboardEvent) -> bool {
    e.target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .is_some_and(|el| {
            matches!(
                el.tag_name().to_ascii_lowercase().as_str(),
                "input" | "textarea" | "select" | "canvas"
            ) || el.closest("[contenteditable]").ok().flatten().is_some()
        })
}

/// What the page shows about its display: whether it is dark now, and whether its offline
/// copy is complete (`<html data-offline="ready">`, set by boot.js).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Appearance {
    pub dark: bool,
    pub offline: bool,
}

fn offline_ready() -> bool {
    root()
        .and_then(|r| r.get_attribute("data-offline"))
        .as_deref()
        == Some("ready")
}

/// Keeps the document in step with `display`.
#[hook]
pub fn use_display(
    display: &Display,
    lesson: Option<usize>,
    d: UseReducerDispatcher<State>,
) -> Appearance {
    let offline = use_state_eq(offline_ready);
    {
        let offline = offline.clone();
        use_effect_with((), move |_| {
            let cb = Closure::<dyn Fn()>::new(move || offline.set(offline_ready()));
            let observer = web_sys::MutationObserver::new(cb.as_ref().unchecked_ref()).ok();
            if let (Some(o), Some(r)) = (&observer, root()) {
                let init = web_sys::MutationObserverInit::new();
                init.set_attribute_filter(&js_sys::Array::of1(&"data-offline".into()));
                let _ = o.observe_with_options(&r, &init);
            }
            move || {
                if let Some(o) = observer {
                    o.disconnect();
                }
                drop(cb);
            }
        });
    }
    let media = use_memo((), |_| {
        web_sys::window().and_then(|w| w.match_media(DARK_QUERY).ok().flatten())
    });
    let system_dark = use_state_eq(|| media.as_ref().as_ref().is_some_and(|m| m.matches()));
    {
        let (media, system_dark) = (media.clone(), system_dark.clone());
        use_effect_with((), move |_| {
            let m = (*media).clone();
            let cb = Closure::<dyn Fn()>::new({
                let m = m.clone();
                move || system_dark.set(m.as_ref().is_some_and(|m| m.matches()))
            });
            dom::listen(m.map(Into::into), "change", cb)
        });
    }
    use_effect_with(display.theme, |t| {
        set_attr("data-theme", (*t != Theme::Auto).then(|| t.code()));
    });
    use_effect_with((display.embed, display.present), |(embed, present)| {
        set_attr("data-embed", embed.map(|e| e.code()).as_deref());
        set_attr("data-present", present.map(|p| p.code()).as_deref());
        if present.is_none() {
            leave_full_screen();
        }
    });
    // leaving full-screen by the browser's own means (its Esc) stops presenting
    {
        let d = d.clone();
        let presenting = display.present.is_some();
        use_effect_with(presenting, move |&presenting| {
            let doc = web_sys::window().and_then(|w| w.document());
            let was_full = Rc::new(Cell::new(false));
            let cb = Closure::<dyn Fn()>::new({
                let doc = doc.clone();
                move || {
                    let full = doc
                        .as_ref()
                        .is_some_and(|d| d.fullscreen_element().is_some());
                    if was_full.replace(full) && !full && presenting {
                        d.dispatch(Action::Present(None));
                    }
                }
            });
            dom::listen(doc.map(Into::into), "fullscreenchange", cb)
        });
    }
    // the presenting keys (an embedded view has none: the slide deck owns the keys)
    {
        let embedded = display.embed.is_some();
        use_effect_with(
            (display.present, lesson, embedded),
            move |&(present, lesson, embedded)| {
                let cb = Closure::<dyn Fn(web_sys::KeyboardEvent)>::new(
                    move |e: web_sys::KeyboardEvent| {
                        if embedded
                            || e.is_composing()
                            || e.ctrl_key()
                            || e.meta_key()
                            || e.alt_key()
                        {
                            return;
                        }
                        let key = e.key();
                        if key == "Escape" {
                            if present.is_some() {
                                d.dispatch(Action::Present(None));
                            }
                            return;
                        }
                        if typed_into(&e) {
                            return;
                        }
                        let step = |by: isize| {
                            let i = lesson.unwrap_or(0) as isize + by;
                            (0..LESSON_SECTIONS as isize)
                                .contains(&i)
                                .then_some(i as usize)
                        };
                        match (key.as_str(), present) {
                            ("f" | "F", None) => {
                                e.prevent_default();
                                enter_full_screen();
                                d.dispatch(Action::Present(Some(on_screen(lesson))));
                            }
                            ("f" | "F", Some(_)) => {
                                e.prevent_default();
                                d.dispatch(Action::Present(None));
                            }
                            ("ArrowLeft" | "PageUp", Some(Solo::Lesson(_))) => {
                                e.prevent_default();
                                if let Some(i) = step(-1) {
                                    d.dispatch(Action::View(ViewAction::SetLesson(Some(i))));
                                }
                            }
                            ("ArrowRight" | "PageDown", Some(Solo::Lesson(_))) => {
                                e.prevent_default();
                                if let Some(i) = step(1) {
                                    d.dispatch(Action::View(ViewAction::SetLesson(Some(i))));
                                }
                            }
                            _ => {}
                        }
                    },
                );
                dom::listen(dom::document_target(), "keydown", cb)
            },
        );
    }
    Appearance {
        dark: display.theme.is_dark(*system_dark),
        offline: *offline,
    }
}
