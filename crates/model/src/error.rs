use thiserror::Error;

/// Everything that can go wrong while loading a model or running it.
/// Every message names the thing at fault so that a user can act on it.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum Error {
    #[error("config.json: {0}")]
    Config(String),
    #[error("safetensors file: {0}")]
    Safetensors(String),
    #[error("tensor `{name}` is missing from the safetensors file")]
    MissingTensor { name: String },
    #[error("tensor `{name}` has shape {found:?}, but the config needs {expected:?}")]
    Shape {
        name: String,
        expected: Vec<usize>,
        found: Vec<usize>,
    },
    #[error("tensor `{name}` has dtype {found}; only F32, F16 and BF16 are supported")]
    Dtype { name: String, found: String },
    #[error("tensor `{name}` holds a non-finite value ({value}) at flat index {index}")]
    NonFinite {
        name: String,
        index: usize,
        value: f32,
    },
    #[error("tokenizer.json: {0}")]
    Tokenizer(String),
    #[error("tokenizer has {tokenizer} entries but the model's vocab_size is {model}")]
    VocabMismatch { tokenizer: usize, model: usize },
    #[error("the input has no tokens")]
    EmptyInput,
    #[error("token id {id} at position {position} is outside the vocabulary (size {vocab})")]
    TokenOutOfRange {
        id: u32,
        position: usize,
        vocab: usize,
    },
    #[error("invalid attention options: {0}")]
    Options(String),
    #[error("{path}: {message}")]
    Io { path: String, message: String },
    #[error("GGUF file: {0}")]
    Gguf(String),
    /// A run whose arrays would not fit the memory a run may take.
    #[error("{0}")]
    TooLarge(String),
}

pub type Result<T> = std::result::Result<T, Error>;
