//! attnlab's browser app: type a sentence and watch a small Transformer's self-attention,
//! recomputed at every keystroke on WebGPU (or the CPU reference where WebGPU is missing).

pub mod app;
pub mod compare;
pub mod components;
pub mod dom;
pub mod draw;
pub mod export;
pub mod i18n;
pub mod lesson;
pub mod lesson_text;
pub mod model_files;
pub mod runner;
pub mod state;
pub mod url_state;

pub use app::App;
