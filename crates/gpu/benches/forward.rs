//! Forward time at T = 16, 64, 128 on the bundled model's shape (4 layers × 4 heads,
//! d_model 256, vocab 6000, context 128): the CPU reference, the same forward in candle, the
//! GPU engine (a full forward and an incremental one: 1 new token after T − 1), each with
//! its readback of the whole Trace.
//!
//! `cargo bench -p attnlab-gpu --bench forward`

use std::time::{Duration, Instant};

use attnlab_gpu::GpuEngine;
use attnlab_model::testing::random_model;
use attnlab_model::{forward, AttentionOptions, Config};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

fn model() -> attnlab_model::Model {
    random_model(&Config::bundled(6000), 1, 1.0)
}

fn bench(c: &mut Criterion) {
    let m = model();
    let o = AttentionOptions::default();
    let ids: Vec<u32> = (0..128u32).map(|i| (i * 37 + 11) % 6000).collect();
    // candle: the training-time model, loaded from the same weights
    let dir = std::env::temp_dir().join(format!("attnlab-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let st = dir.join("model.safetensors");
    std::fs::write(&st, m.to_safetensors(false)).unwrap();
    let gpt = attnlab_train::run::gpt_from_file(&m.config, &st).unwrap();
    let mut engine = pollster::block_on(GpuEngine::new(&m))
        .expect("a GPU adapter (lavapipe: mesa-vulkan-drivers)");
    eprintln!("GPU adapter: {:?}", engine.adapter_info());

    let mut g = c.benchmark_group("forward");
    g.sample_size(20)
        .measurement_time(Duration::from_secs(4))
        .warm_up_time(Duration::from_secs(1));
    for t in [16usize, 64, 128] {
        let x = &ids[..t];
        g.bench_with_input(BenchmarkId::new("cpu_reference", t), &t, |b, _| {
            b.iter(|| forward(&m, x, &o).unwrap())
        });
        let input = candle_core::Tensor::new(x, &candle_core::Device::Cpu)
            .unwrap()
            .unsqueeze(0)
            .unwrap();
        g.bench_with_input(BenchmarkId::new("candle", t), &t, |b, _| {
            b.iter(|| gpt.forward(&input).unwrap())
        });
        g.bench_with_input(BenchmarkId::new("gpu_full", t), &t, |b, _| {
            b.iter(|| pollster::block_on(engine.forward_full(x, &o)).unwrap())
        });
        g.bench_with_input(BenchmarkId::new("gpu_incremental", t), &t, |b, _| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    pollster::block_on(engine.forward_full(&x[..t - 1], &o)).unwrap();
                    let start = Instant::now();
                    pollster::block_on(engine.forward(x, &o)).unwrap();
                    total += start.elapsed();
                    assert!(engine.last_was_incremental());
                }
                total
            })
        });
        g.bench_with_input(BenchmarkId::new("cpu_incremental", t), &t, |b, _| {
            let prev = forward(&m, &x[..t - 1], &o).unwrap();
            b.iter(|| attnlab_model::forward_incremental(&m, Some(&prev), x, &o).unwrap())
        });
    }
    g.finish();
    std::fs::remove_dir_all(&dir).ok();
}

criterion_group!(benches, bench);
criterion_main!(benches);
