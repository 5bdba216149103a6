//! Work for idle time: a queue of functions run one per idle period, held back while a
//! result is being computed, and work after the next paint.

use js_sys::Reflect;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::js::now;

/// A function waiting for idle time, with the longest it waits (ms).
type Queued = (u32, Box<dyn FnOnce()>);

thread_local! {
    /// The page's idle queue (`when_idle`): what waits for idle time, in order.
    static IDLE: std::cell::RefCell<std::collections::VecDeque<Queued>> =
        const { std::cell::RefCell::new(std::collections::VecDeque::new()) };
    /// How many results are being computed: the live `AwaitingResult`s.
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
