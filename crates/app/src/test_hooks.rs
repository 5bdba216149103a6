//! The hooks through which the end-to-end tests fault the page (on `window.__attnlab`):
//! `loseGpu()` destroys the GPU device before the next forward, `crashWorker()` makes the
//! CPU worker panic, `workerStarts()` counts the CPU workers started (1 + restarts),
//! `profileGpu(ids)` resolves to where a GPU forward of those token ids spends its time
//! (JSON: a full forward and the incremental one, per kernel; for the benchmarks). They act
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
    let h = handle.clone();
    let profile = Closure::<dyn Fn(Vec<u32>) -> js_sys::Promise>::new(move |ids: Vec<u32>| {
        let h = h.clone();
        wasm_bindgen_futures::future_to_promise(async move {
            let gpu = h.current().and_then(|r| r.engine().engine.gpu());
            let Some(g) = gpu else {
                return Err(JsValue::from_str("no GPU engine"));
            };
            let [full, inc] = g
                .compute
                .profile(&ids)
                .await
                .map_err(|e| JsValue::from_str(&e))?;
            let runs = profile_json(&g.adapter, &[("full", full), ("incremental", inc)]);
            Ok(JsValue::from_str(&runs))
        })
    });
    dom::expose("profileGpu", profile.as_ref());
    profile.forget();
    dom::expose("loseGpu", lose.as_ref());
    dom::expose("crashWorker", crash.as_ref());
    dom::expose("workerStarts", starts.as_ref());
    lose.forget();
    crash.forget();
    starts.forget();
}

/// `[{"adapter", "what", "incremental", "kernels": [[name, dispatches, ms]], "readback_ms", …}]`
fn profile_json(adapter: &str, runs: &[(&str, attnlab_gpu::Profile)]) -> String {
    let runs: Vec<serde_json::Value> = runs
        .iter()
        .map(|(what, p)| {
            serde_json::json!({
                "adapter": adapter,
                "what": what,
                "incremental": p.incremental,
                "kernels": p.kernels,
                "readback_ms": p.readback_ms,
                "assemble_ms": p.assemble_ms,
                "floats": p.floats,
                "total_ms": p.total_ms(),
            })
        })
        .collect();
    serde_json::Value::Array(runs).to_string()
}
