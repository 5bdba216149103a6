//! attnlab's model crate: config, weights (safetensors), tokenizer, and the CPU reference
//! forward pass that records a full attention [`Trace`].
//!
//! ```text
//! text → tokens → token + position embedding → N × block → (ln_f) → logits → softmax
//! block (post-LN, the lesson's): x = LN(x + MHA(x)); x = LN(x + FFN(x))
//! block (pre-LN, GPT-2):        x = x + MHA(LN(x)); x = x + FFN(LN(x))
//! ```

pub mod colors;
pub mod config;
pub mod cpu;
pub mod earlier;
pub mod error;
pub mod export;
pub mod field;
pub mod flow;
pub mod forward;
pub mod gemm;
pub mod gguf;
pub mod inspect;
pub mod layout;
pub mod lens;
pub mod llama;
pub mod maps;
pub mod open;
pub mod qmatrix;
pub mod roles;
pub mod sample;
pub mod testing;
pub mod tokenizer;
pub mod trace;
pub mod weights;

use std::path::Path;

pub use config::{Activation, Config, LnPlacement};
pub use earlier::Earlier;
pub use error::{Error, Result};
pub use field::{Dims, Shape, Width};
pub use forward::{forward, forward_incremental, forward_kept, forward_watched};
pub use layout::TraceLayout;
pub use maps::{HeadRows, HeadVectors, Pooled};
pub use tokenizer::{TokenInfo, Tokenizer};
pub use trace::{AttentionOptions, Field, HeadMaps, HeadView, Keep, LayerTrace, Thumbnails, Trace};
pub use weights::{Loading, Model};

/// A model with its tokenizer, as a folder holds them.
#[derive(Debug)]
pub struct Bundle {
    pub model: Model,
    pub tokenizer: Tokenizer,
}

impl Bundle {
    /// Builds a bundle from the bytes of config.json, model.safetensors and tokenizer.json,
    /// checking that the tokenizer's ids fit the model.
    pub fn from_bytes(
        config_json: &[u8],
        safetensors: &[u8],
        tokenizer_json: &[u8],
    ) -> Result<Self> {
        let model = Model::from_bytes(config_json, safetensors)?;
        let tokenizer = Tokenizer::from_bytes(tokenizer_json)?;
        Bundle::new(model, tokenizer)
    }

    /// Pairs a model with a tokenizer, checking that the tokenizer's ids fit the model.
    pub fn new(model: Model, tokenizer: Tokenizer) -> Result<Self> {
        fits(&tokenizer, model.config.vocab_size)?;
        Ok(Bundle { model, tokenizer })
    }

    /// Loads `config.json`, `model.safetensors` and `tokenizer.json` from a folder.
    pub fn load_dir(dir: &Path) -> Result<Self> {
        let read = |name: &str| read_in(dir, name);
        Self::from_bytes(
            &read("config.json")?,
            &read("model.safetensors")?,
            &read("tokenizer.json")?,
        )
    }

    /// Tokenizes `text` and runs the CPU reference forward pass.
    pub fn trace(&self, text: &str, opts: &AttentionOptions) -> Result<(Vec<TokenInfo>, Trace)> {
        let tokens = self.tokenizer.encode(text)?;
        let ids: Vec<u32> = tokens.iter().map(|t| t.id).collect();
        let trace = forward(&self.model, &ids, opts)?;
        Ok((tokens, trace))
    }
}

/// Checks that the tokenizer's ids fit a model of `vocab` embeddings.
pub fn fits(tokenizer: &Tokenizer, vocab: usize) -> Result<()> {
    if tokenizer.vocab_size() > vocab {
        return Err(Error::VocabMismatch {
            tokenizer: tokenizer.vocab_size(),
            model: vocab,
        });
    }
    Ok(())
}

/// The bytes of file `name` in the folder `dir`; an error names the path.
pub(crate) fn read_in(dir: &Path, name: &str) -> Result<Vec<u8>> {
    let path = dir.join(name);
    std::fs::read(&path).map_err(|e| Error::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    })
}

/// The bundled GPT-2-layout model as the head-role probe runs it.
impl roles::Subject for Bundle {
    type Maps = Trace;
    fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }
    fn context(&self) -> usize {
        self.model.config.n_positions
    }
    fn heads(&self) -> (usize, usize) {
        (self.model.config.n_layer, self.model.config.n_head)
    }
    fn run(&self, ids: &[u32], opts: &AttentionOptions) -> Result<Trace> {
        forward(&self.model, ids, opts)
    }
}
