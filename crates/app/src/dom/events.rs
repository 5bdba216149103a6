//! Events and the window: listening with a clean-up, the document, the viewport, the
//! browser's language.

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// Listens for `event` on `target` (when there is one) with `cb`; the returned function stops
/// listening and drops `cb` — the shape of an effect's clean-up.
pub fn listen<F: ?Sized + 'static>(
    target: Option<web_sys::EventTarget>,
    event: &'static str,
    cb: Closure<F>,
) -> impl FnOnce() {
    if let Some(t) = &target {
        let _ = t.add_event_listener_with_callback(event, cb.as_ref().unchecked_ref());
    }
    move || {
        if let Some(t) = target {
            let _ = t.remove_event_listener_with_callback(event, cb.as_ref().unchecked_ref());
        }
    }
}

/// The page's document as an event target.
pub fn document_target() -> Option<web_sys::EventTarget> {
    Some(web_sys::window()?.document()?.into())
}

/// The window's inner height in CSS px.
pub fn viewport_height() -> Option<f64> {
    web_sys::window()?.inner_height().ok()?.as_f64()
}

/// The browser's preferred language tag ("" when unknown).
pub fn browser_language() -> String {
    web_sys::window()
        .and_then(|w| w.navigator().language())
        .unwrap_or_default()
}
