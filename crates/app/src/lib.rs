//! attnlab's browser app: type a sentence and watch a small Transformer's self-attention,
//! recomputed at every keystroke on WebGPU (or the CPU reference where WebGPU is missing).

pub mod app;
pub mod compare;
pub mod components;
pub mod display;
pub mod dom;
pub mod draw;
pub mod engine;
pub mod export;
pub mod i18n;
pub mod kept;
pub mod layout;
pub mod lesson;
pub mod lesson_text;
pub mod loader;
pub mod model_files;
pub mod page_callbacks;
pub mod runner;
pub mod state;
pub mod telemetry;
pub mod test_hooks;
pub mod url_state;
pub mod use_display;
pub mod use_engine;
pub mod worker;

pub use app::App;
