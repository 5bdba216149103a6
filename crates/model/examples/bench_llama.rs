//! Times the Llama forward on a GGUF file natively, for tools/llama_cpp/bench.py (which runs
//! llama.cpp on the same file and prints both): prompt processing of T seeded random tokens,
//! lean (logits) and traced (every intermediate, every head's map), and the answer to one
//! appended token: lean (no key/value cache: the whole T + 1 again) and traced incrementally
//! (the prompt's trace holds the keys and values: only the new row is computed), as the page's
//! CPU worker runs it: the prompt's trace given up to the new one (`Earlier::Owned`, grown in
//! place), itself grown from a trace one token shorter (so its vectors have room for more
//! rows, as the worker's do). Traced two ways: keeping every head's maps (`Keep::All`, a short
//! text in the page), and keeping q, k and v only (`Keep::Streams`, a long text), then the new
//! row of every head's attention computed from them (`Trace::head_rows`).
//! Prints one JSON line of medians in milliseconds.
//!   cargo run --release -p attnlab-model --example bench_llama -- FILE.gguf [T] [REPEATS]

use std::time::Instant;

use attnlab_model::llama::{LlamaBundle, LlamaModel};
use attnlab_model::trace::{Keep, Trace};
use attnlab_model::{AttentionOptions, Earlier};
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
    let appended_traced = one_more_traced(&m, &ids, &opts, Keep::All, repeats);
    let appended_streams = one_more_traced(&m, &ids, &opts, Keep::Streams, repeats);
    println!(
        "{{\"t\": {t}, \"repeats\": {repeats}, \"load_ms\": {load_ms:.1}, \"prompt_lean_ms\": {lean:.1}, \"prompt_traced_ms\": {traced:.1}, \"appended_ms\": {appended:.1}, \"appended_traced_ms\": {appended_traced:.1}, \"appended_streams_ms\": {appended_streams:.1}}}"
    );
}

/// The median time of the answer to the last of `ids` after the others, traced incrementally
/// keeping `keep`, every head's new row of attention at hand at the end.
fn one_more_traced(
    m: &LlamaModel,
    ids: &[u32],
    opts: &AttentionOptions,
    keep: Keep,
    repeats: usize,
) -> f64 {
    let t = ids.len() - 1;
    assert!(t >= 2, "T ≥ 2");
    let grown = |earlier: &Trace, n: usize| {
        let earlier = Some(Earlier::Owned(Box::new(earlier.clone())));
        let (trace, reused) = m
            .trace_watched(earlier, &ids[..n], opts, keep, &mut |_| {})
            .unwrap();
        assert!(reused);
        trace
    };
    let shorter = m.trace_kept(None, &ids[..t - 1], opts, keep).unwrap().0;
    let (layers, heads) = (m.config.n_layer, m.config.n_head);
    let runs = (0..=repeats).map(|_| {
        let prompt = grown(&shorter, t); // not timed
        let s = Instant::now();
        let (trace, reused) = m
            .trace_watched(
                Some(Earlier::Owned(Box::new(prompt))),
                ids,
                opts,
                keep,
                &mut |_| {},
            )
            .unwrap();
        assert!(reused);
        let mut total = 0f32;
        for l in 0..layers {
            for h in 0..heads {
                total += if keep == Keep::Streams {
                    trace
                        .head_rows(l, h, t..t + 1)
                        .unwrap()
                        .weights
                        .iter()
                        .sum()
                } else {
                    trace.head(l, h).weights[t * (t + 1)..].iter().sum::<f32>()
                };
            }
        }
        let ms = s.elapsed().as_secs_f64() * 1e3;
        // each head's new row of weights sums to 1
        assert!((total - (layers * heads) as f32).abs() < 1e-2, "{total}");
        ms
    });
    median(runs.skip(1).collect()) // the first: a warm-up
}
