//! Getting a model into the page: fetching the bundled one or a served real model
//! (SmolLM2) with a progress bar, reading the files a user dropped or picked, and checking
//! them before anything is replaced:
//!
//! - a GPT-2-layout model is validated on the page one tensor at a time (the page keeps it
//!   for the WebGPU engine);
//! - a Llama-family model (a GGUF file, or a Hugging Face Llama/Mistral/Qwen2 folder) has
//!   its hyperparameters and tokenizer read here, from the file's head; its weights stay
//!   outside wasm memory and go to the CPU worker, which reads and checks them.
//!
//! What runs the model afterwards is `use_engine`'s business.

use attnlab_model::llama::hf::shard_names;
use attnlab_model::llama::{LlamaBundle, LlamaConfig};
use attnlab_model::{Bundle, Tokenizer};
use js_sys::Uint8Array;

use crate::dom::{self, now};
use crate::engine::protocol::{read_gguf_head, Files, Format};
use crate::kept::KeepFile;
use crate::model_files::{self, Weights};

/// A real model the serve command puts beside the app (`scripts/serve.sh`): its id in the
/// URL (`model=`), its file, and how the menu names it.
pub struct Served {
    pub id: &'static str,
    pub url: &'static str,
    pub label: &'static str,
}

impl Served {
    /// Its file's name.
    pub fn file_name(&self) -> &'static str {
        self.url.rsplit('/').next().unwrap_or(self.url)
    }
}

pub const SMOLLM2: Served = Served {
    id: "smollm2",
    url: "models/SmolLM2-135M-Instruct.Q4_1.gguf",
    label: "SmolLM2-135M-Instruct · 98 MB · Apache-2.0",
};

/// Where Hugging Face model ids are fetched from, unless the URL names another base (`hub=`,
/// a path on this origin such as a mirror laid out the same way; the page's CSP allows this
/// origin and huggingface.co).
pub const HUB: &str = "https://huggingface.co";

/// A Hugging Face model id, `org/name` (letters, digits, `.`, `_`, `-`), or why not.
pub fn hub_id(id: &str) -> Result<String, String> {
    let id = id.trim();
    let part = |p: &str| {
        !p.is_empty()
            && p.len() <= 96
            && !p.starts_with('.')
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
    };
    match id.split_once('/') {
        Some((org, name)) if part(org) && part(name) => Ok(id.to_string()),
        _ => Err(format!(
            "{id:?} is not a Hugging Face model id (org/name, e.g. HuggingFaceTB/SmolLM2-135M-Instruct)"
        )),
    }
}

/// A Hub base URL: https://…, or a path on this origin (`/…`, `./…`); without its last `/`.
pub fn hub_base(base: &str) -> Result<String, String> {
    let b = base.trim().trim_end_matches('/');
    let ok = (b.starts_with("https://") || b.starts_with('/') || b.starts_with("./"))
        && !b.contains(char::is_whitespace)
        && !b.is_empty();
    if ok {
        Ok(b.to_string())
    } else {
        Err(format!(
            "{base:?} is not a Hub address (https://… or a path on this site)"
        ))
    }
}

/// The URL of `file` of model `id` at `base`, as the Hub lays it out.
pub fn hub_url(base: &str, id: &str, file: &str) -> String {
    format!("{base}/{id}/resolve/main/{file}")
}

/// A sharded model's list of shards, beside them.
const INDEX: &str = "model.safetensors.index.json";

/// The page reads a GPT-2-layout model from one file.
fn gpt2_sharded(n: usize) -> String {
    format!(
        "a GPT-2-layout model in {n} shards is not read: give its weights as one model.safetensors"
    )
}

/// Fetches a Hugging Face model's config.json, tokenizer.json and weights (model.safetensors,
/// or the shards its model.safetensors.index.json names) from the Hub's resolve URLs,
/// reporting (bytes so far, total); the weights of a Llama-family model stay outside wasm
/// memory. With `keep`, also the files to keep on this device once the model runs.
pub async fn fetch_hub(
    base: &str,
    id: &str,
    keep: bool,
    progress: impl Fn(u64, Option<u64>),
) -> Result<(Own, Option<Vec<KeepFile>>), String> {
    let url = |f: &str| hub_url(base, id, f);
    let (config_url, tokenizer_url) = (url("config.json"), url("tokenizer.json"));
    let mut kept = Vec::new();
    // the weights: model.safetensors (opened), or the shards an index names (each opened
    // when the one before it is read, their size the index's total)
    let (names, mut single, weights_size) = match dom::open(&url("model.safetensors")).await {
        Ok((resp, size)) => (vec!["model.safetensors".to_string()], Some(resp), size),
        Err(e) => {
            let Ok((index, _)) = dom::open(&url(INDEX)).await else {
                return Err(e);
            };
            let index = dom::read_body(&url(INDEX), index, |_| {}).await?;
            let shards = shard_names(&index).map_err(|e| format!("{id}: {e}"))?;
            let total = serde_json::from_slice::<serde_json::Value>(&index)
                .ok()
                .and_then(|j| j["metadata"]["total_size"].as_u64());
            if keep {
                kept.push(KeepFile::from_bytes(INDEX, &index)?);
            }
            (shards, None, total)
        }
    };
    let config = dom::open(&config_url).await?;
    let tokenizer = dom::open(&tokenizer_url).await?;
    let total = [config.1, tokenizer.1, weights_size]
        .into_iter()
        .sum::<Option<u64>>();
    let config = dom::read_body(&config_url, config.0, |n| progress(n, total)).await?;
    let base_t = config.len() as u64;
    let tokenizer =
        dom::read_body(&tokenizer_url, tokenizer.0, |n| progress(base_t + n, total)).await?;
    let mut done = base_t + tokenizer.len() as u64;
    if keep {
        kept.push(KeepFile::from_bytes("config.json", &config)?);
        kept.push(KeepFile::from_bytes("tokenizer.json", &tokenizer)?);
    }
    let llama = model_type(&config).is_some_and(|t| LlamaConfig::reads_model_type(&t));
    if llama {
        let mut files = Vec::new();
        for name in &names {
            let u = url(name);
            let (resp, size) = match single.take() {
                Some(resp) => (resp, weights_size),
                None => dom::open(&u).await?,
            };
            let size = size.ok_or_else(|| format!("{u}: the server did not say its size"))?;
            let bytes = dom::read_body_js(&u, resp, size, |n| progress(done + n, total)).await?;
            done += size;
            if keep {
                kept.push(KeepFile::from_js(name, &bytes)?);
            }
            files.push(bytes);
        }
        dom::next_task().await;
        let prepared = prepare_hf_llama(&config, &tokenizer, files)?;
        return Ok((Own::Llama(Box::new(prepared)), keep.then_some(kept)));
    }
    let Some(resp) = single else {
        return Err(format!("{id}: {}", gpt2_sharded(names.len())));
    };
    let weights = dom::read_body(&url(&names[0]), resp, |n| progress(done + n, total)).await?;
    if keep {
        kept.push(KeepFile::from_bytes(&names[0], &weights)?);
    }
    let own = Own::Gpt2(ModelBytes {
        config,
        weights,
        tokenizer,
    });
    Ok((own, keep.then_some(kept)))
}

/// The served models, by id.
pub const SERVED: [&Served; 1] = [&SMOLLM2];

/// The served model of this id.
pub fn served(id: &str) -> Option<&'static Served> {
    SERVED.into_iter().find(|s| s.id == id)
}

/// A model read and checked by the page, ready for its engines.
pub enum Prepared {
    /// GPT-2 layout, validated whole (the WebGPU engine gets the model, the worker its files).
    Gpt2 { bundle: Bundle, bytes: ModelBytes },
    /// A Llama-family model: what the page read of it (its architecture's name as the file
    /// says it, e.g. "llama" or "qwen2"), and its files for the CPU worker.
    Llama {
        config: LlamaConfig,
        name: String,
        n_params: usize,
        tokenizer: Tokenizer,
        files: Files,
    },
}

impl Prepared {
    /// A served model's file (its GGUF file) to keep on this device, named `name`: a copy,
    /// since the file goes to the worker.
    pub fn keep_files(&self, name: &str) -> Result<Vec<KeepFile>, String> {
        match self {
            Prepared::Llama { files, .. } if files.format == Format::Gguf => {
                Ok(vec![KeepFile::from_js(name, files.one()?)?])
            }
            _ => Err("only a GGUF file is kept this way".into()),
        }
    }
}

/// Reads a GGUF file's hyperparameters and tokenizer from its head (checked against each
/// other and the file's length); the weights stay where they are, for the worker.
pub fn prepare_gguf(bytes: Uint8Array) -> Result<Prepared, String> {
    let (g, mut config, tokenizer) = read_gguf_head(&bytes, LlamaBundle::read_head)?;
    // Llama 3's RoPE scaling is a tensor: the angles the views show need it
    config
        .read_rope_factors(&g, &crate::engine::protocol::JsTensors(&bytes))
        .map_err(|e| e.to_string())?;
    let tied = g.tensor("output.weight").is_none();
    let qkv_bias = g.tensor("blk.0.attn_q.bias").is_some();
    let name = g
        .get("general.architecture")
        .and_then(|v| v.as_str())
        .unwrap_or("llama")
        .to_string();
    Ok(Prepared::Llama {
        n_params: config.n_params(tied, qkv_bias),
        config,
        name,
        tokenizer,
        files: Files {
            format: Format::Gguf,
            config: Uint8Array::new_with_length(0),
            weights: vec![bytes],
        },
    })
}

/// A Hugging Face Llama-family folder's config.json and tokenizer.json, checked against
/// each other; the safetensors' bytes (one file, or the shards) go to the worker.
pub fn prepare_hf_llama(
    config_json: &[u8],
    tokenizer_json: &[u8],
    weights: Vec<Uint8Array>,
) -> Result<Prepared, String> {
    let err = |e: attnlab_model::Error| e.to_string();
    let (config, qkv_bias, _, tied) = LlamaConfig::from_hf_json(config_json).map_err(err)?;
    let tokenizer = Tokenizer::from_bytes(tokenizer_json).map_err(err)?;
    attnlab_model::fits(&tokenizer, config.vocab_size).map_err(err)?;
    let name = model_type(config_json).unwrap_or_else(|| "llama".into());
    Ok(Prepared::Llama {
        n_params: config.n_params(tied, qkv_bias),
        config,
        name,
        tokenizer,
        files: Files {
            format: Format::HfLlama,
            config: Uint8Array::from(config_json),
            weights,
        },
    })
}

/// A config.json's `model_type`.
fn model_type(config_json: &[u8]) -> Option<String> {
    let j: serde_json::Value = serde_json::from_slice(config_json).ok()?;
    j["model_type"].as_str().map(str::to_string)
}

/// Fetches a served model's GGUF file, reporting (bytes so far, total), and reads its head.
pub async fn fetch_served(
    served: &Served,
    progress: impl Fn(u64, Option<u64>),
) -> Result<Prepared, String> {
    let (resp, size) = dom::open(served.url).await.map_err(|e| {
        format!(
            "{e} — the model is served beside the app by scripts/serve.sh, which fetches it once"
        )
    })?;
    let size = size.ok_or_else(|| format!("{}: the server did not say its size", served.url))?;
    let bytes = dom::read_body_js(served.url, resp, size, |n| progress(n, Some(size))).await?;
    dom::next_task().await;
    prepare_gguf(bytes)
}

/// Where the page finds the model (copied next to index.html by Trunk).
pub const MODEL_FILES: [&str; 3] = [
    "model/config.json",
    "model/model.safetensors",
    "model/tokenizer.json",
];

/// The three files of a model: config.json, the safetensors weights, tokenizer.json.
pub struct ModelBytes {
    pub config: Vec<u8>,
    pub weights: Vec<u8>,
    pub tokenizer: Vec<u8>,
}

/// Fetches the bundled model, reporting (bytes so far, total if known).
pub async fn fetch_bundled(progress: impl Fn(u64, Option<u64>)) -> Result<ModelBytes, String> {
    let mut opened = Vec::new();
    for url in MODEL_FILES {
        opened.push((url, dom::open(url).await?));
    }
    let total = opened
        .iter()
        .map(|(_, (_, size))| *size)
        .sum::<Option<u64>>();
    let mut files = Vec::new();
    let mut base = 0u64;
    for (url, (resp, _)) in opened {
        let bytes = dom::read_body(url, resp, |n| progress(base + n, total)).await?;
        base += bytes.len() as u64;
        files.push(bytes);
    }
    let [config, weights, tokenizer]: [Vec<u8>; 3] =
        files.try_into().map_err(|_| "three files".to_string())?;
    Ok(ModelBytes {
        config,
        weights,
        tokenizer,
    })
}

/// The user's files as read: a GPT-2-layout bundle (validated on the page next), or a
/// Llama-family model already checked as far as the page checks it.
pub enum Own {
    Gpt2(ModelBytes),
    Llama(Box<Prepared>),
}

/// Reads the model files among `files` (reporting progress as `OwnLoad`s): one `.gguf` file,
/// or config.json, the safetensors weights (one file, or a sharded model's index and shards)
/// and tokenizer.json. Returns what they hold, the names of the files used, and those files.
pub async fn read_own(
    files: &[web_sys::File],
    status: &impl Fn(OwnLoad),
) -> Result<(Own, String, Vec<web_sys::File>), OwnLoad> {
    let names: Vec<String> = files.iter().map(|f| f.name()).collect();
    let reading = |base: u64, total: u64| {
        move |n: u64| {
            status(OwnLoad::Reading {
                loaded: base + n,
                total,
            })
        }
    };
    if let Some(g) = model_files::pick_gguf(&names).map_err(OwnLoad::Failed)? {
        let total = files[g].size() as u64;
        status(OwnLoad::Reading { loaded: 0, total });
        let bytes = dom::read_file_js(&files[g], reading(0, total))
            .await
            .map_err(OwnLoad::Failed)?;
        status(OwnLoad::Checking { done: 0, total: 0 });
        dom::next_task().await;
        let prepared = prepare_gguf(bytes).map_err(OwnLoad::Failed)?;
        let used = vec![files[g].clone()];
        return Ok((Own::Llama(Box::new(prepared)), names[g].clone(), used));
    }
    let missing = |missing| OwnLoad::Missing {
        missing,
        got: names.clone(),
    };
    let picked = model_files::pick(&names).map_err(missing)?;
    let (c, t) = (picked.config, picked.tokenizer);
    // a sharded model's index (small) says which of the files are its shards
    let mut used = vec![files[c].clone(), files[t].clone()];
    let (weights, weights_name) = match picked.weights {
        Weights::One(w) => (vec![w], names[w].clone()),
        Weights::Sharded { index } => {
            let bytes = dom::read_file(&files[index], |_| {})
                .await
                .map_err(OwnLoad::Failed)?;
            let shards = shard_names(&bytes).map_err(|e| OwnLoad::Failed(e.to_string()))?;
            let found = model_files::shards_among(&shards, &names).map_err(missing)?;
            let name = format!("{} ({} shards)", names[index], found.len());
            used.push(files[index].clone());
            (found, name)
        }
    };
    used.extend(weights.iter().map(|&w| files[w].clone()));
    let size = |i: usize| files[i].size() as u64;
    let total: u64 = size(c) + size(t) + weights.iter().map(|&w| size(w)).sum::<u64>();
    let name = [names[c].clone(), weights_name, names[t].clone()].join(" + ");
    // the small files first: config.json says which kind of model the weights are
    status(OwnLoad::Reading { loaded: 0, total });
    let config = dom::read_file(&files[c], reading(0, total))
        .await
        .map_err(OwnLoad::Failed)?;
    let tokenizer = dom::read_file(&files[t], reading(size(c), total))
        .await
        .map_err(OwnLoad::Failed)?;
    let mut done = size(c) + size(t);
    let llama = model_type(&config).is_some_and(|t| LlamaConfig::reads_model_type(&t));
    if llama {
        let mut shards = Vec::new();
        for &w in &weights {
            let bytes = dom::read_file_js(&files[w], reading(done, total))
                .await
                .map_err(OwnLoad::Failed)?;
            done += size(w);
            shards.push(bytes);
        }
        status(OwnLoad::Checking { done: 0, total: 0 });
        dom::next_task().await;
        let prepared = prepare_hf_llama(&config, &tokenizer, shards).map_err(OwnLoad::Failed)?;
        return Ok((Own::Llama(Box::new(prepared)), name, used));
    }
    let [w] = weights[..] else {
        return Err(OwnLoad::Failed(gpt2_sharded(weights.len())));
    };
    let weights = dom::read_file(&files[w], reading(done, total))
        .await
        .map_err(OwnLoad::Failed)?;
    Ok((
        Own::Gpt2(ModelBytes {
            config,
            weights,
            tokenizer,
        }),
        name,
        used,
    ))
}

/// Validates a model one tensor at a time, letting the page paint (and answer) between
/// tensors; `checking(done, total)` reports the progress.
pub async fn validate(
    bytes: &ModelBytes,
    checking: impl Fn(usize, usize),
) -> Result<Bundle, String> {
    checking(0, 0);
    dom::next_task().await;
    let config = attnlab_model::Config::from_json(&bytes.config).map_err(|e| e.to_string())?;
    let tokenizer =
        attnlab_model::Tokenizer::from_bytes(&bytes.tokenizer).map_err(|e| e.to_string())?;
    let mut loading =
        attnlab_model::Loading::new(config, &bytes.weights).map_err(|e| e.to_string())?;
    let mut since = now();
    while !loading.step().map_err(|e| e.to_string())? {
        if now() - since > 30.0 {
            let (done, total) = loading.progress();
            checking(done, total);
            dom::next_task().await;
            since = now();
        }
    }
    let model = loading.finish().map_err(|e| e.to_string())?;
    Bundle::new(model, tokenizer).map_err(|e| e.to_string())
}

/// Loading a model the user dropped or picked.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum OwnLoad {
    #[default]
    Idle,
    /// Downloading a model (a served one, or the bundled one again).
    Fetching {
        loaded: u64,
        total: u64,
    },
    Reading {
        loaded: u64,
        total: u64,
    },
    /// Validating: tensors checked so far of all.
    Checking {
        done: usize,
        total: usize,
    },
    /// Writing the files of a model that runs to this device, as the user asked.
    Keeping,
    /// The files given do not hold a whole model: what is missing (a file, or shards the
    /// index names).
    Missing {
        missing: Vec<String>,
        got: Vec<String>,
    },
    /// Validation failed; the current model stays.
    Failed(String),
    /// The user's model replaced the previous one (its files' names).
    Loaded(String),
}
