//! A model on disk, whatever its layout, as the CLI's `--model` and the Python package's
//! `attnlab.load(path)` take it: a `.gguf` file (the Llama family), a Hugging Face folder
//! whose config.json names a Llama-family type (llama, mistral, qwen2), or a GPT-2-layout
//! folder (config.json, model.safetensors, tokenizer.json).

use std::path::Path;

use crate::llama::{LlamaBundle, LlamaConfig};
use crate::{read_in, Bundle, Error, Result};

/// A model with its tokenizer, read by `open`.
pub enum Opened {
    Gpt2(Bundle),
    Llama(LlamaBundle),
}

/// Calls `$body` with `$m` bound to the opened model as `&impl Inspect`.
#[macro_export]
macro_rules! with_opened {
    ($opened:expr, $m:ident => $body:expr) => {
        match $opened {
            $crate::open::Opened::Gpt2($m) => $body,
            $crate::open::Opened::Llama($m) => $body,
        }
    };
}

/// Reads the model at `path`: a `.gguf` file, or a folder (see the module's text).
pub fn open(path: &Path) -> Result<Opened> {
    let is_gguf = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gguf"));
    if is_gguf {
        let bytes = std::fs::read(path).map_err(|e| Error::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        return LlamaBundle::from_gguf_bytes(&bytes).map(Opened::Llama);
    }
    if !path.is_dir() {
        return Err(Error::Io {
            path: path.display().to_string(),
            message: format!(
                "{}: a model is a folder with config.json, model.safetensors and \
                 tokenizer.json, or a .gguf file",
                if path.exists() {
                    "not a folder nor a .gguf file"
                } else {
                    "no such file or folder"
                }
            ),
        });
    }
    let config = read_in(path, "config.json")?;
    let ty = serde_json::from_slice::<serde_json::Value>(&config)
        .ok()
        .and_then(|j| j["model_type"].as_str().map(String::from));
    match ty {
        Some(t) if LlamaConfig::reads_model_type(&t) => {
            LlamaBundle::load_hf_dir(path).map(Opened::Llama)
        }
        _ => Bundle::load_dir(path).map(Opened::Gpt2),
    }
}

impl Opened {
    /// The layout read: "gpt2" or "llama".
    pub fn architecture(&self) -> &'static str {
        match self {
            Opened::Gpt2(_) => "gpt2",
            Opened::Llama(_) => "llama",
        }
    }

    /// The number of key/value heads per layer (the query heads' for GPT-2 layout).
    pub fn n_kv_head(&self) -> usize {
        match self {
            Opened::Gpt2(b) => b.model.config.n_head,
            Opened::Llama(b) => b.model.config.n_kv_head,
        }
    }

    /// The most tokens one run reads.
    pub fn context(&self) -> usize {
        with_opened!(self, m => crate::roles::Subject::context(m))
    }

    /// Layers, and query heads per layer.
    pub fn heads(&self) -> (usize, usize) {
        with_opened!(self, m => crate::roles::Subject::heads(m))
    }
}
