//! Browser plumbing: the clock, fetching the model with progress, and the `window.__attnlab`
//! object through which tests and benchmarks observe (and fault) the page.

use js_sys::{Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{ReadableStreamDefaultReader, Response};

/// `performance.now()` in ms (0 where there is no page).
pub fn now() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map(|p| p.now())
        .unwrap_or(0.0)
}

/// The browser's preferred language tag ("" when unknown).
pub fn browser_language() -> String {
    web_sys::window()
        .and_then(|w| w.navigator().language())
        .unwrap_or_default()
}

fn js_err(v: JsValue) -> String {
    v.as_string()
        .or_else(|| {
            v.dyn_ref::<js_sys::Error>()
                .map(|e| String::from(e.message()))
        })
        .unwrap_or_else(|| format!("{v:?}"))
}

/// Starts fetching `url`; returns the response and its size when the server says it (and
/// the body is not compressed, where the header would count compressed bytes).
pub async fn open(url: &str) -> Result<(Response, Option<u64>), String> {
    let window = web_sys::window().ok_or("no window")?;
    let resp: Response = JsFuture::from(window.fetch_with_str(url))
        .await
        .map_err(|e| format!("{url}: {}", js_err(e)))?
        .dyn_into()
        .map_err(|_| format!("{url}: not a response"))?;
    if !resp.ok() {
        return Err(format!(
            "{url}: HTTP {} {}",
            resp.status(),
            resp.status_text()
        ));
    }
    let headers = resp.headers();
    let encoded = headers
        .get("content-encoding")
        .ok()
        .flatten()
        .is_some_and(|e| e != "identity");
    let size = headers
        .get("content-length")
        .ok()
        .flatten()
        .and_then(|s| s.parse().ok())
        .filter(|_| !encoded);
    Ok((resp, size))
}

/// Reads a response's body, calling `progress(bytes)` after every chunk.
pub async fn read_body(
    url: &str,
    resp: Response,
    mut progress: impl FnMut(u64),
) -> Result<Vec<u8>, String> {
    let body = resp.body().ok_or_else(|| format!("{url}: empty body"))?;
    let reader: ReadableStreamDefaultReader = body
        .get_reader()
        .dyn_into()
        .map_err(|_| format!("{url}: cannot read the body"))?;
    let mut out = Vec::new();
    loop {
        let chunk = JsFuture::from(reader.read())
            .await
            .map_err(|e| format!("{url}: {}", js_err(e)))?;
        let done = Reflect::get(&chunk, &"done".into())
            .map(|d| d.is_truthy())
            .unwrap_or(true);
        if done {
            break;
        }
        let value = Reflect::get(&chunk, &"value".into()).map_err(js_err)?;
        let bytes: Uint8Array = value
            .dyn_into()
            .map_err(|_| format!("{url}: unexpected chunk"))?;
        let start = out.len();
        out.resize(start + bytes.length() as usize, 0);
        bytes.copy_to(&mut out[start..]);
        progress(out.len() as u64);
    }
    Ok(out)
}

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

/// Records one painted result: `window.__attnlab.painted` (the latest) and, appended to
/// `window.__attnlab.log`, every one of them.
pub fn record_paint(fields: &[(&str, JsValue)]) {
    let Some(h) = hooks() else { return };
    let entry = Object::new();
    for (k, v) in fields {
        let _ = Reflect::set(&entry, &(*k).into(), v);
    }
    let log = Reflect::get(&h, &"log".into())
        .ok()
        .and_then(|l| l.dyn_into::<js_sys::Array>().ok())
        .unwrap_or_else(|| {
            let a = js_sys::Array::new();
            let _ = Reflect::set(&h, &"log".into(), &a);
            a
        });
    log.push(&entry);
    let _ = Reflect::set(&h, &"painted".into(), &entry);
}

/// Runs `f` after the browser has painted the current frame (an animation frame, then a task).
pub fn after_paint(f: impl FnOnce() + 'static) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let task = Closure::once_into_js(move || {
        let inner = Closure::once_into_js(f);
        if let Some(w) = web_sys::window() {
            let _ =
                w.set_timeout_with_callback_and_timeout_and_arguments_0(inner.unchecked_ref(), 0);
        }
    });
    let _ = window.request_animation_frame(task.unchecked_ref());
}

/// `location.hash` ("" when there is none).
pub fn location_hash() -> String {
    web_sys::window()
        .and_then(|w| w.location().hash().ok())
        .unwrap_or_default()
}

/// Replaces the URL's fragment without a new history entry (and without a reload).
pub fn replace_hash(fragment: &str) {
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
