//! The URL's fragment: read it, and write it at most every `URL_EVERY_MS` in idle time.

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::hooks::stale_views;
use super::idle::when_idle;
use super::js::now;

/// `location.hash` ("" when there is none).
pub fn location_hash() -> String {
    web_sys::window()
        .and_then(|w| w.location().hash().ok())
        .unwrap_or_default()
}

/// The least time between two writes of the URL (Safari refuses more than 100 history
/// changes in 30 s).
const URL_EVERY_MS: f64 = 300.0;

/// The longest a due URL write waits for idle time once it is first in the idle queue.
const URL_IDLE_MS: u32 = 1000;

/// The page's one URL writer (`replace_hash_soon`): the fragment waiting to be written,
/// and when the URL was last written (`performance.now()`).
struct UrlWriter {
    waiting: Option<String>,
    written_at: f64,
}

thread_local! {
    static URL: std::cell::RefCell<UrlWriter> = const {
        std::cell::RefCell::new(UrlWriter {
            waiting: None,
            written_at: f64::NEG_INFINITY,
        })
    };
}

/// Replaces the URL's fragment soon, off the keystroke's path: at idle time, at most once per
/// `URL_EVERY_MS`, always ending with the latest fragment. Counted in
/// `stale_views` until written.
pub fn replace_hash_soon(fragment: &str) {
    let first = URL.with(|u| {
        let mut u = u.borrow_mut();
        let first = u.waiting.is_none();
        u.waiting = Some(fragment.to_string());
        first
    });
    if !first {
        return; // a write is scheduled; it takes the newest fragment
    }
    stale_views(1);
    let last = URL.with(|u| u.borrow().written_at);
    let wait = (last + URL_EVERY_MS - now()).max(0.0);
    // after the wait, at the next idle time: a write costs milliseconds with a long text in
    // the fragment, and must not hold up a result
    let write = Closure::once_into_js(|| {
        when_idle(URL_IDLE_MS, || {
            let frag = URL.with(|u| {
                let mut u = u.borrow_mut();
                u.written_at = now();
                u.waiting.take()
            });
            if let Some(f) = frag {
                replace_hash(&f);
            }
            stale_views(-1);
        })
    });
    if let Some(w) = web_sys::window() {
        let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(
            write.unchecked_ref(),
            wait.ceil() as i32,
        );
    }
}

/// Replaces the URL's fragment without a new history entry (and without a reload).
fn replace_hash(fragment: &str) {
    let Some(window) = web_sys::window() else {
        return;
    };
    if window.location().hash().ok().as_deref() == Some(fragment) {
        return;
    }
    if let Ok(history) = window.history() {
        let _ = history.replace_state_with_url(&JsValue::NULL, "", Some(fragment));
    }
}
