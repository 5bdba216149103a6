fn main() {
    // (yew's renderer writes the page's panics to the console: console_error_panic_hook)
    #[cfg(target_arch = "wasm32")]
    yew::Renderer::<attnlab_app::App>::new().render();
    #[cfg(not(target_arch = "wasm32"))]
    eprintln!("attnlab-app runs in the browser: `./scripts/serve.sh` builds and serves it");
}
