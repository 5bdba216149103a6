//! The hooks through which the end-to-end tests fault the page (on `window.__attnlab`):
//! `loseGpu()` destroys the GPU device before the next forward, `crashWorker()` makes the
//! CPU worker panic, `workerStarts()` counts the CPU workers started (1 + restarts),
//! `profileGpu(ids)` resolves to where a GPU forward of those token ids spends its time
//! (JSON: a full forward and the incremental one, per kernel; for the benchmarks). They act
//! on whichever model is loaded. The draw counters are in `dom::count_draw`.

use std::rc::Rc;

use wasm_bindgen::prelude::*;

use crate::dom;
use crate::engine::gpu::Gpu;
use crate::engine::worker_client::CpuWorker;
use crate::engine::GpuSide;

/// The current model's engines, as the hooks find them when called (none before a model
/// is loaded).
#[derive(Clone)]
pub struct Engines {
    pub gpu: Rc<dyn Fn() -> Option<Rc<GpuSide<Gpu>>>>,
    pub cpu: Rc<dyn Fn() -> Option<CpuWorker>>,
}

/// Puts the hooks on `window.__attnlab` (once per page; they follow model changes).
pub fn expose(engines: Engines) {
    let e = engines.clone();
    let lose = Closure::<dyn Fn()>::new(move || {
        if let Some(g) = (e.gpu)() {
            g.compute.lose();
        }
    });
    let e = engines.clone();
    let crash = Closure::<dyn Fn()>::new(move || {
        if let Some(c) = (e.cpu)() {
            c.crash_for_test();
        }
    });
    let e = engines.clone();
    let starts = Closure::<dyn Fn() -> u32>::new(move || (e.cpu)().map_or(0, |c| c.started()));
    let e = engines;
    let profile = Closure::<dyn Fn(Vec<u32>) -> js_sys::Promise>::new(move |ids: Vec<u32>| {
        let gpu = (e.gpu)();
        wasm_bindgen_futures::future_to_promise(async move {
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
