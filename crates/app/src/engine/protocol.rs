//! The messages between the page and its CPU worker, both ways, typed: [`Request`] (page →
//! worker) and [`Reply`] (worker → page). Each turns into a plain JS object and the list of
//! buffers to transfer with it (`to_js`) and back (`from_js`); the object's keys are written
//! here and nowhere else in Rust. A trace's numbers travel as `engine::wire` lays them out.
//! `web/bench-peer/bench-peer.mjs` drives the worker from JavaScript with the same objects.

use attnlab_model::flow::Method;
use attnlab_model::gguf::{Gguf, TensorBytes, TensorInfo};
use attnlab_model::llama::LlamaModel;
use attnlab_model::roles::{Role, Scores};
use attnlab_model::AttentionOptions;
use js_sys::{Array, ArrayBuffer, Float32Array, Object, Uint32Array, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};

use super::wire::Header;
use super::{FlowOf, LensOf};
use crate::dom::{self, get};

/// How the worker reads a model's files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// GPT-2 layout: config.json and model.safetensors.
    Gpt2,
    /// A llama or qwen2 GGUF file (the one file of `weights`; `config` is empty).
    Gguf,
    /// A Hugging Face Llama, Mistral or Qwen2 folder: config.json and model.safetensors, or
    /// the shards its index names.
    HfLlama,
}

impl Format {
    const ALL: [Format; 3] = [Format::Gpt2, Format::Gguf, Format::HfLlama];

    fn code(self) -> &'static str {
        match self {
            Format::Gpt2 => "gpt2",
            Format::Gguf => "gguf",
            Format::HfLlama => "hf-llama",
        }
    }
}

/// The first bytes of a GGUF file read for its directory; a file whose directory is longer
/// is read whole.
const GGUF_HEAD: u32 = 16 << 20;

/// `read(head, file length)` on the first bytes of the GGUF file in `bytes` (outside wasm
/// memory), again on the whole file if those were too few: both sides read a GGUF file's
/// directory without copying its weights (the page its tokenizer, the worker its tensors).
pub fn read_gguf_head<T>(
    bytes: &Uint8Array,
    read: impl Fn(&[u8], usize) -> attnlab_model::Result<T>,
) -> Result<T, String> {
    let len = bytes.length();
    let head = |n: u32| bytes.subarray(0, n.min(len)).to_vec();
    match read(&head(GGUF_HEAD), len as usize) {
        Err(_) if len > GGUF_HEAD => read(&head(len), len as usize),
        r => r,
    }
    .map_err(|e| e.to_string())
}

/// The model's files as the page read them: config.json and the weights' bytes (one file,
/// or a sharded model's shards).
#[derive(Clone)]
pub struct Files {
    pub format: Format,
    pub config: Uint8Array,
    pub weights: Vec<Uint8Array>,
}

impl Files {
    /// Reads and checks a Llama-family model (a GGUF file or a Hugging Face folder's
    /// safetensors), one tensor at a time out of the bytes outside wasm memory: for the worker
    /// that runs it and for the page's GPU engine, which uploads it and lets it go.
    pub fn llama_model(&self) -> Result<LlamaModel, String> {
        let err = |e: attnlab_model::Error| e.to_string();
        match self.format {
            Format::Gguf => {
                let file = self.one()?;
                let g = read_gguf_head(file, Gguf::parse_head)?;
                LlamaModel::from_gguf(&g, &JsTensors(file)).map_err(err)
            }
            Format::HfLlama => {
                let shards: Vec<Vec<u8>> = self.weights.iter().map(Uint8Array::to_vec).collect();
                let shards: Vec<&[u8]> = shards.iter().map(Vec::as_slice).collect();
                LlamaModel::from_hf(&self.config.to_vec(), &shards).map_err(err)
            }
            Format::Gpt2 => Err("a GPT-2-layout model is not a Llama-family one".into()),
        }
    }

    /// The weights of a format that has one file of them.
    pub fn one(&self) -> Result<&Uint8Array, String> {
        match self.weights.as_slice() {
            [one] => Ok(one),
            more => Err(format!(
                "{} weight files for a model of one ({})",
                more.len(),
                self.format.code()
            )),
        }
    }
}

/// A GGUF file's tensors read one at a time from its bytes outside wasm memory.
pub(crate) struct JsTensors<'a>(pub &'a Uint8Array);

impl TensorBytes for JsTensors<'_> {
    fn tensor_bytes(&self, t: &TensorInfo) -> Option<std::borrow::Cow<'_, [u8]>> {
        let end = t.start.checked_add(t.len)?;
        (end <= self.0.length() as usize)
            .then(|| std::borrow::Cow::Owned(self.0.subarray(t.start as u32, end as u32).to_vec()))
    }
}

/// Page → worker.
pub enum Request {
    /// Load a model. Numbered, so that the files coming back from an older load are told
    /// apart; `model`: the number the model has once loaded (the page's count of models).
    Load {
        load_id: u32,
        model: u32,
        files: Files,
    },
    /// Run the model on `ids` with `opts` (`baseline`: the unmodified model's run, with its
    /// own incremental cache and the default options). `full`: every field of the trace, not
    /// only what the views read. `spare`: the buffer of the previous trace, to fill again.
    /// `model`: the model it is for (refused when the worker holds another one). `slim`: a
    /// text too long for every head's maps: the run keeps none (`Keep::Streams`) and the
    /// reply is its slim trace with these heads' maps (`Trace::slim`).
    Forward {
        id: u32,
        model: u32,
        ids: Vec<u32>,
        opts: AttentionOptions,
        baseline: bool,
        full: bool,
        slim: Option<Vec<(usize, usize)>>,
        spare: Option<ArrayBuffer>,
    },
    /// The logit lens's heavy part: the rows (given, or the worker's at a position) through
    /// the final norm and the output head.
    Lens { id: u32, model: u32, of: LensOf },
    /// The attention-flow strip of the worker's run of a text (`FlowOf`).
    Flow { id: u32, model: u32, of: FlowOf },
    /// The head-role probe (`roles::Probe`): `half` ids said twice, run with the default
    /// options; the reply is every head's induction and duplicate-token scores.
    Probe {
        id: u32,
        model: u32,
        ids: Vec<u32>,
        half: usize,
    },
    /// A test hook: the worker panics.
    Crash,
}

/// Worker → page.
pub enum Reply {
    /// A load is over (`error`: why it failed); the files come back with it, transferred.
    Loaded {
        load_id: u32,
        files: Option<Files>,
        error: Option<String>,
    },
    /// A forward's trace: its header and every array in one buffer (`wire::arrays`' order).
    Trace {
        id: u32,
        header: Header,
        data: Float32Array,
        incremental: bool,
        worker_ms: f64,
    },
    /// A long forward's progress: how many blocks of request `id` are done (sent while it
    /// runs, once it has taken a moment).
    Progress { id: u32, layers_done: u32 },
    /// The lens's next-token distributions, every stage's, one after another.
    Lens {
        id: u32,
        data: Float32Array,
        worker_ms: f64,
    },
    /// The attention-flow strip: per layer, each token's contribution to the query.
    Flow {
        id: u32,
        data: Float32Array,
        worker_ms: f64,
    },
    /// The probe's scores: per head (`layer * n_head + head`) its induction score, then its
    /// duplicate-token score (`probe_scores_to_wire`).
    Probe {
        id: u32,
        data: Float32Array,
        worker_ms: f64,
    },
    /// A request failed (`id`: which one, when known).
    Error { id: Option<u32>, message: String },
}

/// The roles a probe scores, in the order the wire gives them for each head.
const PROBE_ROLES: [Role; 2] = [Role::Induction, Role::Duplicate];

/// A probe's scores as the wire carries them: `PROBE_ROLES` for every head, NaN where a
/// score is undefined.
pub fn probe_scores_to_wire(scores: &[Scores]) -> Vec<f32> {
    scores
        .iter()
        .flat_map(|s| PROBE_ROLES.map(|r| s.get(r).unwrap_or(f32::NAN)))
        .collect()
}

/// The scores `probe_scores_to_wire` wrote.
pub fn probe_scores_from_wire(data: &[f32]) -> Vec<Scores> {
    data.chunks_exact(PROBE_ROLES.len())
        .map(|head| {
            let mut s = Scores::default();
            for (&r, &x) in PROBE_ROLES.iter().zip(head) {
                s.set(r, (!x.is_nan()).then_some(x));
            }
            s
        })
        .collect()
}

// The objects' keys and kinds.
const KIND: &str = "kind";
const ID: &str = "id";
const LOAD_ID: &str = "loadId";
const MODEL: &str = "model";
const FORMAT: &str = "format";
const CONFIG: &str = "config";
const WEIGHTS: &str = "weights";
const IDS: &str = "ids";
const OPTS: &str = "opts";
const FULL: &str = "full";
const SPARE: &str = "spare";
const ROWS: &str = "rows";
const POSITION: &str = "position";
const LAST: &str = "last";
const HALF: &str = "half";
const QUERY: &str = "query";
const METHOD: &str = "method";
const SLIM: &str = "slim";
const HEADER: &str = "header";
const DATA: &str = "data";
const INCREMENTAL: &str = "incremental";
const WORKER_MS: &str = "workerMs";
const LAYERS_DONE: &str = "layersDone";
const MESSAGE: &str = "message";

const LOAD: &str = "load";
const FORWARD: &str = "forward";
const BASELINE: &str = "baseline";
const LENS: &str = "lens";
const FLOW: &str = "flow";
const PROBE: &str = "probe";
const CRASH: &str = "crash";
const LOADED: &str = "loaded";
const TRACE: &str = "trace";
const PROGRESS: &str = "progress";
const ERROR: &str = "error";

/// A plain object with these fields (a `None` leaves its key out).
fn object(fields: &[(&str, Option<JsValue>)]) -> Object {
    let present: Vec<(&str, JsValue)> = fields
        .iter()
        .filter_map(|(k, v)| v.clone().map(|v| (*k, v)))
        .collect();
    dom::object(&present)
}

fn number(value: &JsValue, key: &str) -> Option<u32> {
    get(value, key).as_f64().map(|x| x as u32)
}

fn typed<T: JsCast>(value: &JsValue, key: &str, what: &str) -> Result<T, String> {
    get(value, key)
        .dyn_into::<T>()
        .map_err(|_| format!("the message has no {what}"))
}

fn files(value: &JsValue) -> Result<Files, String> {
    let code = get(value, FORMAT).as_string().unwrap_or_default();
    let format = Format::ALL
        .into_iter()
        .find(|f| f.code() == code)
        .ok_or_else(|| format!("the message names no model format it knows ({code:?})"))?;
    let weights: Array = typed(value, WEIGHTS, "list of weight files")?;
    let weights = weights
        .iter()
        .map(|w| {
            w.dyn_into::<Uint8Array>()
                .map_err(|_| "a weight file of the message is not bytes".to_string())
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Files {
        format,
        config: typed(value, CONFIG, "config.json")?,
        weights,
    })
}

impl Files {
    fn fields(&self) -> [(&'static str, Option<JsValue>); 3] {
        [
            (FORMAT, Some(self.format.code().into())),
            (CONFIG, Some(self.config.clone().into())),
            (WEIGHTS, Some(self.weights.iter().collect::<Array>().into())),
        ]
    }

    fn buffers(&self) -> Vec<JsValue> {
        std::iter::once(&self.config)
            .chain(&self.weights)
            .map(|b| b.buffer().into())
            .collect()
    }
}

impl Request {
    /// The object to post and the buffers to transfer with it.
    pub fn to_js(&self) -> Result<(JsValue, Array), String> {
        let transfer = Array::new();
        let msg = match self {
            Request::Load {
                load_id,
                model,
                files,
            } => {
                for b in files.buffers() {
                    transfer.push(&b);
                }
                let [format, config, weights] = files.fields();
                object(&[
                    (KIND, Some(LOAD.into())),
                    (LOAD_ID, Some((*load_id).into())),
                    (MODEL, Some((*model).into())),
                    format,
                    config,
                    weights,
                ])
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
            } => {
                let opts = serde_json::to_string(opts).map_err(|e| e.to_string())?;
                // the heads as (layer, head) pairs one after another
                let slim = slim.as_ref().map(|heads| {
                    let flat: Vec<u32> = heads
                        .iter()
                        .flat_map(|&(l, h)| [l as u32, h as u32])
                        .collect();
                    Uint32Array::from(&flat[..]).into()
                });
                if let Some(s) = spare {
                    transfer.push(s);
                }
                object(&[
                    (
                        KIND,
                        Some(if *baseline { BASELINE } else { FORWARD }.into()),
                    ),
                    (ID, Some((*id).into())),
                    (MODEL, Some((*model).into())),
                    (IDS, Some(Uint32Array::from(&ids[..]).into())),
                    (OPTS, Some(opts.into())),
                    (FULL, Some((*full).into())),
                    (SLIM, slim),
                    (SPARE, spare.clone().map(Into::into)),
                ])
            }
            Request::Lens { id, model, of } => {
                let fields: Vec<(&str, Option<JsValue>)> = match of {
                    LensOf::Rows(rows) => {
                        let rows = Float32Array::from(&rows[..]);
                        transfer.push(&rows.buffer());
                        vec![(ROWS, Some(rows.into()))]
                    }
                    LensOf::Position {
                        ids,
                        opts,
                        position,
                        last,
                    } => {
                        let opts = serde_json::to_string(opts).map_err(|e| e.to_string())?;
                        vec![
                            (IDS, Some(Uint32Array::from(&ids[..]).into())),
                            (OPTS, Some(opts.into())),
                            (POSITION, Some((*position as u32).into())),
                            (LAST, Some((*last).into())),
                        ]
                    }
                };
                let mut all = vec![
                    (KIND, Some(LENS.into())),
                    (ID, Some((*id).into())),
                    (MODEL, Some((*model).into())),
                ];
                all.extend(fields);
                object(&all)
            }
            Request::Flow { id, model, of } => object(&[
                (KIND, Some(FLOW.into())),
                (ID, Some((*id).into())),
                (MODEL, Some((*model).into())),
                (IDS, Some(Uint32Array::from(&of.ids[..]).into())),
                (
                    OPTS,
                    Some(
                        serde_json::to_string(&of.opts)
                            .map_err(|e| e.to_string())?
                            .into(),
                    ),
                ),
                (QUERY, Some((of.query as u32).into())),
                (METHOD, Some(of.method.code().into())),
            ]),
            Request::Probe {
                id,
                model,
                ids,
                half,
            } => object(&[
                (KIND, Some(PROBE.into())),
                (ID, Some((*id).into())),
                (MODEL, Some((*model).into())),
                (IDS, Some(Uint32Array::from(&ids[..]).into())),
                (HALF, Some((*half as u32).into())),
            ]),
            Request::Crash => object(&[(KIND, Some(CRASH.into()))]),
        };
        Ok((msg.into(), transfer))
    }

    /// The request a message holds; `Err` names what is missing or unknown (with the
    /// request's id, when it has one).
    pub fn from_js(msg: &JsValue) -> Result<Request, (Option<u32>, String)> {
        let id = number(msg, ID);
        // a page that does not number its models (the peer benchmark) has model 0 only
        let model = number(msg, MODEL).unwrap_or(0);
        let kind = get(msg, KIND).as_string().unwrap_or_default();
        let fail = |e: String| (id, e);
        Ok(match kind.as_str() {
            LOAD => Request::Load {
                load_id: number(msg, LOAD_ID).unwrap_or(0),
                model,
                files: files(msg).map_err(fail)?,
            },
            FORWARD | BASELINE => {
                let baseline = kind == BASELINE;
                let ids: Uint32Array = typed(msg, IDS, "token ids").map_err(fail)?;
                let opts = if baseline {
                    AttentionOptions::default()
                } else {
                    let json = get(msg, OPTS).as_string().unwrap_or_default();
                    serde_json::from_str(&json).map_err(|e| fail(format!("options: {e}")))?
                };
                Request::Forward {
                    id: id.unwrap_or(0),
                    model,
                    ids: ids.to_vec(),
                    opts,
                    baseline,
                    full: get(msg, FULL).is_truthy(),
                    slim: get(msg, SLIM).dyn_into::<Uint32Array>().ok().map(|a| {
                        a.to_vec()
                            .chunks_exact(2)
                            .map(|p| (p[0] as usize, p[1] as usize))
                            .collect()
                    }),
                    spare: get(msg, SPARE).dyn_into().ok(),
                }
            }
            LENS => Request::Lens {
                id: id.unwrap_or(0),
                model,
                of: match get(msg, ROWS).dyn_into::<Float32Array>() {
                    Ok(rows) => LensOf::Rows(rows.to_vec()),
                    Err(_) => {
                        let ids: Uint32Array =
                            typed(msg, IDS, "rows or a position for the lens").map_err(fail)?;
                        let json = get(msg, OPTS).as_string().unwrap_or_default();
                        LensOf::Position {
                            ids: ids.to_vec(),
                            opts: serde_json::from_str(&json)
                                .map_err(|e| fail(format!("options: {e}")))?,
                            position: number(msg, POSITION)
                                .ok_or_else(|| fail("a lens without its position".into()))?
                                as usize,
                            last: get(msg, LAST).is_truthy(),
                        }
                    }
                },
            },
            FLOW => Request::Flow {
                id: id.unwrap_or(0),
                model,
                of: FlowOf {
                    ids: typed::<Uint32Array>(msg, IDS, "token ids")
                        .map_err(fail)?
                        .to_vec(),
                    opts: serde_json::from_str(&get(msg, OPTS).as_string().unwrap_or_default())
                        .map_err(|e| fail(format!("options: {e}")))?,
                    query: number(msg, QUERY)
                        .ok_or_else(|| fail("a flow without its query".into()))?
                        as usize,
                    method: get(msg, METHOD)
                        .as_string()
                        .and_then(|m| Method::from_code(&m))
                        .ok_or_else(|| fail("a flow without a method it knows".into()))?,
                },
            },
            PROBE => Request::Probe {
                id: id.unwrap_or(0),
                model,
                ids: typed::<Uint32Array>(msg, IDS, "token ids")
                    .map_err(fail)?
                    .to_vec(),
                half: number(msg, HALF).ok_or_else(|| fail("a probe without its length".into()))?
                    as usize,
            },
            CRASH => Request::Crash,
            other => return Err(fail(format!("unknown message {other:?}"))),
        })
    }
}

impl Reply {
    /// The object to post and the buffers to transfer with it.
    pub fn to_js(&self) -> Result<(JsValue, Array), String> {
        let transfer = Array::new();
        let msg = match self {
            Reply::Loaded {
                load_id,
                files,
                error,
            } => {
                let mut fields = vec![
                    (
                        KIND,
                        Some(if error.is_some() { ERROR } else { LOADED }.into()),
                    ),
                    (LOAD_ID, Some((*load_id).into())),
                    (MESSAGE, error.clone().map(Into::into)),
                ];
                if let Some(f) = files {
                    fields.extend(f.fields());
                    for b in f.buffers() {
                        transfer.push(&b);
                    }
                }
                object(&fields)
            }
            Reply::Trace {
                id,
                header,
                data,
                incremental,
                worker_ms,
            } => {
                let header = serde_json::to_string(header).map_err(|e| e.to_string())?;
                transfer.push(&data.buffer());
                object(&[
                    (KIND, Some(TRACE.into())),
                    (ID, Some((*id).into())),
                    (HEADER, Some(header.into())),
                    (DATA, Some(data.clone().into())),
                    (INCREMENTAL, Some((*incremental).into())),
                    (WORKER_MS, Some((*worker_ms).into())),
                ])
            }
            Reply::Lens {
                id,
                data,
                worker_ms,
            }
            | Reply::Flow {
                id,
                data,
                worker_ms,
            }
            | Reply::Probe {
                id,
                data,
                worker_ms,
            } => {
                transfer.push(&data.buffer());
                let kind = match self {
                    Reply::Lens { .. } => LENS,
                    Reply::Flow { .. } => FLOW,
                    _ => PROBE,
                };
                object(&[
                    (KIND, Some(kind.into())),
                    (ID, Some((*id).into())),
                    (DATA, Some(data.clone().into())),
                    (WORKER_MS, Some((*worker_ms).into())),
                ])
            }
            Reply::Progress { id, layers_done } => object(&[
                (KIND, Some(PROGRESS.into())),
                (ID, Some((*id).into())),
                (LAYERS_DONE, Some((*layers_done).into())),
            ]),
            Reply::Error { id, message } => object(&[
                (KIND, Some(ERROR.into())),
                (ID, id.map(Into::into)),
                (MESSAGE, Some(message.as_str().into())),
            ]),
        };
        Ok((msg.into(), transfer))
    }

    /// The reply a message holds, or why it is not one.
    pub fn from_js(msg: &JsValue) -> Result<Reply, String> {
        let id = number(msg, ID);
        let kind = get(msg, KIND).as_string().unwrap_or_default();
        let load_id = number(msg, LOAD_ID);
        Ok(match (kind.as_str(), load_id) {
            (LOADED, Some(load_id)) | (ERROR, Some(load_id)) => Reply::Loaded {
                load_id,
                files: files(msg).ok(),
                error: (kind == ERROR).then(|| get(msg, MESSAGE).as_string().unwrap_or_default()),
            },
            (TRACE, _) => Reply::Trace {
                id: id.ok_or("a trace without its request's id")?,
                header: serde_json::from_str(&get(msg, HEADER).as_string().unwrap_or_default())
                    .map_err(|e| format!("the trace's header: {e}"))?,
                data: typed(msg, DATA, "numbers")?,
                incremental: get(msg, INCREMENTAL).is_truthy(),
                worker_ms: get(msg, WORKER_MS).as_f64().unwrap_or(f64::NAN),
            },
            (PROGRESS, _) => Reply::Progress {
                id: id.ok_or("a progress without its request's id")?,
                layers_done: number(msg, LAYERS_DONE).ok_or("a progress without its count")?,
            },
            (LENS, _) => Reply::Lens {
                id: id.ok_or("a lens without its request's id")?,
                data: typed(msg, DATA, "lens")?,
                worker_ms: get(msg, WORKER_MS).as_f64().unwrap_or(f64::NAN),
            },
            (FLOW, _) => Reply::Flow {
                id: id.ok_or("an attention flow without its request's id")?,
                data: typed(msg, DATA, "attention flow")?,
                worker_ms: get(msg, WORKER_MS).as_f64().unwrap_or(f64::NAN),
            },
            (PROBE, _) => Reply::Probe {
                id: id.ok_or("a probe's scores without its request's id")?,
                data: typed(msg, DATA, "scores")?,
                worker_ms: get(msg, WORKER_MS).as_f64().unwrap_or(f64::NAN),
            },
            (ERROR, None) => Reply::Error {
                id,
                message: get(msg, MESSAGE).as_string().unwrap_or_default(),
            },
            (other, _) => return Err(format!("unknown reply {other:?}")),
        })
    }
}
