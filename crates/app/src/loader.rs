//! Getting a model into the page: fetching the bundled one with a progress bar, reading the
//! files a user dropped or picked, and validating them one tensor at a time so that the page
//! keeps answering. What runs the model afterwards is `use_engine`'s business.

use attnlab_model::Bundle;

use crate::dom::{self, now};
use crate::model_files;

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

/// Reads the model files among `files` (reporting progress as `OwnLoad`s); returns the bytes
/// and the names of the three files used.
pub async fn read_own(
    files: &[web_sys::File],
    status: &impl Fn(OwnLoad),
) -> Result<(ModelBytes, String), OwnLoad> {
    let names: Vec<String> = files.iter().map(|f| f.name()).collect();
    let [c, w, t] = model_files::pick(&names).map_err(|missing| OwnLoad::Missing {
        missing,
        got: names.clone(),
    })?;
    let total: u64 = [c, w, t].iter().map(|&i| files[i].size() as u64).sum();
    let mut bytes = Vec::new();
    let mut base = 0u64;
    for i in [c, w, t] {
        status(OwnLoad::Reading {
            loaded: base,
            total,
        });
        let b = dom::read_file(&files[i], |n| {
            status(OwnLoad::Reading {
                loaded: base + n,
                total,
            })
        })
        .await
        .map_err(OwnLoad::Failed)?;
        base += b.len() as u64;
        bytes.push(b);
    }
    let [config, weights, tokenizer]: [Vec<u8>; 3] = bytes
        .try_into()
        .map_err(|_| OwnLoad::Failed("three files".into()))?;
    let name = [c, w, t].map(|i| names[i].clone()).join(" + ");
    Ok((
        ModelBytes {
            config,
            weights,
            tokenizer,
        },
        name,
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
    Reading {
        loaded: u64,
        total: u64,
    },
    /// Validating: tensors checked so far of all.
    Checking {
        done: usize,
        total: usize,
    },
    /// The files given do not hold all three model files.
    Missing {
        missing: Vec<String>,
        got: Vec<String>,
    },
    /// Validation failed; the current model stays.
    Failed(String),
    /// The user's model replaced the previous one (its files' names).
    Loaded(String),
}
