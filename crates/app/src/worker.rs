//! The CPU worker's side (the `attnlab-worker` binary, a Web Worker): it holds the model (a
//! GPT-2-layout or a Llama-family one, behind `inspect::Traced`), runs the CPU reference forward — incremental, with a second cache for the unmodified
//! model's baseline — and sends each Trace back as one transferred `Float32Array` (see
//! `engine::wire`). The page's thread never runs a forward.

use std::cell::RefCell;

use attnlab_model::inspect::Traced;
use attnlab_model::{flow, lens, roles, AttentionOptions, Earlier, Keep, Model, Pooled, Trace};
use js_sys::{ArrayBuffer, Float32Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

use crate::dom::now;
use crate::engine::protocol::{self, Files, Format, Reply, Request};
use crate::engine::wire::{self, Header};
use crate::engine::{self, FlowOf, LensOf};

#[derive(Default)]
struct State {
    model: Option<Box<dyn Traced>>,
    /// The page's number for the model held (`Request::Load`'s `model`).
    number: u32,
    prev: Option<Trace>,
    base_prev: Option<Trace>,
    /// Every head's weights pooled by columns row by row, for the thumbnails of slim
    /// results, grown with `prev`.
    pooled: Option<Pooled>,
    /// The slim trace sent for the run `prev` is of (its thumbnails left out): the next slim
    /// result grows its heads' maps from it (`Trace::slim_after`).
    slim_prev: Option<Trace>,
}

/// A forward running longer than this (ms) tells the page after each block how far it is.
const PROGRESS_AFTER_MS: f64 = 200.0;

/// Reads and checks the model in `files` (every tensor's shape against its config).
fn load(files: &Files) -> Result<Box<dyn Traced>, String> {
    let err = |e: attnlab_model::Error| e.to_string();
    Ok(match files.format {
        Format::Gpt2 => Box::new(
            Model::from_bytes(&files.config.to_vec(), &files.one()?.to_vec()).map_err(err)?,
        ),
        Format::Gguf | Format::HfLlama => Box::new(files.llama_model()?),
    })
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

/// A forward on the model, incremental against the last one of its kind (the baseline keeps
/// its own cache); the views' fields only, unless `full` (an export); with `slim`, a run
/// that keeps no maps and its slim trace of those heads (a long text).
fn run(
    state: &mut State,
    id: u32,
    ids: &[u32],
    opts: &AttentionOptions,
    (baseline, full, slim): (bool, bool, Option<&[(usize, usize)]>),
    spare: Option<ArrayBuffer>,
) -> Result<Reply, String> {
    let State {
        model,
        prev,
        base_prev,
        pooled,
        slim_prev,
        ..
    } = state;
    let model = model.as_ref().ok_or("the CPU worker has no model")?;
    let started = now();
    // the cache's vectors move into the new trace (a long text's two traces are never held
    // at once); a failed run leaves no cache, and the next one runs whole
    let cache = if baseline { base_prev } else { prev };
    let keep = if slim.is_some() {
        Keep::Streams
    } else {
        Keep::All
    };
    // a forward that takes a moment says how far it is after each block
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let mut layer_done = |l: usize| {
        if baseline || now() - started < PROGRESS_AFTER_MS {
            return;
        }
        let progress = Reply::Progress {
            id,
            layers_done: l as u32 + 1,
        };
        if let Ok((msg, _)) = progress.to_js() {
            let _ = scope.post_message(&msg);
        }
    };
    let (trace, incremental) = model
        .trace_watched(
            cache.take().map(|t| Earlier::Owned(Box::new(t))),
            ids,
            opts,
            keep,
            &mut layer_done,
        )
        .map_err(|e| e.to_string())?;
    let err = |e: attnlab_model::Error| e.to_string();
    // the maps sent last are of the run the forward went on from only when it reused rows
    let earlier = if baseline {
        None
    } else {
        slim_prev.take().filter(|_| incremental)
    };
    let mut slim = match slim {
        Some(heads) => {
            let mut slim = match earlier {
                Some(e) => trace.slim_after(heads, e),
                None => trace.slim(heads),
            }
            .map_err(err)?;
            if !baseline {
                // the heads grid's thumbnails: only the rows that changed are pooled again
                let pooled =
                    pooled.get_or_insert_with(|| Pooled::new(crate::engine::THUMBNAIL_SIDE));
                pooled.update(&trace).map_err(err)?;
                slim.thumbnails = Some(pooled.thumbnails());
            }
            Some(slim)
        }
        None => {
            if !baseline {
                *pooled = None;
            }
            None
        }
    };
    let worker_ms = now() - started;
    let sent = slim.as_ref().unwrap_or(&trace);
    let header = Header::of(sent, !full);
    let data = flatten(sent, &header, spare);
    *cache = Some(trace);
    if let Some(mut slim) = slim.take().filter(|_| !baseline) {
        slim.thumbnails = None;
        *slim_prev = Some(slim);
    }
    Ok(Reply::Trace {
        id,
        header,
        data,
        incremental,
        worker_ms,
    })
}

/// The worker's run of `ids` with `opts` (its residual rows, queries and keys at least): the
/// cached one, or — when it holds another — run again now (`Keep::Streams`), in its place.
fn run_of<'s>(
    state: &'s mut State,
    ids: &[u32],
    opts: &AttentionOptions,
) -> Result<&'s Trace, String> {
    let model = state.model.as_ref().ok_or("the CPU worker has no model")?;
    let cached = state
        .prev
        .as_ref()
        .is_some_and(|p| p.tokens == ids && p.options == *opts && lens::has_rows(p));
    if !cached {
        // the cache becomes another run's: the maps sent last are no longer of it
        state.slim_prev = None;
        let prev = state.prev.take().map(|t| Earlier::Owned(Box::new(t)));
        let (trace, _) = model
            .trace_watched(prev, ids, opts, Keep::Streams, &mut |_| {})
            .map_err(|e| e.to_string())?;
        state.prev = Some(trace);
    }
    state
        .prev
        .as_ref()
        .ok_or_else(|| "the CPU worker kept no run".into())
}

/// The attention-flow strip of a slim result (`FlowOf`), from the worker's run of its text:
/// the query's row of every head, or the rollout's rows one layer at a time
/// (`flow::strip`), as one transferred array (layers × T).
fn flow(state: &mut State, id: u32, of: FlowOf) -> Result<Reply, String> {
    let started = now();
    let trace = run_of(state, &of.ids, &of.opts)?;
    let rows = flow::strip(trace, of.query, of.method).map_err(|e| e.to_string())?;
    let data = Float32Array::from(&rows.concat()[..]);
    Ok(Reply::Flow {
        id,
        data,
        worker_ms: now() - started,
    })
}

/// The logit lens's heavy part for the page: the rows it sent — or, for a slim result, the
/// worker's own cached rows at a position (the text run again first when the cache holds
/// another) — through the model's final norm and output head (`Traced::head_probs`), as one
/// transferred array.
fn lens(state: &mut State, id: u32, of: LensOf) -> Result<Reply, String> {
    let started = now();
    let err = |e: attnlab_model::Error| e.to_string();
    let rows = match of {
        LensOf::Rows(rows) => rows,
        LensOf::Position {
            ids,
            opts,
            position,
            last,
        } => engine::position_rows(run_of(state, &ids, &opts)?, position, last).map_err(err)?,
    };
    let model = state.model.as_ref().ok_or("the CPU worker has no model")?;
    let probs = model.head_probs(&rows).map_err(err)?;
    let worker_ms = now() - started;
    let data = Float32Array::new_with_length(probs.len() as u32);
    data.copy_from(&probs);
    Ok(Reply::Lens {
        id,
        data,
        worker_ms,
    })
}

/// The head-role probe's scores: its ids run with the default options, keeping every head's
/// weights and nothing else of the run (`Traced::maps`; SmolLM2's 64 tokens: 4.4 MB), beside
/// the text's cache, which stays as it was.
fn probe(state: &State, id: u32, ids: &[u32], half: usize) -> Result<Reply, String> {
    let model = state.model.as_ref().ok_or("the CPU worker has no model")?;
    // (no `2 * half`: a message may say any length)
    let short = |have: usize| {
        format!("a probe of {half} tokens said twice needs twice as many; {have} were run")
    };
    if half == 0 || ids.len() / 2 < half {
        return Err(short(ids.len()));
    }
    let started = now();
    let opts = AttentionOptions::default();
    let maps = model.maps(ids, &opts).map_err(|e| e.to_string())?;
    // (a GPT-2-layout model runs the last `n_positions` ids of a longer list)
    if maps.t / 2 < half {
        return Err(short(maps.t));
    }
    let scores = roles::probe_scores(&maps, half);
    drop(maps);
    let data = Float32Array::from(&protocol::probe_scores_to_wire(&scores)[..]);
    Ok(Reply::Probe {
        id,
        data,
        worker_ms: now() - started,
    })
}

/// Whether a request for model `model` may run: the worker holds that model.
fn holds(state: &State, model: u32) -> Result<(), String> {
    if state.number == model {
        Ok(())
    } else {
        Err("superseded by another model".into())
    }
}

/// The answer to one request.
fn answer(state: &mut State, request: Request) -> Reply {
    let failed = |id| {
        move |message| Reply::Error {
            id: Some(id),
            message,
        }
    };
    match request {
        Request::Load {
            load_id,
            model: number,
            files,
        } => {
            // a model that fails to load leaves the one loaded before in place (its caches
            // go first: the new model's memory is what matters now)
            state.prev = None;
            state.base_prev = None;
            state.slim_prev = None;
            let error = match load(&files) {
                Ok(model) => {
                    *state = State {
                        model: Some(model),
                        number,
                        ..State::default()
                    };
                    None
                }
                Err(e) => Some(e),
            };
            // the files go back to the page (for a restart), transferred, not copied
            Reply::Loaded {
                load_id,
                files: Some(files),
                error,
            }
        }
        Request::Forward {
            id,
            model,
            ids,
            opts,
            baseline,
            full,
            slim,
            spare,
        } => holds(state, model)
            .and_then(|()| {
                let how = (baseline, full, slim.as_deref());
                run(state, id, &ids, &opts, how, spare)
            })
            .unwrap_or_else(failed(id)),
        Request::Lens { id, model, of } => holds(state, model)
            .and_then(|()| lens(state, id, of))
            .unwrap_or_else(failed(id)),
        Request::Flow { id, model, of } => holds(state, model)
            .and_then(|()| flow(state, id, of))
            .unwrap_or_else(failed(id)),
        Request::Probe {
            id,
            model,
            ids,
            half,
        } => holds(state, model)
            .and_then(|()| probe(state, id, &ids, half))
            .unwrap_or_else(failed(id)),
        // the end-to-end tests' fault injection: a real panic, as a bug would cause
        Request::Crash => panic!("the page asked the CPU worker to crash (test hook)"),
    }
}

/// The worker's entry point: answers the page's messages until it is terminated.
pub fn start() {
    crate::dom::log_panics();
    let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let state = RefCell::new(State::default());
    let reply = scope.clone();
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
        let answer = match Request::from_js(&e.data()) {
            Ok(request) => answer(&mut state.borrow_mut(), request),
            Err((id, message)) => Reply::Error { id, message },
        };
        let posted = answer.to_js().and_then(|(msg, transfer)| {
            reply
                .post_message_with_transfer(&msg, &transfer)
                .map_err(crate::dom::js_err)
        });
        if let Err(e) = posted {
            web_sys::console::error_1(&format!("the CPU worker could not answer: {e}").into());
        }
    });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
}
