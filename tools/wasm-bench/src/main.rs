//! Times the CPU reference in WebAssembly under Node (V8, as in the CPU worker): the whole
//! forward, full and incremental (one token added), at T = 16, 64 and 128 with the model in
//! the folder given (default assets/model), and the matrix products alone through
//! `cpu::matmul_into` (what the forward calls) and through matrixmultiply directly.
//! Minimum and median of N runs after 3 warm-up; run by `run.sh`.
//!
//! Given a `.gguf` file (a Llama-family model, e.g. SmolLM2), the same for its traced forward
//! (`LlamaModel::trace`, full and one token added) and for its weights' products alone
//! (`QMatrix::matmul_t`): every linear layer of every block, and the output head, at 1 row
//! (a keystroke's) and at T rows.

use attnlab_model::llama::{LlamaBundle, LlamaModel};
use attnlab_model::{cpu, forward, forward_incremental, AttentionOptions, Model};
use std::time::Instant;

/// (min, median) in ms of `n` runs after 3 warm-up.
fn time(n: usize, mut f: impl FnMut()) -> (f64, f64) {
    for _ in 0..3 {
        f();
    }
    let mut v: Vec<f64> = (0..n)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    v.sort_by(|a, b| a.total_cmp(b));
    (v[0], v[n / 2])
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = args.get(1).map_or("assets/model", |s| s.as_str());
    let n: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(30);
    if dir.ends_with(".gguf") {
        return llama(dir, n);
    }
    let read =
        |f: &str| std::fs::read(format!("{dir}/{f}")).unwrap_or_else(|e| panic!("{dir}/{f}: {e}"));
    let m = Model::from_bytes(&read("config.json"), &read("model.safetensors")).expect("the model");
    let c = &m.config;
    let o = AttentionOptions::default();
    let (d, f, v) = (c.n_embd, c.d_ff(), c.vocab_size);
    println!(
        "{dir}: {} layers, d_model {d}, d_ff {f}, vocab {v}; min / median of {n} runs (ms)\n",
        c.n_layer
    );
    println!("| T | forward, full | forward, one token added | linear layers via matmul_into | via matrixmultiply | lm head via matmul_into | via matrixmultiply |");
    println!("|---|---|---|---|---|---|---|");
    let ms = |(a, b): (f64, f64)| format!("{a:.2} / {b:.2}");
    for t in [16usize, 64, 128]
        .into_iter()
        .filter(|&t| t <= c.n_positions)
    {
        let ids: Vec<u32> = (0..t as u32).map(|i| (i * 37 + 11) % v as u32).collect();
        let full = time(n, || drop(forward(&m, &ids, &o).unwrap()));
        let prev = forward(&m, &ids[..t - 1], &o).unwrap();
        let inc = time(n, || {
            drop(forward_incremental(&m, Some(&prev), &ids, &o).unwrap())
        });
        let x: Vec<f32> = (0..t * f)
            .map(|i| ((i * 7919) % 1000) as f32 * 1e-3 - 0.5)
            .collect();
        let mut out = vec![0.0f32; t * v.max(3 * d).max(f)];
        let mut linears = |mm: bool| {
            for lw in &m.weights.layers {
                for (k, w, nn) in [
                    (d, &lw.c_attn_w, 3 * d),
                    (d, &lw.c_proj_w, d),
                    (d, &lw.fc_w, f),
                    (f, &lw.fc_proj_w, d),
                ] {
                    if mm {
                        cpu::matmul_packed(&x[..t * k], w, t, k, nn, false, &mut out, 0.0);
                    } else {
                        cpu::matmul_into(&x[..t * k], w, t, k, nn, false, &mut out, 0.0);
                    }
                }
            }
        };
        let lin = time(n, || linears(false));
        let lin_mm = time(n, || linears(true));
        let head = time(n, || {
            cpu::matmul_into(&x[..t * d], &m.weights.wte, t, d, v, true, &mut out, 0.0)
        });
        let head_mm = time(n, || {
            cpu::matmul_packed(&x[..t * d], &m.weights.wte, t, d, v, true, &mut out, 0.0)
        });
        println!(
            "| {t} | {} | {} | {} | {} | {} | {} |",
            ms(full),
            ms(inc),
            ms(lin),
            ms(lin_mm),
            ms(head),
            ms(head_mm)
        );
    }
    println!(
        "\nIn wasm, matmul_into takes gemm::nn and gemm::nt (this build: {}).",
        if cfg!(target_feature = "simd128") {
            "wasm32 with SIMD"
        } else {
            "no SIMD"
        }
    );
}

/// The Llama-family model of a GGUF file: traced forwards and the weights' products.
fn llama(path: &str, n: usize) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let m: LlamaModel = LlamaBundle::from_gguf_bytes(&bytes).expect("a Llama GGUF").model;
    drop(bytes);
    let c = &m.config;
    let (d, v) = (c.n_embd, c.vocab_size);
    let o = AttentionOptions::default();
    println!(
        "{path}: {} layers, d_model {d}, d_ff {}, vocab {v}; min / median of {n} runs (ms)\n",
        c.n_layer, c.n_ff
    );
    println!("| T | trace, full | trace, one token added | linear layers, T rows | linear layers, 1 row | head, T rows | head, 1 row |");
    println!("|---|---|---|---|---|---|---|");
    let ms = |(a, b): (f64, f64)| format!("{a:.1} / {b:.1}");
    let width = d.max(c.n_ff).max(v).max(c.n_head * c.head_dim);
    for t in [16usize, 64, 128] {
        let ids: Vec<u32> = (0..t as u32).map(|i| (i * 7919 + 1000) % v as u32).collect();
        let full = time(n, || drop(m.trace(&ids, &o).unwrap()));
        let prev = m.trace(&ids[..t - 1], &o).unwrap();
        let inc = time(n, || {
            let (tr, reused) = m.trace_incremental(Some(&prev), &ids, &o).unwrap();
            assert!(reused);
            drop(tr)
        });
        let x: Vec<f32> = (0..t * width)
            .map(|i| ((i * 7919) % 1000) as f32 * 1e-3 - 0.5)
            .collect();
        let mut y = vec![0.0f32; t * width];
        let mut linears = |rows: usize| {
            for l in &m.layers {
                for w in [&l.q, &l.k, &l.v, &l.o, &l.gate, &l.up, &l.down] {
                    let (k, out) = (w.cols, w.rows);
                    w.matmul_t(&x[..rows * k], rows, &mut y[..rows * out]);
                }
            }
        };
        let lin_t = time(n, || linears(t));
        let lin_1 = time(n, || linears(1));
        let head = m.head();
        let head_t = time(n, || head.matmul_t(&x[..t * d], t, &mut y[..t * v]));
        let head_1 = time(n, || head.matmul_t(&x[..d], 1, &mut y[..v]));
        println!(
            "| {t} | {} | {} | {} | {} | {} | {} |",
            ms(full),
            ms(inc),
            ms(lin_t),
            ms(lin_1),
            ms(head_t),
            ms(head_1)
        );
    }
}
