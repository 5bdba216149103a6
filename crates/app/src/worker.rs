//! The CPU worker's side (the `attnlab-worker` binary, a Web Worker): it holds the model,
//! runs the CPU reference forward — incremental, with a second cache for the unmodified
//! model's baseline — and sends each Trace back as one transferred `Float32Array` (see
//! `engine::wire`). The page's thread never runs a forward.

use std::cell::RefCell;

use attnlab_model::{forward_incremental, AttentionOptions, Model, Trace};
use js_sys::{Array, ArrayBuffer, Float32Array, Uint32Array, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

use crate::dom::{get, now, object};
use crate::engine::wire::{self, kind, Header};

#[derive(Default)]
struct State {
    model: Option<Model>,
    prev: Option<Trace>,
    base_prev: Option<Trace>,
}

fn load(data: &JsValue) -> Result<Model, String> {
    let bytes = |key: &str| -> Result<Vec<u8>, String> {
        get(data, key)
            .dyn_into::<Uint8Array>()
            .map(|a| a.to_vec())
            .map_err(|_| format!("the page sent no {key}"))
    };
    Model::from_bytes(&bytes("config")?, &bytes("weights")?).map_err(|e| e.to_string())
}

/// The trace's arrays, one after another, in a `Float32Array` outside wasm memory (so its
/// buffer can be transferred): in `spare`, the buffer the page sent back after the previous
/// trace, when it is large enough (a fresh large buffer costs more than the copy), else in a
/// new one with room to grow.
fn flatten(trace: &Trace, header: &Header, spare: Option<ArrayBuffer>) -> Float32Array {
    let total = header.total() as u32;
    let buffer = match spare {
        Some(b) if b.byte_length() >= total * 4 => b,
        _ => ArrayBuffer::new(total.saturating_add(total / 4).saturating_mul(4)),
    };
    let out = Float32Array::new_with_byte_offset_and_length(&buffer, 0, total);
    let mut at = 0u32;
    for a in wire::arrays(trace, header.lite) {
        let end = at + a.len() as u32;
        out.subarray(at, end).copy_from(a);
        at = end;
    }
    out
}

fn run(state: &mut State, data: &JsValue, baseline: bool) -> Result<(JsValue, Array), String> {
    let model = state.model.as_ref().ok_or("the CPU worker has no model")?;
    let ids = get(data, "ids")
        .dyn_into::<Uint32Array>()
        .map_err(|_| "the page sent no token ids")?
        .to_vec();
    let opts: AttentionOptions = if baseline {
        AttentionOptions::default()
    } else {
        let json = get(data, "opts").as_string().unwrap_or_default();
        serde_json::from_str(&json).map_err(|e| format!("options: {e}"))?
    };
    let started = now();
    let cache = if baseline {
        &mut state.base_prev
    } else {
        &mut state.prev
    };
    let (trace, incremental) =
        forward_incremental(model, cache.as_ref(), &ids, &opts).map_err(|e| e.to_string())?;
    let ms = now() - started;
    // the views' fields only, unless the page asks for the whole trace (an export)
    let header = Header::of(&trace, !get(data, "full").is_truthy());
    let flat = flatten(&trace, &header, get(data, "spare").dyn_into().ok());
    *cache = Some(trace);
    let header = serde_json::to_string(&header).map_err(|e| e.to_string())?;
    let msg = object(&[
        ("kind", kind::TRACE.into()),
        ("id", get(data, "id")),
        ("header", header.into()),
        ("data", flat.clone().into()),
        ("incremental", incremental.into()),
        ("workerMs", ms.into()),
    ]);
    Ok((msg.into(), Array::of1(&flat.buffer())))
}

/// The logit lens's heavy part for the page: the rows it sent through the model's final
/// LayerNorm and output head (`lens::head_probs`), as one transferred array.
fn lens(state: &State, data: &JsValue) -> Result<(JsValue, Array), String> {
    let model = state.model.as_ref().ok_or("the CPU worker has no model")?;
    let rows = get(data, "rows")
        .dyn_into::<Float32Array>()
        .map_err(|_| "the page sent no rows for the lens")?
        .to_vec();
    let started = now();
    let probs = attnlab_model::lens::head_probs(model, &rows).map_err(|e| e.to_string())?;
    let ms = now() - started;
    let out = Float32Array::new_with_length(probs.len() as u32);
    out.copy_from(&probs);
    let msg = object(&[
        ("kind", kind::LENS.into()),
        ("id", get(data, "id")),
        ("data", out.clone().into()),
        ("workerMs", ms.into()),
    ]);
    Ok((msg.into(), Array::of1(&out.buffer())))
}

/// The worker's entry point: answers the page's messages until it is terminated.
pub fn start() {
    crate::dom::log_panics();
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let state = RefCell::new(State::default());
    let reply = scope.clone();
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
        let data = e.data();
        let what = get(&data, "kind").as_string().unwrap_or_default();
        let error = |message: String| {
            object(&[
                ("kind", kind::ERROR.into()),
                ("id", get(&data, "id")),
                ("message", message.into()),
            ])
        };
        let mut st = state.borrow_mut();
        match what.as_str() {
            kind::LOAD => {
                *st = State::default();
                let msg = match load(&data) {
                    Ok(model) => {
                        st.model = Some(model);
                        object(&[("kind", kind::LOADED.into())])
                    }
                    Err(e) => error(e),
                };
                // the files go back to the page (for a restart), transferred, not copied
                let (config, weights) = (get(&data, "config"), get(&data, "weights"));
                let _ = js_sys::Reflect::set(&msg, &"loadId".into(), &get(&data, "loadId"));
                let _ = js_sys::Reflect::set(&msg, &"config".into(), &config);
                let _ = js_sys::Reflect::set(&msg, &"weights".into(), &weights);
                let transfer = Array::new();
                for a in [&config, &weights] {
                    if let Some(a) = a.dyn_ref::<Uint8Array>() {
                        transfer.push(&a.buffer());
                    }
                }
                let _ = reply.post_message_with_transfer(&msg, &transfer);
            }
            kind::FORWARD | kind::BASELINE => {
                match run(&mut st, &data, what == kind::BASELINE) {
                    Ok((msg, transfer)) => {
                        let _ = reply.post_message_with_transfer(&msg, &transfer);
                    }
                    Err(e) => {
                        let _ = reply.post_message(&error(e));
                    }
                };
            }
            kind::LENS => match lens(&st, &data) {
                Ok((msg, transfer)) => {
                    let _ = reply.post_message_with_transfer(&msg, &transfer);
                }
                Err(e) => {
                    let _ = reply.post_message(&error(e));
                }
            },
            // the end-to-end tests' fault injection: a real panic, as a bug would cause
            kind::CRASH => panic!("the page asked the CPU worker to crash (test hook)"),
            other => {
                let _ = reply.post_message(&error(format!("unknown message {other:?}")));
            }
        }
    });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
}
