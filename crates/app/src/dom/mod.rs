//! Browser plumbing, by job: `js` (the clock, objects, errors), `events` (listening, the
//! window), `fetch` (with progress), `files` (downloads, pickers, drops), `url` (the fragment),
//! `idle` (work for idle time and after a paint) and `hooks` (`window.__attnlab`, for tests and
//! benchmarks). The items are re-exported here: `crate::dom::now` and the like.

mod events;
mod fetch;
mod files;
mod hooks;
mod idle;
mod js;
mod url;

pub use events::{browser_language, document_target, listen, viewport_height};
pub use fetch::{open, read_body, read_body_js};
pub use files::{
    download_bytes, download_url, dropped, entry_files, file_list, read_file, read_file_js, Dropped,
};
pub use hooks::{count, count_draw, expose, hooks, record_paint, stale_count, stale_views};
pub use idle::{after_paint, awaiting_result, when_idle, AwaitingResult};
pub use js::{get, js_err, log_panics, next_task, now, object};
pub use url::{location_hash, replace_hash_soon};
