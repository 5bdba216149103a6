fn main() {
    #[cfg(target_arch = "wasm32")]
    {
        attnlab_app::dom::log_panics();
        yew::Renderer::<attnlab_app::App>::new().render();
    }
    #[cfg(not(target_arch = "wasm32"))]
    eprintln!("attnlab-app runs in the browser: `./scripts/serve.sh` builds and serves it");
}
