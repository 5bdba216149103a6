//! The hooks through which the end-to-end tests fault the page (on `window.__attnlab`):
//! `loseGpu()` destroys the GPU device before the next forward, `crashWorker()` makes the
//! CPU worker panic, `workerStarts()` counts the CPU workers started (1 + restarts). They act
//! on whichever model is loaded. The draw counters are in `dom::count_draw`.

use wasm_bindgen::prelude::*;

use crate::dom;
use crate::use_engine::EngineHandle;

/// Puts the hooks on `window.__attnlab` (once per page; they follow model changes).
pub fn expose(handle: &EngineHandle) {
    let h = handle.clone();
    let lose = Closure::<dyn Fn()>::new(move || {
        if let Some(g) = h.current().and_then(|r| r.engine().engine.gpu()) {
            g.compute.lose();
        }
    });
    let h = handle.clone();
    let crash = Closure::<dyn Fn()>::new(move || {
        if let Some(r) = h.current() {
            r.engine().engine.cpu().crash_for_test();
        }
    });
    let h = handle.clone();
    let starts = Closure::<dyn Fn() -> u32>::new(move || {
        h.current()
            .map(|r| r.engine().engine.cpu().started())
            .unwrap_or(0)
    });
    dom::expose("loseGpu", lose.as_ref());
    dom::expose("crashWorker", crash.as_ref());
    dom::expose("workerStarts", starts.as_ref());
    lose.forget();
    crash.forget();
    starts.forget();
}
