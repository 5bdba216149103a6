//! A long text on a GPU engine that keeps no maps (`Keep::Streams`: the attention fused, no
//! (H, P, P) buffer): how many positions the engine holds with and without the maps under the
//! default activation budget, one forward of T tokens timed, and its numbers against the CPU
//! reference kept the same way — the largest difference in the kept fields, and in one head's
//! maps computed from each side's q and k; then a long text's page on it: its slim forward,
//! every head's rows pooled, one token typed, each timed, its thumbnails against the CPU's
//! (`LONG_SLIM_ONLY=1`: these alone).
//!
//! `cargo run --release -p attnlab-gpu --example long -- [--model DIR | FILE.gguf] [T]`
//! (default: the GPT-2-small-sized random model `random_model` writes, at 1,024 tokens; a
//! folder is a GPT-2-layout model, a .gguf file a Llama-family one).

use std::time::Instant;

use attnlab_gpu::attn_pool::Pooling;
use attnlab_gpu::engine::{SlimAsk, ACTIVATION_BUDGET, LONG_TEXT_BUDGET};
use attnlab_gpu::{AnyEngine, Gpu, GpuEngine, LlamaGpuEngine};
use attnlab_model::inspect::Traced;
use attnlab_model::{AttentionOptions, Keep, Pooled, Trace};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let model = args
        .iter()
        .position(|a| a == "--model")
        .map(|i| args[i + 1].clone())
        .unwrap_or_else(|| "target/big-model".into());
    let t: usize = args
        .iter()
        .filter_map(|a| a.parse().ok())
        .next()
        .unwrap_or(1024);
    let gpu = || pollster::block_on(Gpu::new(attnlab_gpu::kernels::ALL)).expect("a GPU adapter");
    // (a page's long text gets the larger budget)
    let budget = |keep| match keep {
        Keep::Streams => LONG_TEXT_BUDGET,
        _ => ACTIVATION_BUDGET,
    };
    let engine = |keep| -> (AnyEngine, Box<dyn Traced>, u32) {
        if model.ends_with(".gguf") {
            let bytes = std::fs::read(&model).unwrap_or_else(|e| panic!("{model}: {e}"));
            let m = attnlab_model::llama::LlamaBundle::from_gguf_bytes(&bytes)
                .expect("a Llama-family GGUF file")
                .model;
            let e = pollster::block_on(LlamaGpuEngine::with_keep(gpu(), &m, budget(keep), keep))
                .expect("the engine");
            let v = m.config.vocab_size as u32;
            (AnyEngine::Llama(Box::new(e)), Box::new(m), v)
        } else {
            let m = attnlab_model::Bundle::load_dir(std::path::Path::new(&model))
                .unwrap_or_else(|e| panic!("{model}: {e}"))
                .model;
            let e = pollster::block_on(GpuEngine::with_keep(gpu(), &m, budget(keep), keep))
                .expect("the engine");
            let v = m.config.vocab_size as u32;
            (AnyEngine::Gpt2(Box::new(e)), Box::new(m), v)
        }
    };
    let (with_maps, _, _) = engine(Keep::All);
    let (adapter, held) = (with_maps.gpu().info.name.clone(), with_maps.capacity());
    drop(with_maps);
    let (mut lean, cpu, vocab) = engine(Keep::Streams);
    println!("model: {model}; adapter: {adapter}");
    println!(
        "positions the buffers hold: {held} with the maps (in {} MiB of activations), {} without (in {} MiB)",
        ACTIVATION_BUDGET >> 20,
        lean.capacity(),
        LONG_TEXT_BUDGET >> 20
    );
    let t = t.min(lean.capacity());
    let ids: Vec<u32> = (0..t as u32).map(|i| (i * 7919 + 13) % vocab).collect();
    let o = AttentionOptions::default();
    let started = Instant::now();
    let c = cpu
        .trace_kept(None, &ids, &o, Keep::Streams)
        .expect("the CPU forward")
        .0;
    let cpu_ms = started.elapsed().as_secs_f64() * 1e3;
    // (LONG_SLIM_ONLY: only the page's slim forwards below, not the whole trace's readback)
    if std::env::var_os("LONG_SLIM_ONLY").is_none() {
        whole(&mut lean, &ids, &c, cpu_ms);
    }
    slim(&mut lean, &ids, &c);
}

/// One forward whose whole trace is read back, timed, against the CPU's trace `c`.
fn whole(lean: &mut AnyEngine, ids: &[u32], c: &Trace, cpu_ms: f64) {
    let (t, o) = (ids.len(), AttentionOptions::default());
    let started = Instant::now();
    let g = pollster::block_on(lean.forward(ids, &o)).expect("the forward");
    let gpu_ms = started.elapsed().as_secs_f64() * 1e3;
    println!("T = {t}: GPU forward {gpu_ms:.0} ms, CPU {cpu_ms:.0} ms");
    let (abs, rel) = largest(&g, c);
    if std::env::var_os("LONG_FIELDS").is_some() {
        for ((name, x), (_, y)) in g.fields().into_iter().zip(c.fields()) {
            let d = x
                .iter()
                .zip(y)
                .map(|(a, b)| (a - b).abs())
                .fold(0f32, f32::max);
            let at = x.iter().zip(y).position(|(a, b)| (a - b).abs() == d);
            println!("  {name}: {d:.3e} at {at:?} of {}", x.len());
        }
    }
    println!("largest |GPU − CPU| over the kept fields: {abs:.3e}; of |GPU − CPU| / (1 + |CPU|): {rel:.3e}");
    let (l, h) = (g.dims.n_layer - 1, g.dims.n_head - 1);
    let (a, b) = (g.head_weights(l, h), c.head_weights(l, h));
    let d = a
        .iter()
        .zip(b.iter())
        .map(|(x, y)| (x - y).abs())
        .fold(0f32, f32::max);
    println!("largest |GPU − CPU| in L{l}H{h}'s weights from each side's q and k: {d:.3e}");
}

/// A long text's page on `lean`: timed, its thumbnails against the CPU's trace `c`.
fn slim(lean: &mut AnyEngine, ids: &[u32], c: &Trace) {
    let (t, o) = (ids.len(), AttentionOptions::default());
    let (l, h) = (c.dims.n_layer - 1, c.dims.n_head - 1);
    // a long text's page: the slim forward (one head's vectors, every head's rows pooled
    // into 64-cell thumbnails), pasted and then one token typed, against the CPU's pooling
    let mut pooled = Pooled::new(64);
    let ask = |pooled: &Pooled, ids: &[u32]| {
        let (rows, span) = pooled.plan(ids, &o, (l + 1, h + 1)).expect("a plan");
        SlimAsk {
            heads: vec![(l, h)],
            pool: Some((rows, Pooling { span, side: 64 })),
        }
    };
    let short = &ids[..t - 1];
    // the forward of the pasted text, then its rows pooled (the forward cached), then one
    // token typed (a row's forward and pooling)
    let started = Instant::now();
    let warm = SlimAsk {
        heads: vec![(l, h)],
        pool: None,
    };
    pollster::block_on(lean.forward_slim(short, &o, &warm)).expect("the slim forward");
    let forward_ms = started.elapsed().as_secs_f64() * 1e3;
    let started = Instant::now();
    let read = pollster::block_on(lean.forward_slim(short, &o, &ask(&pooled, short)));
    let read = read.expect("the slim forward");
    pooled
        .update_pooled(short, &o, (l + 1, h + 1), &read.pooled)
        .expect("pooled rows");
    let paste_ms = started.elapsed().as_secs_f64() * 1e3;
    let started = Instant::now();
    let read = pollster::block_on(lean.forward_slim(ids, &o, &ask(&pooled, ids)));
    let read = read.expect("the slim forward");
    pooled
        .update_pooled(ids, &o, (l + 1, h + 1), &read.pooled)
        .expect("pooled rows");
    let typed_ms = started.elapsed().as_secs_f64() * 1e3;
    let (got, want) = (
        pooled.thumbnails(),
        c.thumbnails(64).expect("the CPU's thumbnails"),
    );
    let d = got
        .weights
        .iter()
        .zip(&want.weights)
        .map(|(x, y)| (x - y).abs())
        .fold(0f32, f32::max);
    println!(
        "a page's slim forwards: {} tokens {forward_ms:.0} ms, every head's rows pooled {paste_ms:.0} ms, one more typed (forward and pooling) {typed_ms:.0} ms; largest |GPU − CPU| in the thumbnails {d:.3e}",
        t - 1
    );
}

/// The largest absolute difference between two traces' fields, and the largest relative to
/// 1 + the CPU's magnitude.
fn largest(g: &Trace, c: &Trace) -> (f32, f32) {
    g.fields()
        .into_iter()
        .zip(c.fields())
        .flat_map(|((_, x), (_, y))| x.iter().zip(y).map(|(a, b)| (a - b, *b)))
        .fold((0f32, 0f32), |(abs, rel), (d, b)| {
            (abs.max(d.abs()), rel.max(d.abs() / (1.0 + b.abs())))
        })
}
