//! Times the Llama forward on a GGUF file natively, for tools/llama_cpp/bench.py (which runs
//! llama.cpp on the same file and prints both): prompt processing of T seeded random tokens,
//! lean (logits) and traced (every intermediate, every head's map), and the answer to one
//! appended token: lean (no key/value cache: the whole T + 1 again) and traced incrementally
//! (the prompt's trace holds the keys and values: only the new row is computed).
//! Prints one JSON line of medians in milliseconds.
//!   cargo run --release -p attnlab-model --example bench_llama -- FILE.gguf [T] [REPEATS]

use std::time::Instant;

use attnlab_model::llama::LlamaBundle;
use attnlab_model::AttentionOptions;
use rand::{Rng, SeedableRng};

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .expect("usage: bench_llama FILE.gguf [T] [REPEATS]");
    let t: usize = args.next().map_or(128, |s| s.parse().expect("T"));
    let repeats: usize = args.next().map_or(5, |s| s.parse().expect("REPEATS"));
    let bytes = std::fs::read(&path).expect("the GGUF file");
    let started = Instant::now();
    let m = LlamaBundle::from_gguf_bytes(&bytes)
        .expect("a Llama GGUF")
        .model;
    let load_ms = started.elapsed().as_secs_f64() * 1e3;
    drop(bytes);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(20_261_205);
    let ids: Vec<u32> = (0..=t).map(|_| rng.random_range(1000..20000)).collect();
    let opts = AttentionOptions::default();
    let time = |f: &dyn Fn()| {
        f(); // warm-up
        median(
            (0..repeats)
                .map(|_| {
                    let s = Instant::now();
                    f();
                    s.elapsed().as_secs_f64() * 1e3
                })
                .collect(),
        )
    };
    let lean = time(&|| {
        m.logits(&ids[..t]).unwrap();
    });
    let traced = time(&|| {
        m.trace(&ids[..t], &opts).unwrap();
    });
    let appended = time(&|| {
        m.logits(&ids[..=t]).unwrap();
    });
    let prompt = m.trace(&ids[..t], &opts).unwrap();
    let appended_traced = time(&|| {
        let (_, reused) = m
            .trace_incremental(Some(&prompt), &ids[..=t], &opts)
            .unwrap();
        assert!(reused);
    });
    println!(
        "{{\"t\": {t}, \"repeats\": {repeats}, \"load_ms\": {load_ms:.1}, \"prompt_lean_ms\": {lean:.1}, \"prompt_traced_ms\": {traced:.1}, \"appended_ms\": {appended:.1}, \"appended_traced_ms\": {appended_traced:.1}}}"
    );
}
