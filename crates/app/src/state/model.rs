//! The model and the backend that runs it (`ModelStatus`): loading, what the model is, the
//! backend and the user's preference, notices, the user's own and kept models.

use attnlab_model::lens::Normalised;
use attnlab_model::llama::{LlamaConfig, RopePairs};
use attnlab_model::Config;

use crate::engine::{Backend, Preference};
use crate::loader::OwnLoad;

impl ModelStatus {
    /// Where Hugging Face ids are fetched from.
    pub fn hub_base(&self) -> String {
        self.hub
            .clone()
            .unwrap_or_else(|| crate::loader::HUB.to_string())
    }
}

/// Progress of fetching the model files.
#[derive(Clone, Debug, PartialEq)]
pub enum Load {
    Fetching { loaded: u64, total: Option<u64> },
    Failed(String),
    Ready,
}

/// The loaded model's architecture and hyperparameters.
#[derive(Clone, Debug, PartialEq)]
pub enum Arch {
    /// GPT-2 layout (post- or pre-LN; `has_ln_f`: a final LayerNorm).
    Gpt2 { config: Config, has_ln_f: bool },
    /// The Llama family (RoPE, RMSNorm, grouped-query attention, SwiGLU); `name` as the
    /// file says it (e.g. "llama", "qwen2").
    Llama { config: LlamaConfig, name: String },
}

/// What a Llama-family model's attention adds to a head's views: RoPE's frequencies and
/// pair layout, and the grouping of query heads on key/value heads.
#[derive(Clone, Debug, PartialEq)]
pub struct LlamaAttn {
    pub inv_freq: std::rc::Rc<Vec<f32>>,
    pub pairs: RopePairs,
    pub n_head: usize,
    pub n_kv_head: usize,
}

impl LlamaAttn {
    /// The key/value head query head `h` reads, and the query heads that share it.
    pub fn kv_of(&self, h: usize) -> (usize, std::ops::Range<usize>) {
        let group = (self.n_head / self.n_kv_head.max(1)).max(1);
        let kv = h / group;
        (kv, kv * group..(kv + 1) * group)
    }
}

/// What the loaded model is.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelInfo {
    pub arch: Arch,
    pub n_params: usize,
}

impl ModelInfo {
    /// Layers and (query) heads per layer.
    pub fn heads(&self) -> (usize, usize) {
        match &self.arch {
            Arch::Gpt2 { config, .. } => (config.n_layer, config.n_head),
            Arch::Llama { config, .. } => (config.n_layer, config.n_head),
        }
    }

    /// The width of the residual stream.
    pub fn d_model(&self) -> usize {
        match &self.arch {
            Arch::Gpt2 { config, .. } => config.n_embd,
            Arch::Llama { config, .. } => config.n_embd,
        }
    }

    /// The most tokens one run reads.
    pub fn context(&self) -> usize {
        match &self.arch {
            Arch::Gpt2 { config, .. } => config.n_positions,
            Arch::Llama { config, .. } => config.context,
        }
    }

    /// RoPE and the key/value heads, for a Llama-family model.
    pub fn llama_attn(&self) -> Option<LlamaAttn> {
        match &self.arch {
            Arch::Gpt2 { .. } => None,
            Arch::Llama { config, .. } => Some(LlamaAttn {
                inv_freq: std::rc::Rc::new(config.inv_freq()),
                pairs: config.rope_pairs,
                n_head: config.n_head,
                n_kv_head: config.n_kv_head,
            }),
        }
    }

    /// How the logit lens reaches the output head.
    pub fn normalised(&self) -> Normalised {
        match &self.arch {
            Arch::Gpt2 { has_ln_f: true, .. } => Normalised::FinalLayerNorm,
            Arch::Gpt2 { .. } => Normalised::BlockOutputs,
            Arch::Llama { .. } => Normalised::FinalRmsNorm,
        }
    }
}

/// Where the model running came from.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum ModelSource {
    #[default]
    Bundled,
    /// A real model served beside the app (`loader::SMOLLM2`), by its id.
    Served(&'static str),
    /// A Hugging Face model id (`org/name`), its files from the Hub's resolve URLs.
    Hub(String),
    /// The user's files (their names).
    Own(String),
}

impl ModelSource {
    /// What the "loaded" line names.
    pub fn name(&self) -> String {
        match self {
            ModelSource::Bundled => "attnlab".into(),
            ModelSource::Served(id) => {
                crate::loader::served(id).map_or_else(|| id.to_string(), |s| s.label.to_string())
            }
            ModelSource::Own(name) => name.clone(),
            ModelSource::Hub(id) => id.clone(),
        }
    }

    /// How the URL names it (`model=`): a served model's id, `hf:org/name`; None for the
    /// bundled model and the user's files.
    pub fn code(&self) -> Option<String> {
        match self {
            ModelSource::Served(id) => Some(id.to_string()),
            ModelSource::Hub(id) => Some(format!("hf:{id}")),
            ModelSource::Bundled | ModelSource::Own(_) => None,
        }
    }

    /// The source a `model=` value names, if it is one.
    pub fn from_code(code: &str) -> Option<ModelSource> {
        if let Some(id) = code.strip_prefix("hf:") {
            return crate::loader::hub_id(id).ok().map(ModelSource::Hub);
        }
        crate::loader::served(code).map(|s| ModelSource::Served(s.id))
    }
}

/// A message that stays on screen until the next one.
#[derive(Clone, Debug, PartialEq)]
pub enum Notice {
    GpuFailed(String),
    WorkerRestarted(String),
}

/// The model and the backend that runs it.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelStatus {
    pub load: Load,
    pub info: Option<ModelInfo>,
    pub backend: Backend,
    /// The backend the user asked for.
    pub preference: Preference,
    pub notice: Option<Notice>,
    pub own: OwnLoad,
    /// Where the running model came from.
    pub source: ModelSource,
    /// The model the URL asks for (`model=`), until it is loaded or fails.
    pub asked: Option<ModelSource>,
    /// Where Hugging Face model ids are fetched from (`hub=`; `loader::HUB` when None).
    pub hub: Option<String>,
    /// A model of the user's kept on this device (`kept`), or why keeping one failed.
    pub kept: Option<Result<crate::kept::KeptInfo, String>>,
    /// Which engines run (the `n`th installed, a model loaded, bundled or the user's): new
    /// ones run the request again.
    pub engines: u64,
    /// URL parameters that were ignored (shown as plain text).
    pub url_notices: Vec<String>,
}

pub enum ModelAction {
    Progress {
        loaded: u64,
        total: Option<u64>,
    },
    LoadFailed(String),
    Loaded(ModelInfo),
    /// The engines of a model are running, on this backend: the `n`th installed.
    EngineReady(Backend, u64),
    /// The engines now running compute on another backend (the GPU joined them).
    Backend(Backend),
    SetPreference(Preference),
    Own(OwnLoad),
    /// What is kept on this device now (None: nothing), or why keeping failed.
    Kept(Option<Result<crate::kept::KeptInfo, String>>),
    /// Another model (the user's, a served one, the bundled one again) passed validation and
    /// replaced the current one.
    OwnLoaded(ModelInfo, ModelSource),
}
