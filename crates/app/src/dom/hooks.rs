//! `window.__attnlab`, through which tests and benchmarks observe (and fault) the page: named
//! hooks, draw counters, the count of views not yet current, every painted result.

use js_sys::{Object, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::js::{get, object};

/// `window.__attnlab`, created on first use.
pub fn hooks() -> Option<Object> {
    let window = web_sys::window()?;
    let key = JsValue::from_str("__attnlab");
    let existing = Reflect::get(&window, &key).ok()?;
    if existing.is_object() {
        return existing.dyn_into().ok();
    }
    let obj = Object::new();
    Reflect::set(&window, &key, &obj).ok()?;
    Some(obj)
}

/// Sets `window.__attnlab[name] = value`.
pub fn expose(name: &str, value: &JsValue) {
    if let Some(h) = hooks() {
        let _ = Reflect::set(&h, &name.into(), value);
    }
}

/// Counts one drawing of the canvas `name` in `window.__attnlab.draws[name]` (the tests check
/// that a hover redraws a highlight, not a heatmap).
pub fn count_draw(name: &str) {
    count(name, 1.0);
}

/// Adds `by` to the test hooks' counter `name` (in `window.__attnlab.draws`).
pub fn count(name: &str, by: f64) {
    let Some(h) = hooks() else { return };
    let draws = match Reflect::get(&h, &"draws".into()) {
        Ok(d) if d.is_object() => d,
        _ => {
            let d: JsValue = Object::new().into();
            let _ = Reflect::set(&h, &"draws".into(), &d);
            d
        }
    };
    let n = get(&draws, name).as_f64().unwrap_or(0.0);
    let _ = Reflect::set(&draws, &name.into(), &(n + by).into());
}

thread_local! {
    /// The count `stale_views` keeps (and mirrors in `window.__attnlab.stale`).
    static STALE: std::cell::Cell<i32> = const { std::cell::Cell::new(0) };
}

/// Counts the parts of the page not yet current (`delta` ±1) — views off screen waiting to
/// catch up with the newest state, a URL write not yet made — in `window.__attnlab.stale`.
pub fn stale_views(delta: i32) {
    let n = STALE.with(|s| {
        let n = (s.get() + delta).max(0);
        s.set(n);
        n
    });
    let Some(h) = hooks() else { return };
    let _ = Reflect::set(&h, &"stale".into(), &n.into());
}

/// How many parts of the page are not yet current (see `stale_views`).
pub fn stale_count() -> i32 {
    STALE.with(|s| s.get())
}

/// Records one painted result: `window.__attnlab.painted` (the latest) and, appended to
/// `window.__attnlab.log`, every one of them.
pub fn record_paint(fields: &[(&str, JsValue)]) {
    let Some(h) = hooks() else { return };
    let entry = object(fields);
    let log = Reflect::get(&h, &"log".into())
        .ok()
        .and_then(|l| l.dyn_into::<js_sys::Array>().ok())
        .unwrap_or_else(|| {
            let a = js_sys::Array::new();
            let _ = Reflect::set(&h, &"log".into(), &a);
            a
        });
    if log.push(&entry) == 1 {
        // the first result is on screen: boot.js then completes the offline copy
        if let (Some(doc), Ok(e)) = (
            web_sys::window().and_then(|w| w.document()),
            web_sys::Event::new("attnlab-painted"),
        ) {
            let _ = doc.dispatch_event(&e);
        }
    }
    let _ = Reflect::set(&h, &"painted".into(), &entry);
}
