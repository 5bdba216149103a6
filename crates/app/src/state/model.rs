//! The model and the backend that runs it (`ModelStatus`): loading, what the model is, the
//! backend and the user's preference, notices, the user's own and kept models.

use attnlab_model::Config;

use crate::engine::{Backend, Preference};
use crate::loader::OwnLoad;

/// Progress of fetching the model files.
#[derive(Clone, Debug, PartialEq)]
pub enum Load {
    Fetching { loaded: u64, total: Option<u64> },
    Failed(String),
    Ready,
}

/// What the loaded model is.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelInfo {
    pub config: Config,
    pub has_ln_f: bool,
    pub n_params: usize,
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
    SetPreference(Preference),
    Own(OwnLoad),
    /// What is kept on this device now (None: nothing), or why keeping failed.
    Kept(Option<Result<crate::kept::KeptInfo, String>>),
    /// The user's model passed validation and replaced the current one.
    OwnLoaded(ModelInfo, String),
}
