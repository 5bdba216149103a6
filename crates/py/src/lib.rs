//! `attnlab._native`: the model crate's CPU reference engine for Python (the package's
//! `attnlab/__init__.py` wraps it). Arrays cross as little-endian `float32` bytes, which the
//! Python side turns into numpy arrays without a copy; documents (the head roles, the lens,
//! generation, the next tokens) cross as the CLI's JSON, so the two give the same numbers.
//!
//! Every long step (loading, a forward, the head-role probe) runs with the interpreter's lock
//! released; every error is a Python exception (`FileNotFoundError` for a missing path,
//! `ValueError` for the rest), never a crash of the kernel.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, TryLockError};

use attnlab_model::cpu::MASKED;
use attnlab_model::export;
use attnlab_model::inspect::Inspect;
use attnlab_model::maps::pool_map;
use attnlab_model::open::{open, Opened};
use attnlab_model::roles::{self, Probe, Subject};
use attnlab_model::sample::Sampling;
use attnlab_model::{
    with_opened, AttentionOptions, Bundle, Earlier, Error, Keep, Pooled, TokenInfo, Trace,
};
use pyo3::exceptions::{PyFileNotFoundError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyByteArray;

/// The bundled teaching model, compiled in (9.5 MB): `attnlab.load()` needs no file.
const BUNDLED: [&[u8]; 3] = [
    include_bytes!("../../../assets/model/config.json"),
    include_bytes!("../../../assets/model/model.safetensors"),
    include_bytes!("../../../assets/model/tokenizer.json"),
];

/// The most a `Run.attention()` array may take unless the caller allows more: every head's
/// weights of a 1,024-token text through the bundled model are 64 MiB, of SmolLM2 at 1,024
/// tokens 1.1 GiB.
const ATTENTION_LIMIT: u64 = 1 << 30;

fn py_err(e: Error) -> PyErr {
    match &e {
        Error::Io { path, .. } if !std::path::Path::new(path).exists() => {
            PyFileNotFoundError::new_err(e.to_string())
        }
        _ => PyValueError::new_err(e.to_string()),
    }
}

fn value_err(e: impl ToString) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// The attention options as keyword arguments name them (the CLI's `--temperature`,
/// `--no-scale`, `--no-mask`, `--ablate`).
fn options(
    temperature: f32,
    unscaled: bool,
    no_mask: bool,
    heads_off: Vec<(usize, usize)>,
) -> AttentionOptions {
    AttentionOptions {
        scale: !unscaled,
        temperature,
        causal_mask: !no_mask,
        ablate: heads_off.into_iter().collect::<BTreeSet<_>>(),
    }
}

/// What a run reads: a text, or token ids.
#[derive(FromPyObject)]
enum Input {
    Text(String),
    Ids(Vec<u32>),
}

/// Token ids as a run's tokens: each shown as the tokenizer shows it, with no place in a text.
fn ids_as_tokens(tok: &attnlab_model::Tokenizer, ids: &[u32]) -> Vec<TokenInfo> {
    ids.iter()
        .map(|&id| TokenInfo {
            id,
            piece: tok.inner().id_to_token(id).unwrap_or_default(),
            display: tok.display_id(id),
            span: (0, 0),
            partial: false,
        })
        .collect()
}

/// A model and its tokenizer.
#[pyclass(frozen, module = "attnlab._native")]
struct Model {
    inner: Arc<Opened>,
    /// Where it came from: a path, or "bundled".
    source: String,
}

#[pymethods]
impl Model {
    /// Reads the model at `path` (a folder or a .gguf file), or the bundled one.
    #[staticmethod]
    #[pyo3(signature = (path=None))]
    fn load(py: Python<'_>, path: Option<PathBuf>) -> PyResult<Model> {
        let (inner, source) = match path {
            None => {
                let [c, w, t] = BUNDLED;
                let b = Bundle::from_bytes(c, w, t).map_err(py_err)?;
                (Opened::Gpt2(b), "bundled".to_string())
            }
            Some(p) => {
                let opened = py.detach(|| open(&p)).map_err(py_err)?;
                (opened, p.display().to_string())
            }
        };
        Ok(Model {
            inner: Arc::new(inner),
            source,
        })
    }

    /// The model's sizes and layout, as JSON.
    fn info(&self) -> String {
        let m = &*self.inner;
        let (n_layer, n_head) = m.heads();
        let (d_model, d_k, vocab) = match m {
            Opened::Gpt2(b) => {
                let c = &b.model.config;
                (c.n_embd, c.n_embd / c.n_head, c.vocab_size)
            }
            Opened::Llama(b) => {
                let c = &b.model.config;
                (c.n_embd, c.head_dim, c.vocab_size)
            }
        };
        serde_json::json!({
            "source": self.source, "architecture": m.architecture(), "n_layer": n_layer,
            "n_head": n_head, "n_kv_head": m.n_kv_head(), "d_model": d_model, "d_k": d_k,
            "vocab": vocab, "context": m.context(),
        })
        .to_string()
    }

    /// The text's tokens (`[{"id", "display", "piece", "span", "partial"}]`), as JSON.
    fn tokenize(&self, text: &str) -> PyResult<String> {
        let tokens = with_opened!(&*self.inner, m => m.tokenizer().encode(text)).map_err(py_err)?;
        Ok(export::tokens_json(&tokens).to_string())
    }

    /// A forward on a text, or on token ids (e.g. a Hugging Face tokenizer's), keeping no
    /// maps (a head's are computed when asked). With `prev`, an earlier run of this model, the
    /// positions the two share at the start are taken from it, not computed again (typing at
    /// the end of a long text costs one position). `progress(done, layers)` is called after
    /// each block (a long text's progress bar); what it raises is ignored.
    #[pyo3(signature = (input, temperature=1.0, unscaled=false, no_mask=false, heads_off=Vec::new(), prev=None, progress=None))]
    #[allow(clippy::too_many_arguments)]
    fn run(
        &self,
        py: Python<'_>,
        input: Input,
        temperature: f32,
        unscaled: bool,
        no_mask: bool,
        heads_off: Vec<(usize, usize)>,
        prev: Option<Bound<'_, Run>>,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<Run> {
        let opts = options(temperature, unscaled, no_mask, heads_off);
        let m = &*self.inner;
        // another model's run shares nothing with this one
        let prev = prev
            .as_ref()
            .map(Bound::get)
            .filter(|r| Arc::ptr_eq(&r.model, &self.inner));
        let earlier = prev.map(|r| &r.trace);
        let n_layer = m.heads().0;
        let mut layer_done = |l: usize| {
            if let Some(f) = &progress {
                Python::attach(|py| {
                    let _ = f.call1(py, (l + 1, n_layer));
                });
            }
        };
        let (tokens, (trace, incremental)) = py
            .detach(|| {
                with_opened!(m, b => {
                    let tokens = match &input {
                        Input::Text(text) => b.tokenizer().encode(text)?,
                        Input::Ids(ids) => ids_as_tokens(b.tokenizer(), ids),
                    };
                    let ids: Vec<u32> = tokens.iter().map(|t| t.id).collect();
                    let traced = b.traced().trace_watched(
                        earlier.map(Earlier::Borrowed),
                        &ids,
                        &opts,
                        Keep::Streams,
                        &mut layer_done,
                    )?;
                    Ok::<_, Error>((tokens, traced))
                })
            })
            .map_err(py_err)?;
        Ok(Run {
            model: Arc::clone(&self.inner),
            tokens,
            trace,
            incremental,
        })
    }

    /// Every head's role scores: the text roles averaged over `texts`, the probe's from a
    /// repeated random-token sequence (`attnlab heads --format json`), as JSON.
    #[pyo3(signature = (texts, probe_len, seed, temperature=1.0, unscaled=false, no_mask=false, heads_off=Vec::new()))]
    #[allow(clippy::too_many_arguments)]
    fn heads(
        &self,
        py: Python<'_>,
        texts: Vec<String>,
        probe_len: usize,
        seed: u64,
        temperature: f32,
        unscaled: bool,
        no_mask: bool,
        heads_off: Vec<(usize, usize)>,
    ) -> PyResult<String> {
        let opts = options(temperature, unscaled, no_mask, heads_off);
        let m = &*self.inner;
        py.detach(|| {
            // the probe alone runs without these options: they are checked here, as the CLI does
            let (n_layer, n_head) = m.heads();
            opts.validate_for(n_layer, n_head)?;
            with_opened!(m, b => {
                let probe = Probe::new(b.tokenizer(), probe_len, seed, b.context());
                let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
                let report = roles::measure(b, &refs, &probe, &opts, |_, _| {})?;
                Ok(export::roles_json(b.tokenizer(), &report).to_string())
            })
        })
        .map_err(py_err)
    }

    /// The logit lens at `pos` (default: the last token), `top` tokens a stage
    /// (`attnlab lens --format json`), as JSON.
    #[pyo3(signature = (text, pos=None, top=5, temperature=1.0, unscaled=false, no_mask=false, heads_off=Vec::new()))]
    #[allow(clippy::too_many_arguments)]
    fn lens(
        &self,
        py: Python<'_>,
        text: &str,
        pos: Option<usize>,
        top: usize,
        temperature: f32,
        unscaled: bool,
        no_mask: bool,
        heads_off: Vec<(usize, usize)>,
    ) -> PyResult<String> {
        let opts = options(temperature, unscaled, no_mask, heads_off);
        let m = &*self.inner;
        py.detach(|| {
            with_opened!(m, b => {
                let (tokens, tr) = b.trace_text(text, &opts, Keep::Streams).map_err(py_err)?;
                let pos = export::position(&tr, pos, "position").map_err(value_err)?;
                let lens = b.lens(&tr, pos, top.max(1)).map_err(py_err)?;
                let shown = &export::run_tokens(&tokens, &tr)[pos].display;
                Ok(export::lens_json(b.tokenizer(), shown, &lens).to_string())
            })
        })
    }

    /// `steps` tokens appended to `text`, greedy or sampled (`attnlab generate --format
    /// json`), as JSON.
    #[pyo3(signature = (text, steps=16, temperature=1.0, top_k=None, top_p=None, seed=0, greedy=false))]
    #[allow(clippy::too_many_arguments)]
    fn generate(
        &self,
        py: Python<'_>,
        text: &str,
        steps: usize,
        temperature: f32,
        top_k: Option<usize>,
        top_p: Option<f32>,
        seed: u64,
        greedy: bool,
    ) -> PyResult<String> {
        let sampling = Sampling {
            greedy,
            temperature,
            top_k,
            top_p,
            seed,
        };
        if !(1..=1024).contains(&steps) {
            return Err(value_err(format!("steps must be 1…1024, got {steps}")));
        }
        let m = &*self.inner;
        py.detach(|| {
            with_opened!(m, b => {
                let ids = b.tokenizer().ids(text).map_err(py_err)?;
                if ids.is_empty() {
                    return Err(value_err("the text has no tokens: generation starts from at least one"));
                }
                let g = b.generate(&ids, steps, &sampling, |_| {}).map_err(py_err)?;
                let all: Vec<u32> = ids.iter().chain(&g.ids).copied().collect();
                let full = b.tokenizer().inner().decode(&all, false).map_err(value_err)?;
                Ok(export::generated_json(b.tokenizer(), text, &g, &full, &sampling).to_string())
            })
        })
    }
}

/// `values` as little-endian float32 bytes, masked entries (`cpu::MASKED`) as −∞ when
/// `masked` says so.
fn write_f32(out: &mut [u8], values: &[f32], masked: bool) {
    for (o, &v) in out.chunks_exact_mut(4).zip(values) {
        let v = if masked && v == MASKED {
            f32::NEG_INFINITY
        } else {
            v
        };
        o.copy_from_slice(&v.to_le_bytes());
    }
}

/// `values` as a `bytearray` of float32s, which numpy wraps writable without a copy.
fn bytes<'py>(py: Python<'py>, values: &[f32], masked: bool) -> PyResult<Bound<'py, PyByteArray>> {
    PyByteArray::new_with(py, values.len() * 4, |out| {
        write_f32(out, values, masked);
        Ok(())
    })
}

/// One head's role scores as JSON (`export::scores_json`) with the strongest role that
/// reaches its threshold (`role`, or null).
fn scores_json(s: &roles::Scores) -> serde_json::Value {
    let mut m = export::scores_json(s);
    m.insert(
        "role".into(),
        serde_json::json!(s.strongest().map(|(r, _)| r.code())),
    );
    serde_json::Value::Object(m)
}

/// Calls `f` with each (T, T) map of `weights` (float32 bytes, `heads` maps one after
/// another), one map at a time (never a second copy of the whole tensor), the interpreter's
/// lock released.
fn each_map<R: Send>(
    py: Python<'_>,
    weights: &[u8],
    heads: usize,
    t: usize,
    f: impl Fn(&[f32]) -> R + Send + Sync,
) -> PyResult<Vec<R>> {
    let need = t
        .checked_mul(t)
        .and_then(|n| n.checked_mul(heads))
        .and_then(|n| n.checked_mul(4));
    if t == 0 || need != Some(weights.len()) {
        return Err(value_err(format!(
            "{} bytes are not {heads} maps of {t} × {t} float32",
            weights.len()
        )));
    }
    Ok(py.detach(|| {
        let mut map = vec![0f32; t * t];
        weights
            .chunks_exact(t * t * 4)
            .map(|bytes| {
                for (w, b) in map.iter_mut().zip(bytes.chunks_exact(4)) {
                    *w = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                }
                f(&map)
            })
            .collect()
    }))
}

/// The five text roles of each (T, T) map in `weights` (float32 bytes, `heads` maps one
/// after another), as a JSON list (`roles::head_scores`): what `attnlab.view` shows for
/// attention computed elsewhere.
#[pyfunction]
fn text_roles(
    py: Python<'_>,
    weights: &[u8],
    heads: usize,
    t: usize,
    causal: bool,
) -> PyResult<String> {
    let out = each_map(py, weights, heads, t, |w| {
        scores_json(&roles::head_scores(w, t, causal))
    })?;
    Ok(serde_json::Value::Array(out).to_string())
}

/// Each (T, T) map of `weights` pooled to at most `side` × `side` cells as the engine pools
/// a run's heads (`maps::pool_map`): (span, cells, the cells as float32 bytes).
#[pyfunction]
fn pool_maps<'py>(
    py: Python<'py>,
    weights: &[u8],
    heads: usize,
    t: usize,
    side: usize,
) -> PyResult<(usize, usize, Bound<'py, PyByteArray>)> {
    if !(1..=MAX_SIDE).contains(&side) {
        return Err(value_err(format!("side must be 1…{MAX_SIDE}, got {side}")));
    }
    let pooled = each_map(py, weights, heads, t, |w| pool_map(w, t, side))?;
    let (span, cells) = pooled.first().map_or((1, 0), |(s, c, _)| (*s, *c));
    let cells_all: Vec<f32> = pooled.into_iter().flat_map(|(_, _, c)| c).collect();
    Ok((span, cells, bytes(py, &cells_all, false)?))
}

/// The most cells a thumbnail's side may have.
const MAX_SIDE: usize = 1024;

/// Every head's weights pooled small, kept from run to run of one text as it is edited: only
/// the rows a run changed are pooled again (the page's heads grid does the same).
#[pyclass(frozen, module = "attnlab._native")]
struct Pooler {
    pooled: Mutex<Pooled>,
}

#[pymethods]
impl Pooler {
    #[new]
    fn new(side: usize) -> PyResult<Pooler> {
        if !(1..=MAX_SIDE).contains(&side) {
            return Err(value_err(format!("side must be 1…{MAX_SIDE}, got {side}")));
        }
        Ok(Pooler {
            pooled: Mutex::new(Pooled::new(side)),
        })
    }

    /// The thumbnails of `run` (`Run.thumbnails`' four values), pooling only the rows that
    /// differ from the last run given.
    fn update<'py>(
        &self,
        py: Python<'py>,
        run: &Bound<'py, Run>,
    ) -> PyResult<(usize, usize, Bound<'py, PyByteArray>, String)> {
        let trace = &run.get().trace;
        // never wait for the lock while holding the interpreter's (the holder, detached,
        // needs it back to finish): a second thread gets an error instead
        let mut guard = self.pooled.try_lock().map_err(|e| match e {
            TryLockError::WouldBlock => value_err("this Pooler is busy in another thread"),
            TryLockError::Poisoned(_) => value_err("a pooling failed before: make a new Pooler"),
        })?;
        let pooled: &mut Pooled = &mut guard;
        let th = py
            .detach(|| {
                pooled.update(trace)?;
                Ok::<_, Error>(pooled.thumbnails())
            })
            .map_err(py_err)?;
        thumbnails_out(py, &th)
    }
}

/// Thumbnails as Python takes them: (span, cells, the cells as float32 bytes, each head's
/// roles as JSON).
fn thumbnails_out<'py>(
    py: Python<'py>,
    th: &attnlab_model::Thumbnails,
) -> PyResult<(usize, usize, Bound<'py, PyByteArray>, String)> {
    let roles: Vec<serde_json::Value> = roles::pooled_scores(th).iter().map(scores_json).collect();
    Ok((
        th.span,
        th.cells,
        bytes(py, &th.weights, false)?,
        serde_json::Value::Array(roles).to_string(),
    ))
}

/// One forward's result: the tokens, the kept vectors, the next-token distribution.
#[pyclass(frozen, module = "attnlab._native")]
struct Run {
    model: Arc<Opened>,
    tokens: Vec<TokenInfo>,
    trace: Trace,
    /// Whether positions were taken from an earlier run (`Model.run`'s `prev`).
    incremental: bool,
}

#[pymethods]
impl Run {
    /// The tokens that were run (after any dropped to fit the context), as JSON.
    fn tokens(&self) -> String {
        export::tokens_json(export::run_tokens(&self.tokens, &self.trace)).to_string()
    }

    /// Whether positions were taken from the earlier run given as `prev`.
    fn incremental(&self) -> bool {
        self.incremental
    }

    /// How many tokens at the start of the text were dropped to fit the context.
    fn dropped(&self) -> usize {
        self.trace.dropped
    }

    /// (layers, heads, tokens, d_k, vocabulary).
    fn dims(&self) -> (usize, usize, usize, usize, usize) {
        let d = self.trace.dims;
        (d.n_layer, d.n_head, d.t, d.d_k, d.vocab)
    }

    /// The options the run used, as JSON.
    fn options(&self) -> String {
        serde_json::to_string(&self.trace.options).unwrap_or_default()
    }

    /// One head's four maps (scores, scaled, masked, weights; T × T each) and its q, k, v
    /// and output (T × d_k each), as float32 bytes.
    fn head<'py>(
        &self,
        py: Python<'py>,
        layer: usize,
        head: usize,
    ) -> PyResult<Vec<Bound<'py, PyByteArray>>> {
        let mut all = self.head_rows(py, layer, head, 0, self.trace.dims.t)?;
        all.extend(self.head_vectors(py, layer, head)?);
        Ok(all)
    }

    /// One head's four maps for the query rows `start..end` only (each (rows, T)).
    fn head_rows<'py>(
        &self,
        py: Python<'py>,
        layer: usize,
        head: usize,
        start: usize,
        end: usize,
    ) -> PyResult<Vec<Bound<'py, PyByteArray>>> {
        let tr = &self.trace;
        let rows = py
            .detach(|| tr.head_rows(layer, head, start..end))
            .map_err(py_err)?;
        [
            (&rows.scores, false),
            (&rows.scaled, false),
            (&rows.masked, true),
            (&rows.weights, false),
        ]
        .into_iter()
        .map(|(m, masked)| bytes(py, m, masked))
        .collect()
    }

    /// One head's q, k, v and output (each (T, d_k)), without its maps.
    fn head_vectors<'py>(
        &self,
        py: Python<'py>,
        layer: usize,
        head: usize,
    ) -> PyResult<Vec<Bound<'py, PyByteArray>>> {
        let v = self.trace.head_vectors(layer, head).map_err(py_err)?;
        [&v.q, &v.k, &v.v, &v.head_out]
            .into_iter()
            .map(|x| bytes(py, x, false))
            .collect()
    }

    /// Every head's weights, (layers, heads, T, T) as float32 bytes; refused past
    /// `max_bytes`, with the size it would need.
    #[pyo3(signature = (max_bytes=ATTENTION_LIMIT))]
    fn attention<'py>(&self, py: Python<'py>, max_bytes: u64) -> PyResult<Bound<'py, PyByteArray>> {
        let d = self.trace.dims;
        let per_head = d.t * d.t;
        let need = (d.n_layer * d.n_head * per_head) as u64 * 4;
        if need > max_bytes {
            return Err(value_err(format!(
                "every head's attention at {} tokens is {:.1} MiB ({} layers × {} heads × {}²), \
                 past the limit of {:.1} MiB: read one head with run.head(layer, head), or \
                 raise the limit with run.attention(max_bytes=…)",
                d.t,
                need as f64 / 1048576.0,
                d.n_layer,
                d.n_head,
                d.t,
                max_bytes as f64 / 1048576.0
            )));
        }
        let tr = &self.trace;
        let mut failed = None;
        let out = PyByteArray::new_with(py, need as usize, |out| {
            // the maps computed head by head straight into Python's buffer
            py.detach(|| {
                for (i, chunk) in out.chunks_exact_mut(per_head * 4).enumerate() {
                    let (l, h) = (i / d.n_head, i % d.n_head);
                    match tr.head_rows(l, h, 0..d.t) {
                        Ok(rows) => write_f32(chunk, &rows.weights, false),
                        Err(e) => {
                            failed = Some(e);
                            return;
                        }
                    }
                }
            });
            Ok(())
        })?;
        match failed {
            Some(e) => Err(py_err(e)),
            None => Ok(out),
        }
    }

    /// Every head's weights pooled to at most `side` × `side` cells (`attnlab thumbnails`):
    /// (span, cells, the cells as float32 bytes, each head's text roles as JSON).
    fn thumbnails<'py>(
        &self,
        py: Python<'py>,
        side: usize,
    ) -> PyResult<(usize, usize, Bound<'py, PyByteArray>, String)> {
        if side == 0 {
            return Err(value_err("side must be at least 1"));
        }
        let tr = &self.trace;
        // past T cells a side, every cell is one weight already
        let side = side.min(tr.dims.t);
        let th = py.detach(|| tr.thumbnails(side)).map_err(py_err)?;
        thumbnails_out(py, &th)
    }

    /// The next-token logits after the last token (V), as float32 bytes.
    fn logits<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyByteArray>> {
        bytes(py, self.trace.last_logits(), false)
    }

    /// The next-token probabilities after the last token (V), as float32 bytes.
    fn probs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyByteArray>> {
        let t = self.trace.dims.t;
        bytes(py, self.trace.probs_at(t - 1), false)
    }

    /// The `k` likeliest next tokens (`[{"id", "display", "prob"}]`), as JSON.
    fn top(&self, k: usize) -> String {
        let display = |id: u32| with_opened!(&*self.model, m => m.tokenizer().display_id(id));
        export::top_json(&display, &self.trace, k).to_string()
    }
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Model>()?;
    m.add_class::<Run>()?;
    m.add_class::<Pooler>()?;
    m.add_function(wrap_pyfunction!(text_roles, m)?)?;
    m.add_function(wrap_pyfunction!(pool_maps, m)?)?;
    m.add("PROBE_LEN", roles::PROBE_LEN)?;
    m.add("PROBE_SEED", roles::PROBE_SEED)?;
    m.add("VERSION", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
