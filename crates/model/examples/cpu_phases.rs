//! How much of the CPU reference's forward is its matrix products and its next-token
//! softmax, natively, at T = 16 and 64 (the bundled model's shape, random weights): the
//! forward, then the same products alone (same shapes, through `cpu::matmul_into`), then the
//! 6,000-wide softmax of every position alone. Means of 50 after 5 warm-up.
//!
//! `cargo run --release -p attnlab-model --example cpu_phases`

use attnlab_model::testing::random_model;
use attnlab_model::{cpu, forward, AttentionOptions, Config};
use std::time::Instant;
fn main() {
    let c = Config::bundled(6000);
    let m = random_model(&c, 1, 1.0);
    let o = AttentionOptions::default();
    for t in [16usize, 64] {
        let ids: Vec<u32> = (0..t as u32).map(|i| (i * 37 + 11) % 6000).collect();
        for _ in 0..5 {
            forward(&m, &ids, &o).unwrap();
        }
        let n = 50;
        let s = Instant::now();
        for _ in 0..n {
            forward(&m, &ids, &o).unwrap();
        }
        let fwd = s.elapsed().as_secs_f64() * 1e3 / n as f64;
        let (d, f, v) = (c.n_embd, c.d_ff(), c.vocab_size);
        let x = vec![0.1f32; t * f];
        let w = vec![0.01f32; f * v.max(3 * d)];
        let mut out = vec![0.0f32; t * v];
        let s = Instant::now();
        for _ in 0..n {
            for _ in 0..c.n_layer {
                for (k, nn) in [(d, 3 * d), (d, d), (d, f), (f, d)] {
                    cpu::matmul_into(
                        &x[..t * k],
                        &w[..k * nn],
                        t,
                        k,
                        nn,
                        false,
                        &mut out[..t * nn],
                        0.0,
                    );
                }
            }
            cpu::matmul_into(
                &x[..t * d],
                &w[..v * d],
                t,
                d,
                v,
                true,
                &mut out[..t * v],
                0.0,
            );
        }
        let mm = s.elapsed().as_secs_f64() * 1e3 / n as f64;
        let s = Instant::now();
        for _ in 0..n {
            let mut p = vec![0.0f32; t * v];
            cpu::softmax_rows(&out[..t * v], v, 1.0, &mut p);
        }
        let sm = s.elapsed().as_secs_f64() * 1e3 / n as f64;
        println!("T={t}: forward {fwd:.2} ms, its matrix products {mm:.2} ms ({:.0} %), the next-token softmax {sm:.2} ms ({:.0} %)", 100.0*mm/fwd, 100.0*sm/fwd);
    }
}
