//! Where a GPU forward's time goes, kernel by kernel, on this machine's adapter: a full
//! forward of T tokens and the incremental one (one token typed after T − 1), each dispatch
//! waited for on its own, then the readback. The bundled model's shape, random weights; or,
//! with `--model FILE.gguf`, a Llama-family GGUF file (e.g. SmolLM2) on `LlamaGpuEngine`.
//!
//! `cargo run --release -p attnlab-gpu --example profile -- [--tiled] [--model FILE.gguf]
//! [T ...]` (default 16 64 128; `--tiled`: the tiled matrix kernel for many rows, a GPU's
//! default, on any adapter; GPT-2 layout only).
//! SwiftShader, natively: `VK_ICD_FILENAMES=/usr/lib/chromium/vk_swiftshader_icd.json`.

use std::time::Instant;

use attnlab_gpu::{AnyEngine, GpuEngine, LlamaGpuEngine, Profile};
use attnlab_model::testing::random_model;
use attnlab_model::{AttentionOptions, Config};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let tiled = args.iter().any(|a| a == "--tiled");
    let model = args
        .iter()
        .position(|a| a == "--model")
        .map(|i| args.get(i + 1).expect("--model FILE.gguf").clone());
    let sizes: Vec<usize> = args
        .iter()
        .filter(|a| *a != "--tiled" && *a != "--model" && Some(*a) != model.as_ref())
        .map(|a| a.parse().expect("sizes are token counts"))
        .collect();
    let sizes = if sizes.is_empty() {
        vec![16, 64, 128]
    } else {
        sizes
    };
    let o = AttentionOptions::default();
    let (mut engine, vocab) = match &model {
        Some(path) => {
            let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
            let m = attnlab_model::llama::LlamaBundle::from_gguf_bytes(&bytes)
                .expect("a Llama-family GGUF file")
                .model;
            let e = pollster::block_on(LlamaGpuEngine::new(&m)).expect("a GPU adapter");
            println!("model: {path}");
            (AnyEngine::Llama(Box::new(e)), m.config.vocab_size as u32)
        }
        None => {
            let m = random_model(&Config::bundled(6000), 1, 1.0);
            let mut e = pollster::block_on(GpuEngine::new(&m)).expect("a GPU adapter");
            if tiled {
                e.set_tiled_linear(true);
            }
            let kernel = if e.tiled_linear() { "tiled" } else { "rows" };
            println!("matrix kernel for many rows: {kernel}");
            (AnyEngine::Gpt2(Box::new(e)), 6000)
        }
    };
    let ids: Vec<u32> = (0..128u32).map(|i| (i * 37 + 11) % vocab).collect();
    let info = &engine.gpu().info;
    println!(
        "adapter: {} ({:?}, {:?})",
        info.name, info.device_type, info.backend
    );
    let t0 = Instant::now();
    let now = move || t0.elapsed().as_secs_f64() * 1e3;
    for t in sizes {
        let t = t.clamp(2, engine.capacity());
        // warm-up, then the full forward, then the incremental one, best of three each
        pollster::block_on(engine.forward_full(&ids[..t], &o)).unwrap();
        let mut full = None::<Profile>;
        let mut inc = None::<Profile>;
        for _ in 0..3 {
            engine.clear_cache();
            let (_, p) = pollster::block_on(engine.profile(&ids[..t], &o, &now)).unwrap();
            keep_best(&mut full, p);
            pollster::block_on(engine.forward_full(&ids[..t - 1], &o)).unwrap();
            let (_, p) = pollster::block_on(engine.profile(&ids[..t], &o, &now)).unwrap();
            assert!(p.incremental);
            keep_best(&mut inc, p);
        }
        for (what, p) in [("full", full.unwrap()), ("incremental", inc.unwrap())] {
            println!("\nT = {t}, {what}: {:.1} ms in all", p.total_ms());
            println!("| step | dispatches | ms | share |\n|---|---:|---:|---:|");
            let total = p.total_ms();
            let mut rows: Vec<(String, usize, f64)> = p
                .kernels
                .iter()
                .map(|k| (k.0.to_string(), k.1, k.2))
                .collect();
            rows.push((
                format!("readback ({:.2} MB)", p.floats as f64 * 4e-6),
                1,
                p.readback_ms,
            ));
            rows.push(("trace assembly (CPU)".into(), 1, p.assemble_ms));
            rows.sort_by(|a, b| b.2.total_cmp(&a.2));
            for (name, n, ms) in rows {
                println!("| {name} | {n} | {ms:.1} | {:.0} % |", 100.0 * ms / total);
            }
        }
    }
}

fn keep_best(best: &mut Option<Profile>, p: Profile) {
    if best.as_ref().is_none_or(|b| p.total_ms() < b.total_ms()) {
        *best = Some(p);
    }
}
