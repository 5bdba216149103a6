//! Browser plumbing: the clock, fetching the model with progress, and the `window.__attnlab`
//! object through which tests and benchmarks observe (and fault) the page.

use js_sys::{Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{ReadableStreamDefaultReader, Response};

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

pub fn js_err(v: JsValue) -> String {
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

/// A function waiting for idle time, with the longest it waits (ms).
type Queued = (u32, Box<dyn FnOnce()>);

thread_local! {
    /// What waits for idle time, in order.
    static IDLE: std::cell::RefCell<std::collections::VecDeque<Queued>> =
        const { std::cell::RefCell::new(std::collections::VecDeque::new()) };
    /// How many results are being computed (see `AwaitingResult`).
    static AWAITING: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Held while a result is being computed (`awaiting_result`). Idle work waits until it is
/// in: a task started while the worker computes would hold up the result's handler (the
/// worker's message waits for the page's thread), and so the frame that shows it.
pub struct AwaitingResult(());

pub fn awaiting_result() -> AwaitingResult {
    AWAITING.with(|a| a.set(a.get() + 1));
    AwaitingResult(())
}

impl Drop for AwaitingResult {
    fn drop(&mut self) {
        AWAITING.with(|a| a.set(a.get().saturating_sub(1)));
    }
}

/// Runs `f` when the page is idle and no result is being computed (`requestIdleCallback`;
/// where the browser has none, as Safari, a short timer), at most `timeout_ms` after the
/// function queued before it ran (or after now, if none waits) whatever the page is doing.
/// One queued function per idle period, in order: each is a task of its own (a view catching
/// up renders in it), so none grows into a long task that holds up the next keystroke.
pub fn when_idle(timeout_ms: u32, f: impl FnOnce() + 'static) {
    let first = IDLE.with(|q| {
        let mut q = q.borrow_mut();
        q.push_back((timeout_ms, Box::new(f)));
        q.len() == 1
    });
    if first {
        schedule_idle(now() + f64::from(timeout_ms));
    }
}

/// Runs the first queued function in the next idle period, or at `due` (`now()`) at the latest.
fn schedule_idle(due: f64) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let timeout_ms = (due - now()).max(1.0).ceil() as u32;
    let run = Closure::once_into_js(move || {
        // a result is on its way: wait for it, unless this has waited long enough
        if AWAITING.with(|a| a.get()) > 0 && now() < due {
            return schedule_idle(due);
        }
        if let Some((_, f)) = IDLE.with(|q| q.borrow_mut().pop_front()) {
            f();
        }
        if let Some(timeout_ms) = IDLE.with(|q| q.borrow().front().map(|(t, _)| *t)) {
            schedule_idle(now() + f64::from(timeout_ms));
        }
    });
    let has_idle = Reflect::has(&window, &"requestIdleCallback".into()).unwrap_or(false);
    if has_idle {
        let opts = web_sys::IdleRequestOptions::new();
        opts.set_timeout(timeout_ms);
        if window
            .request_idle_callback_with_options(run.unchecked_ref(), &opts)
            .is_ok()
        {
            return;
        }
    }
    let _ = window.set_timeout_with_callback_and_timeout_and_arguments_0(run.unchecked_ref(), 16);
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

/// The least time between two writes of the URL (Safari refuses more than 100 history
/// changes in 30 s).
const URL_EVERY_MS: f64 = 300.0;

/// The longest a due URL write waits for idle time once it is first in the idle queue.
const URL_IDLE_MS: u32 = 1000;

thread_local! {
    /// The fragment waiting to be written, and when the URL was last written.
    static URL: std::cell::RefCell<(Option<String>, f64)> =
        const { std::cell::RefCell::new((None, f64::NEG_INFINITY)) };
}

/// Replaces the URL's fragment soon, off the keystroke's path: at idle time, at most once per
/// `URL_EVERY_MS`, always ending with the latest fragment. Counted in
/// `stale_views` until written.
pub fn replace_hash_soon(fragment: &str) {
    let first = URL.with(|u| {
        let mut u = u.borrow_mut();
        let first = u.0.is_none();
        u.0 = Some(fragment.to_string());
        first
    });
    if !first {
        return; // a write is scheduled; it takes the newest fragment
    }
    stale_views(1);
    let last = URL.with(|u| u.borrow().1);
    let wait = (last + URL_EVERY_MS - now()).max(0.0);
    // after the wait, at the next idle time: a write costs milliseconds with a long text in
    // the fragment, and must not hold up a result
    let write = Closure::once_into_js(|| {
        when_idle(URL_IDLE_MS, || {
            let frag = URL.with(|u| {
                let mut u = u.borrow_mut();
                u.1 = now();
                u.0.take()
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

/// Makes the browser save `url` (a `data:` or `blob:` URL) as `name`: a click on a
/// temporary `<a download>`. Nothing leaves the browser.
pub fn download_url(name: &str, url: &str) -> Result<(), String> {
    let doc = web_sys::window()
        .and_then(|w| w.document())
        .ok_or("no document")?;
    let a: web_sys::HtmlAnchorElement = doc
        .create_element("a")
        .map_err(|e| format!("{e:?}"))?
        .dyn_into()
        .map_err(|_| "not an anchor")?;
    a.set_href(url);
    a.set_download(name);
    a.set_hidden(true);
    let body = doc.body().ok_or("no body")?;
    let _ = body.append_child(&a);
    a.click();
    let _ = body.remove_child(&a);
    Ok(())
}

/// Saves `bytes` as a file `name` of type `mime`.
pub fn download_bytes(name: &str, mime: &str, bytes: &[u8]) -> Result<(), String> {
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(bytes));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    let blob = web_sys::Blob::new_with_u8_array_sequence_and_options(&parts, &opts)
        .map_err(|e| format!("{e:?}"))?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).map_err(|e| format!("{e:?}"))?;
    let result = download_url(name, &url);
    // the click has started the download; the URL may go once this task ends
    let revoke = Closure::once_into_js(move || {
        let _ = web_sys::Url::revoke_object_url(&url);
    });
    if let Some(w) = web_sys::window() {
        let _ =
            w.set_timeout_with_callback_and_timeout_and_arguments_0(revoke.unchecked_ref(), 10_000);
    }
    result
}

/// Reads a user's file in 8 MB slices, reporting the bytes read so far after each slice (the
/// page stays responsive between them).
pub async fn read_file(
    file: &web_sys::File,
    mut progress: impl FnMut(u64),
) -> Result<Vec<u8>, String> {
    const CHUNK: f64 = 8.0 * 1024.0 * 1024.0;
    let size = file.size();
    let mut out = Vec::with_capacity(size as usize);
    let mut at = 0.0;
    while at < size {
        let end = (at + CHUNK).min(size);
        let part = file
            .slice_with_f64_and_f64(at, end)
            .map_err(|e| format!("{}: {e:?}", file.name()))?;
        let buf = JsFuture::from(part.array_buffer())
            .await
            .map_err(|e| format!("{}: {e:?}", file.name()))?;
        let bytes = Uint8Array::new(&buf);
        let n = bytes.length() as usize;
        let start = out.len();
        out.resize(start + n, 0);
        bytes.copy_to(&mut out[start..]);
        at = end;
        progress(out.len() as u64);
    }
    Ok(out)
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

/// The files of a file input or a drop, in order (none for `None`).
pub fn file_list(list: Option<web_sys::FileList>) -> Vec<web_sys::File> {
    list.map(|l| (0..l.length()).filter_map(|i| l.get(i)).collect())
        .unwrap_or_default()
}

/// What was dropped: the entries (files and folders) of a drop's items, taken while the drop
/// event lasts (they are gone after it), or its plain files where the browser gives no entries.
pub enum Dropped {
    Entries(Vec<web_sys::FileSystemEntry>),
    Files(Vec<web_sys::File>),
}

pub fn dropped(dt: &web_sys::DataTransfer) -> Dropped {
    let items = dt.items();
    let entries: Vec<web_sys::FileSystemEntry> = (0..items.length())
        .filter_map(|i| items.get(i))
        .filter(|it| it.kind() == "file")
        .filter_map(|it| it.webkit_get_as_entry().ok().flatten())
        .collect();
    if !entries.is_empty() {
        return Dropped::Entries(entries);
    }
    Dropped::Files(file_list(dt.files()))
}

/// The files under dropped entries: files as they are, folders read one level deep (a model
/// folder holds its three files at the top).
pub async fn entry_files(
    entries: Vec<web_sys::FileSystemEntry>,
) -> Result<Vec<web_sys::File>, String> {
    let mut out = Vec::new();
    for entry in entries {
        if entry.is_directory() {
            let dir: web_sys::FileSystemDirectoryEntry = entry.unchecked_into();
            let reader = dir.create_reader();
            loop {
                // readEntries gives batches until an empty one
                let batch = JsFuture::from(js_sys::Promise::new(&mut |resolve, reject| {
                    if let Err(e) =
                        reader.read_entries_with_callback_and_callback(&resolve, &reject)
                    {
                        let _ = reject.call1(&JsValue::NULL, &e);
                    }
                }))
                .await
                .map_err(|e| format!("{e:?}"))?;
                let batch: js_sys::Array = batch.unchecked_into();
                if batch.length() == 0 {
                    break;
                }
                for e in batch.iter() {
                    let e: web_sys::FileSystemEntry = e.unchecked_into();
                    if e.is_file() {
                        out.push(entry_file(e.unchecked_into()).await?);
                    }
                }
            }
        } else if entry.is_file() {
            out.push(entry_file(entry.unchecked_into()).await?);
        }
    }
    Ok(out)
}

async fn entry_file(entry: web_sys::FileSystemFileEntry) -> Result<web_sys::File, String> {
    let file = JsFuture::from(js_sys::Promise::new(&mut |resolve, reject| {
        entry.file_with_callback_and_callback(&resolve, &reject);
    }))
    .await
    .map_err(|e| format!("{e:?}"))?;
    Ok(file.unchecked_into())
}
