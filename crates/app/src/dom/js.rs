//! Small JavaScript helpers: the clock, plain objects and their fields, errors as text, the
//! next task, and panics written to the console.

use js_sys::{Object, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

/// Writes each panic's message and place to the console (as `attnlab panicked: …`) before the
/// wasm traps: the CPU worker's panics would otherwise not show at all (the page handles the
/// worker's error event). The page has yew's hook, which does the same. The end-to-end tests
/// fail on any console error they did not provoke.
pub fn log_panics() {
    std::panic::set_hook(Box::new(|info| {
        web_sys::console::error_1(&format!("attnlab panicked: {info}").into());
    }));
}

/// `performance.now()` in ms, in the page or in a worker (0 where there is neither).
pub fn now() -> f64 {
    Reflect::get(&js_sys::global(), &"performance".into())
        .ok()
        .and_then(|p| p.dyn_into::<web_sys::Performance>().ok())
        .map(|p| p.now())
        .unwrap_or(0.0)
}

/// `value[key]` (undefined where it has none).
pub fn get(value: &JsValue, key: &str) -> JsValue {
    Reflect::get(value, &key.into()).unwrap_or(JsValue::UNDEFINED)
}

/// A plain object with these fields.
pub fn object(fields: &[(&str, JsValue)]) -> Object {
    let o = Object::new();
    for (k, v) in fields {
        let _ = Reflect::set(&o, &(*k).into(), v);
    }
    o
}

pub fn js_err(v: JsValue) -> String {
    v.as_string()
        .or_else(|| {
            v.dyn_ref::<js_sys::Error>()
                .map(|e| String::from(e.message()))
        })
        .unwrap_or_else(|| format!("{v:?}"))
}

/// Resolves in a later task (after the browser has had a chance to paint).
pub async fn next_task() {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        if let Some(w) = web_sys::window() {
            let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, 16);
        }
    });
    let _ = JsFuture::from(promise).await;
}
