//! Browser parity: the same GPU engines on WebGPU in headless Chromium (wasm-bindgen-test),
//! against the CPU reference compiled to wasm and, for the Llama family, against Hugging Face
//! transformers' numbers (the fixtures of crates/model/tests/data/hf).
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

/// A Hugging Face fixture's config.json, its model.safetensors and transformers' expected
/// numbers (`tools/hf/make_fixtures.py`).
macro_rules! hf_fixture {
    ($name:literal) => {
        (
            $name,
            include_bytes!(concat!("../../model/tests/data/hf/", $name, "/config.json")).as_slice(),
            include_bytes!(concat!(
                "../../model/tests/data/hf/",
                $name,
                "/model.safetensors"
            ))
            .as_slice(),
            include_bytes!(concat!(
                "../../model/tests/data/hf/",
                $name,
                "/expected.safetensors"
            ))
            .as_slice(),
        )
    };
}

#[wasm_bindgen_test]
async fn webgpu_llama_forward_matches_transformers_and_cpu_in_the_browser() {
    use attnlab_gpu::LlamaGpuEngine;
    use attnlab_model::llama::LlamaModel;
    use common::assert_close;
    for (name, config, weights, expected) in [
        hf_fixture!("llama-gqa-tied"),
        hf_fixture!("llama3-untied-bias"),
        hf_fixture!("qwen2-mqa"),
    ] {
        let m = LlamaModel::from_hf(config, &[weights]).unwrap();
        let st = safetensors::SafeTensors::deserialize(expected).unwrap();
        let f32s =
            |n: &str| -> Vec<f32> { bytemuck::pod_collect_to_vec(st.tensor(n).unwrap().data()) };
        let ids: Vec<i64> = bytemuck::pod_collect_to_vec(st.tensor("ids").unwrap().data());
        let ids: Vec<u32> = ids.into_iter().map(|i| i as u32).collect();
        let mut e = LlamaGpuEngine::new(&m)
            .await
            .expect("a WebGPU adapter in this browser");
        assert_eq!(e.adapter_info().backend, wgpu::Backend::BrowserWebGpu);
        let o = AttentionOptions::default();
        let g = e.forward(&ids, &o).await.unwrap();
        assert_close(
            &format!("{name} logits"),
            &g.logits,
            &f32s("logits"),
            1e-4,
            1e-3,
        );
        for l in 0..g.layers.len() {
            let want = f32s(&format!("attn.{l}"));
            assert_close(
                &format!("{name} layer {l}"),
                &g.layers[l].weights,
                &want,
                1e-5,
                1e-4,
            );
        }
        assert_trace_close(name, &g, &m.trace(&ids, &o).unwrap());
        // a keystroke at the end: the new row only
        let longer: Vec<u32> = ids.iter().copied().chain([3]).collect();
        let inc = e.forward(&longer, &o).await.unwrap();
        assert!(e.last_was_incremental());
        assert_trace_close(
            &format!("{name} incremental"),
            &inc,
            &m.trace(&longer, &o).unwrap(),
        );
        // without the maps: the fused attention on the browser's WebGPU, each head's maps
        // computed from its q and k still transformers' attention (one model: a second
        // device compiles every kernel again, seconds on SwiftShader)
        if name != "llama-gqa-tied" {
            continue;
        }
        let gpu = attnlab_gpu::Gpu::new(attnlab_gpu::kernels::ALL)
            .await
            .unwrap();
        let budget = attnlab_gpu::engine::ACTIVATION_BUDGET;
        let mut lean = LlamaGpuEngine::with_keep(gpu, &m, budget, attnlab_model::Keep::Streams)
            .await
            .unwrap();
        let g = lean.forward(&ids, &o).await.unwrap();
        // the prediction after the last position only
        let logits = f32s("logits");
        let last = &logits[logits.len() - g.dims.vocab..];
        assert_close(&format!("{name} fused logits"), &g.logits, last, 1e-4, 1e-3);
        let t = g.dims.t;
        for l in 0..g.layers.len() {
            let want = f32s(&format!("attn.{l}"));
            for h in 0..g.dims.n_head {
                let (got, want) = (g.head_weights(l, h), &want[h * t * t..(h + 1) * t * t]);
                assert_close(&format!("{name} fused L{l}H{h}"), &got, want, 1e-5, 1e-4);
            }
        }
        let cpu = m.trace_kept(None, &ids, &o, attnlab_model::Keep::Streams);
        assert_trace_close(&format!("{name} fused"), &g, &cpu.unwrap().0);
    }
}
