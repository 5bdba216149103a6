//! The CPU worker (a Web Worker that Trunk builds with `data-type="worker"`): runs the model's
//! CPU reference off the page's thread. See `attnlab_app::worker`.
fn main() {
    #[cfg(target_arch = "wasm32")]
    attnlab_app::worker::start();
    #[cfg(not(target_arch = "wasm32"))]
    eprintln!("attnlab-worker runs in the browser as the app's Web Worker");
}
