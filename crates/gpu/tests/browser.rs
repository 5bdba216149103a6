//! Browser parity: the same GPU engine on WebGPU in headless Chromium (wasm-bindgen-test),
//! against the CPU reference compiled to wasm.
//!
//! `CHROMEDRIVER=/usr/bin/chromedriver cargo test -p attnlab-gpu --target wasm32-unknown-unknown --test browser`
//! (the README's test command does this; webdriver.json holds Chromium's flags).
#![cfg(target_arch = "wasm32")]

mod common;

use attnlab_gpu::GpuEngine;
use attnlab_model::testing::random_model;
use attnlab_model::{forward, AttentionOptions, LnPlacement};
use common::{assert_trace_close, small_config};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
async fn webgpu_forward_matches_cpu_in_the_browser() {
    for (seed, ln) in [(1, LnPlacement::Pre), (2, LnPlacement::Post)] {
        let m = random_model(&small_config(ln), seed, 0.5);
        let mut e = GpuEngine::new(&m)
            .await
            .expect("a WebGPU adapter in this browser");
        assert_eq!(
            e.adapter_info().backend,
            wgpu::Backend::BrowserWebGpu,
            "{:?}",
            e.adapter_info()
        );
        // SwiftShader here: an adapter that runs on the CPU, so the row kernel by default
        let info = e.adapter_info().clone();
        assert_eq!(
            e.tiled_linear(),
            !attnlab_gpu::runs_on_cpu(info.device_type, &info.name),
            "{info:?}"
        );
        let x: Vec<u32> = (0..21u32).map(|i| (i * 31 + 5) % 97).collect();
        for tiled in [false, true] {
            e.set_tiled_linear(tiled);
            for o in [
                AttentionOptions::default(),
                AttentionOptions {
                    scale: false,
                    temperature: 0.01,
                    ..Default::default()
                },
                AttentionOptions {
                    temperature: 100.0,
                    causal_mask: false,
                    ablate: [(1, 2)].into(),
                    ..Default::default()
                },
            ] {
                let g = e.forward_full(&x, &o).await.unwrap();
                assert_trace_close(
                    &format!("browser {ln:?} tiled {tiled} {o:?}"),
                    &g,
                    &forward(&m, &x, &o).unwrap(),
                );
            }
            // incremental after a keystroke at the end
            let o = AttentionOptions::default();
            e.forward(&x[..20], &o).await.unwrap();
            let inc = e.forward(&x, &o).await.unwrap();
            assert!(e.last_was_incremental());
            assert_trace_close("browser incremental", &inc, &forward(&m, &x, &o).unwrap());
        }
    }
}
