//! Each WGSL kernel against its CPU twin, on the cases that break kernels.

mod common;

use attnlab_gpu::*;
use attnlab_model::cpu::{self, MASKED};
use attnlab_model::testing::rand_vec;
use attnlab_model::Activation;
use bytemuck::bytes_of;
use common::{assert_close, gpu};

const ATOL: f32 = 1e-5;
const RTOL: f32 = 1e-4;

fn f(v: &[f32]) -> Vec<u8> {
    bytemuck::cast_slice(v).to_vec()
}

fn run(g: &Gpu, name: &str, params: &[u8], bufs: &[Vec<u8>], groups: [u32; 3]) -> Vec<Vec<f32>> {
    pollster::block_on(g.run_once(name, params, bufs, groups)).unwrap()
}

/// Runs kernel `name` (softmax_rows or attn_softmax) on `rows` rows of `cols` scores with
/// temperature `tau`, every row from the first normalised.
fn softmax(g: &Gpu, name: &str, x: &[f32], rows: usize, cols: usize, tau: f32) -> Vec<f32> {
    let out = f(&vec![7.0; rows * cols]);
    let got = if name == "softmax_rows" {
        let p = softmax_rows::Params {
            row0: 0,
            cols: cols as u32,
            tau,
            ..Default::default()
        };
        run(g, name, bytes_of(&p), &[f(x), out], [rows as u32, 1, 1])
    } else {
        let p = attn_softmax::Params {
            row0: 0,
            rows: rows as u32,
            cols: cols as u32,
            row_stride: cols as u32,
            head_stride: 0,
            tau,
            ..Default::default()
        };
        let groups = (rows as u32).div_ceil(attn_softmax::WG[0]);
        run(g, name, bytes_of(&p), &[f(x), out], [groups, 1, 1])
    };
    got[0][..rows * cols].to_vec()
}

#[test]
fn both_softmax_kernels_match_cpu_reference_on_hard_rows() {
    let Some(g) = gpu() else { return };
    for name in ["softmax_rows", "attn_softmax"] {
        // (rows, cols, scale of scores, τ): T = 1, a row longer than the workgroup (300 >
        // 256), scores ≈ 1e4 and 1e30, tiny and huge τ, more rows than one workgroup of
        // attn_softmax (70 > 64)
        for (case, (rows, cols, scale, tau)) in [
            (1, 1, 1.0, 1.0),
            (5, 300, 3.0, 1.0),
            (7, 37, 1e4, 1.0),
            (3, 19, 1e4, 0.01),
            (4, 600, 1e30, 100.0),
            (6, 17, 5.0, 0.01),
            (70, 70, 2.0, 1.0),
        ]
        .into_iter()
        .enumerate()
        {
            let mut x = rand_vec(rows * cols, case as u64, scale);
            cpu::causal_mask(&mut x, cols, cols.saturating_sub(rows)); // some masked entries
            if rows > 2 {
                x[cols..2 * cols].fill(MASKED); // a fully masked row
            }
            let mut want = vec![0.0; rows * cols];
            cpu::softmax_rows(&x, cols, tau, &mut want);
            let got = softmax(&g, name, &x, rows, cols, tau);
            assert_close(&format!("{name} case {case}"), &got, &want, ATOL, RTOL);
            for (r, row) in got.chunks(cols).enumerate() {
                for (j, &w) in row.iter().enumerate() {
                    if x[r * cols + j] == MASKED {
                        assert_eq!(
                            w, 0.0,
                            "{name} case {case}: masked weight at ({r}, {j}) is not exactly 0"
                        );
                    }
                }
            }
        }
        // numerical stability: softmax([1234, 0]) = [1, 0] exactly
        let got = softmax(&g, name, &[1234.0, 0.0], 1, 2, 1.0);
        assert_eq!(got, [1.0, 0.0], "{name}");
    }
}

#[test]
fn attn_softmax_clears_new_keys_of_rows_normalised_before() {
    let Some(g) = gpu() else { return };
    let (t, s, h) = (6usize, 4usize, 2usize);
    let x = rand_vec(h * t * t, 9, 2.0);
    let p = attn_softmax::Params {
        row0: s as u32,
        rows: t as u32,
        cols: t as u32,
        row_stride: t as u32,
        head_stride: (t * t) as u32,
        tau: 1.0,
        ..Default::default()
    };
    let got = run(
        &g,
        "attn_softmax",
        bytes_of(&p),
        &[f(&x), f(&vec![0.5; h * t * t])],
        [1, h as u32, 1],
    );
    for hh in 0..h {
        let w = &got[0][hh * t * t..(hh + 1) * t * t];
        for i in 0..s {
            assert_eq!(
                &w[i * t..i * t + s],
                &[0.5; 4],
                "head {hh}: old row {i} keeps its weights"
            );
            assert_eq!(
                &w[i * t + s..(i + 1) * t],
                &[0.0; 2],
                "head {hh}: old row {i}: new keys get 0"
            );
        }
        let mut want = vec![0.0; (t - s) * t];
        cpu::softmax_rows(&x[hh * t * t + s * t..(hh + 1) * t * t], t, 1.0, &mut want);
        assert_close(
            &format!("head {hh} new rows"),
            &w[s * t..],
            &want,
            ATOL,
            RTOL,
        );
    }
}

#[test]
fn layernorm_matches_cpu_reference() {
    let Some(g) = gpu() else { return };
    for (rows, d) in [(1, 1), (3, 64), (5, 300), (2, 1000)] {
        let x = rand_vec(rows * d, d as u64, 10.0);
        let (gain, bias) = (rand_vec(d, 1, 1.0), rand_vec(d, 2, 0.5));
        let mut want = vec![0.0; rows * d];
        cpu::layernorm(&x, &gain, &bias, d, 1e-5, &mut want);
        let p = layernorm::Params {
            row0: 0,
            d: d as u32,
            eps: 1e-5,
            _pad: 0,
        };
        let got = run(
            &g,
            "layernorm",
            bytes_of(&p),
            &[f(&x), f(&gain), f(&bias), f(&vec![0.0; rows * d])],
            [rows as u32, 1, 1],
        );
        assert_close(
            &format!("layernorm d={d}"),
            &got[0][..rows * d],
            &want,
            ATOL,
            RTOL,
        );
    }
}

#[test]
fn linear_and_linear_rows_match_cpu_reference_including_the_transposed_lm_head() {
    let Some(g) = gpu() else { return };
    // act: 0 none, then the FFN's GELU (tanh, erf) fused into the first linear layer, on
    // outputs from −100 to 1e30 (biases that large)
    for (m, k, n, transposed, act) in [
        (1, 1, 1, false, None),
        (5, 17, 33, false, None),
        (37, 64, 48, false, None),
        (9, 40, 101, true, None),
        (6, 24, 70, false, Some(Activation::GeluTanh)),
        (11, 24, 70, false, Some(Activation::GeluErf)),
    ] {
        let x = rand_vec(m * k, 3, 1.0);
        let w = rand_vec(k * n, 4, 1.0);
        let mut b = rand_vec(n, 5, if act.is_some() { 8.0 } else { 1.0 });
        if act.is_some() {
            b[..5].copy_from_slice(&[0.0, 100.0, -100.0, 1e30, -1e30]);
        }
        let mut want = vec![0.0; m * n];
        if transposed {
            cpu::matmul_into(&x, &w, m, k, n, true, &mut want, 0.0);
        } else {
            cpu::linear(&x, &w, &b, m, k, n, &mut want);
        }
        if let Some(a) = act {
            cpu::gelu(&mut want, a);
        }
        let p = linear::Params {
            row0: 0,
            row1: m as u32,
            k: k as u32,
            n: n as u32,
            w_transposed: transposed as u32,
            has_bias: !transposed as u32,
            act: act.map_or(linear::ACT_NONE, linear::act),
            out_shift: 0,
        };
        // the tiled kernel, and the per-row one the engine uses for a keystroke's few rows
        for (kernel, groups) in [
            ("linear", [n.div_ceil(16) as u32, m.div_ceil(16) as u32, 1]),
            (
                "linear_rows",
                [n.div_ceil(64) as u32, m.div_ceil(8) as u32, 1],
            ),
        ] {
            let got = run(
                &g,
                kernel,
                bytes_of(&p),
                &[f(&x), f(&w), f(&b), f(&vec![0.0; m * n])],
                groups,
            );
            assert_close(
                &format!("{kernel} {m}×{k}×{n} act {act:?}"),
                &got[0][..m * n],
                &want,
                ATOL,
                RTOL,
            );
        }
    }
}

#[test]
fn add_layernorm_matches_cpu_reference() {
    let Some(g) = gpu() else { return };
    // D = 1, D < the workgroup, D > the workgroup (300, 1000 > 256), rows from row0 > 0
    for (rows, d, row0) in [(1, 1, 0), (3, 64, 0), (5, 300, 2), (2, 1000, 1)] {
        let n = (row0 + rows) * d;
        let a = rand_vec(n, d as u64 + 7, 10.0);
        let b = rand_vec(n, d as u64 + 8, 3.0);
        let (gain, beta) = (rand_vec(d, 1, 1.0), rand_vec(d, 2, 0.5));
        let (mut sum, mut out) = (vec![0.0; rows * d], vec![0.0; rows * d]);
        let r = row0 * d..n;
        cpu::add_layernorm(
            &a[r.clone()],
            &b[r.clone()],
            &gain,
            &beta,
            d,
            1e-5,
            &mut sum,
            &mut out,
        );
        let p = add_layernorm::Params {
            row0: row0 as u32,
            d: d as u32,
            eps: 1e-5,
            _pad: 0,
        };
        let got = run(
            &g,
            "add_layernorm",
            bytes_of(&p),
            &[
                f(&a),
                f(&b),
                f(&gain),
                f(&beta),
                f(&vec![9.0; n]),
                f(&vec![9.0; n]),
            ],
            [rows as u32, 1, 1],
        );
        let what = format!("add_layernorm rows {rows} d {d} from {row0}");
        assert_eq!(&got[0][r.clone()], &sum[..], "{what}: the sum");
        assert_close(&what, &got[1][r], &out, ATOL, RTOL);
        assert!(
            got[0][..row0 * d]
                .iter()
                .chain(&got[1][..row0 * d])
                .all(|&x| x == 9.0),
            "{what}: rows before row0 untouched"
        );
    }
}

#[test]
fn attn_scores_and_attn_v_match_cpu_reference() {
    let Some(g) = gpu() else { return };
    // (H, T, d_k, scale of q and k, scaling, causal): T = 1; d_k = 12 (not a power of two) and
    // T = 21 (441 pairs: not a multiple of the 64-wide workgroup); scores ≈ 1e4 unscaled; scores ≈ 1e30 (q, k
    // ≈ 1e14 over 64 dims) with the mask off
    for (h, t, dk, mag, scale, causal) in [
        (1, 1, 4, 1.0, 0.5, true),
        (3, 21, 12, 1.0, 1.0 / 12f32.sqrt(), true),
        (2, 40, 64, 30.0, 1.0, true),
        (2, 19, 64, 1.25e14, 0.125, false),
    ] {
        let p = t; // positions = t
        let q = rand_vec(h * t * dk, 11, mag);
        let k = rand_vec(h * t * dk, 12, mag);
        let v = rand_vec(h * t * dk, 13, 1.0);
        let params = attn_scores::Params {
            row0: 0,
            row1: t as u32,
            col0: 0,
            col1: t as u32,
            dk: dk as u32,
            positions: p as u32,
            scale,
            causal: causal as u32,
        };
        let zeros = || f(&vec![0.0; h * t * t]);
        let mut out = run(
            &g,
            "attn_scores",
            bytes_of(&params),
            &[f(&q), f(&k), zeros(), zeros(), zeros()],
            // the pairs spread over y (as step::flat_groups does past 65,535 workgroups)
            [
                1,
                (t * t).div_ceil(attn_scores::WG[0] as usize) as u32,
                h as u32,
            ],
        );
        let (raw, scaled, masked) = (out.remove(0), out.remove(0), out.remove(0));
        let mut w = vec![0.0; h * t * t];
        cpu::softmax_rows(&masked[..h * t * t], t, 1.0, &mut w);
        let pv = attn_v::Params {
            row0: 0,
            row1: t as u32,
            keys: t as u32,
            dk: dk as u32,
            positions: p as u32,
            d: (h * dk) as u32,
            ..Default::default()
        };
        let head_out = run(
            &g,
            "attn_v",
            bytes_of(&pv),
            &[
                f(&w),
                f(&v),
                f(&vec![0.0; h * t * dk]),
                f(&vec![0.0; t * h * dk]),
            ],
            [
                1,
                (t * dk).div_ceil(attn_v::WG[0] as usize) as u32,
                h as u32,
            ],
        )
        .remove(0);
        for hh in 0..h {
            let (tt, td) = (hh * t * t..(hh + 1) * t * t, hh * t * dk..(hh + 1) * t * dk);
            let (mut want_r, mut want_s, mut want_m) =
                (vec![0.0; t * t], vec![0.0; t * t], vec![0.0; t * t]);
            cpu::attn_scores(
                &q[td.clone()],
                &k[td.clone()],
                (t, t, dk),
                scale,
                causal.then_some(0),
                &mut want_r,
                &mut want_s,
                &mut want_m,
            );
            let what = |m: &str| format!("attn_scores {m}, H {h} T {t} d_k {dk} |q| {mag}");
            assert_close(
                &what("raw"),
                &raw[tt.clone()],
                &want_r,
                ATOL * mag * mag,
                RTOL,
            );
            // the GPU's own raw score times the scale: the same f32 multiply as on the CPU
            let mut from_gpu_raw = vec![0.0; t * t];
            cpu::scale_scores(&raw[tt.clone()], scale, &mut from_gpu_raw);
            assert_eq!(&scaled[tt.clone()], &from_gpu_raw[..], "{}", what("scaled"));
            assert_close(
                &what("scaled ≈ cpu"),
                &scaled[tt.clone()],
                &want_s,
                ATOL * mag * mag,
                RTOL,
            );
            for i in 0..t {
                for j in 0..t {
                    let (got, s) = (masked[tt.start + i * t + j], scaled[tt.start + i * t + j]);
                    let want = if causal && j > i { MASKED } else { s };
                    assert_eq!(got, want, "{} at ({i}, {j})", what("masked"));
                }
            }
            if mag < 1e3 {
                let mut want_o = vec![0.0; t * dk];
                cpu::attn_v(&w[tt], &v[td.clone()], t, t, dk, &mut want_o);
                assert_close("attn_v", &head_out[td], &want_o, ATOL, RTOL);
            }
        }
    }
}

#[test]
fn attn_scores_writes_only_its_region() {
    // an incremental forward: old queries [0, s) × new keys [s, t); all else keeps its value
    let Some(g) = gpu() else { return };
    let (h, pos, t, s, dk) = (2usize, 24usize, 20usize, 17usize, 12usize);
    let q = rand_vec(h * pos * dk, 5, 1.0);
    let k = rand_vec(h * pos * dk, 6, 1.0);
    let params = attn_scores::Params {
        row0: 0,
        row1: s as u32,
        col0: s as u32,
        col1: t as u32,
        dk: dk as u32,
        positions: pos as u32,
        scale: 0.25,
        causal: 1,
    };
    let before = || f(&vec![7.0; h * pos * pos]);
    let mut out = run(
        &g,
        "attn_scores",
        bytes_of(&params),
        &[f(&q), f(&k), before(), before(), before()],
        [
            (s * (t - s)).div_ceil(attn_scores::WG[0] as usize) as u32,
            1,
            h as u32,
        ],
    );
    let (raw, masked) = (out.remove(0), out.remove(1));
    for hh in 0..h {
        for i in 0..pos {
            for j in 0..pos {
                let idx = (hh * pos + i) * pos + j;
                if i < s && (s..t).contains(&j) {
                    let qi = &q[(hh * pos + i) * dk..][..dk];
                    let kj = &k[(hh * pos + j) * dk..][..dk];
                    let dot: f32 = qi.iter().zip(kj).map(|(a, b)| a * b).sum();
                    assert!((raw[idx] - dot).abs() <= 1e-5, "raw ({hh}, {i}, {j})");
                    assert_eq!(masked[idx], MASKED, "the future of an old query is masked");
                } else {
                    assert_eq!(
                        (raw[idx], masked[idx]),
                        (7.0, 7.0),
                        "outside ({hh}, {i}, {j})"
                    );
                }
            }
        }
    }
}

#[test]
fn embed_split_attn_v_concat_ablation_and_pack_match_cpu_reference() {
    let Some(g) = gpu() else { return };
    let (v, pos, d) = (11usize, 8usize, 6usize);
    let (wte, wpe) = (rand_vec(v * d, 31, 1.0), rand_vec(pos * d, 32, 1.0));
    let tokens: Vec<u32> = vec![3, 10, 0, 7, 7];
    // 1: GPT-2's plain sum; √6: scale_embedding (not a power of two, so not exact by luck)
    for scale in [1.0f32, 6f32.sqrt()] {
        let mut want = vec![0.0; tokens.len() * d];
        cpu::embed(&wte, &wpe, &tokens, 0, d, scale, &mut want);
        let p = embed::Params {
            row0: 0,
            row1: 5,
            d: d as u32,
            scale,
        };
        let got = run(
            &g,
            "embed",
            bytes_of(&p),
            &[
                bytemuck::cast_slice(&tokens).to_vec(),
                f(&wte),
                f(&wpe),
                f(&vec![0.0; pos * d]),
            ],
            [1, 1, 1],
        );
        // a·s + b: one rounding more if the GPU fuses it (an FMA), never more than 1 ulp
        let tol = if scale == 1.0 { 0.0 } else { 1e-6 };
        assert_close(
            &format!("embed × {scale}"),
            &got[0][..5 * d],
            &want,
            tol,
            tol,
        );
    }
    // split → concat is the identity; ablation zeroes exactly one head
    let (t, h, dk) = (5usize, 3usize, 4usize);
    let dd = h * dk;
    let qkv = rand_vec(t * 3 * dd, 51, 1.0);
    let p = split_heads::Params {
        row0: 0,
        row1: t as u32,
        d: dd as u32,
        dk: dk as u32,
        positions: t as u32,
        ..Default::default()
    };
    let z = vec![0.0; h * t * dk];
    let qkv_split = run(
        &g,
        "split_heads",
        bytes_of(&p),
        &[f(&qkv), f(&z), f(&z), f(&z)],
        [1, 1, 1],
    );
    assert_eq!(
        qkv_split[1][(2 * t + 4) * dk + 1],
        qkv[4 * 3 * dd + dd + 2 * dk + 1],
        "k of head 2, row 4"
    );
    // attn_v over the split v: each head's weighted sum, side by side in concat; head 1
    // switched off by the mask gives exactly 0 in both
    let mut w = rand_vec(h * t * t, 52, 2.0);
    for row in 0..h * t {
        cpu::causal_mask(&mut w[row * t..(row + 1) * t], t, row % t);
    }
    let mut wt = vec![0.0; h * t * t];
    cpu::softmax_rows(&w, t, 1.0, &mut wt);
    let (lo, hi) = attn_v::ablation_mask(&[(0, 1), (1, 0)].into(), 0);
    assert_eq!((lo, hi), (0b10, 0), "layer 0's mask holds head 1 only");
    let p = attn_v::Params {
        row0: 0,
        row1: t as u32,
        keys: t as u32,
        dk: dk as u32,
        positions: t as u32,
        d: dd as u32,
        ablate_lo: lo,
        ablate_hi: hi,
    };
    let mut out = run(
        &g,
        "attn_v",
        bytes_of(&p),
        &[f(&wt), f(&qkv_split[2]), f(&z), f(&vec![7.0; t * dd])],
        [
            (t * dk).div_ceil(attn_v::WG[0] as usize) as u32,
            1,
            h as u32,
        ],
    );
    let (head_out, concat) = (out.remove(0), out.remove(0));
    for hh in 0..h {
        let mut want = vec![0.0; t * dk];
        if hh != 1 {
            let (wh, vh) = (
                &wt[hh * t * t..][..t * t],
                &qkv_split[2][hh * t * dk..][..t * dk],
            );
            cpu::attn_v(wh, vh, t, t, dk, &mut want);
        }
        let got = &head_out[hh * t * dk..][..t * dk];
        assert_close(&format!("attn_v head {hh}"), got, &want, ATOL, RTOL);
        for r in 0..t {
            assert_eq!(
                &concat[r * dd + hh * dk..][..dk],
                &got[r * dk..][..dk],
                "concat row {r} head {hh}"
            );
        }
    }
    assert!(head_out[t * dk..2 * t * dk].iter().all(|&x| x == 0.0));
    // pack_scores: the first T of P rows × columns of four (H, P, P) matrices, compacted
    let (pos, tt) = (7usize, 4usize);
    let mats: Vec<Vec<f32>> = (0..4)
        .map(|m| rand_vec(h * pos * pos, 60 + m, 1.0))
        .collect();
    let p = pack_scores::Params {
        t: tt as u32,
        positions: pos as u32,
        heads: h as u32,
        dst_offset: 3,
    };
    let mut bufs: Vec<Vec<u8>> = mats.iter().map(|m| f(m)).collect();
    bufs.push(f(&vec![-1.0; 3 + 4 * h * tt * tt]));
    let packed = run(&g, "pack_scores", bytes_of(&p), &bufs, [1, h as u32, 4]).remove(0);
    assert_eq!(&packed[..3], &[-1.0; 3], "before dst_offset");
    for (m, src) in mats.iter().enumerate() {
        for hh in 0..h {
            for i in 0..tt {
                for j in 0..tt {
                    assert_eq!(
                        packed[3 + ((m * h + hh) * tt + i) * tt + j],
                        src[(hh * pos + i) * pos + j],
                        "matrix {m} head {hh} ({i}, {j})"
                    );
                }
            }
        }
    }
}

#[test]
fn a_step_refuses_shapes_its_buffers_cannot_hold_and_picks_the_kernel_and_grid_by_rows() {
    let Some(g) = gpu() else { return };
    use attnlab_gpu::linear::{Buffers, Weight, ACT_NONE};
    let (k, n, rows) = (8, 24, 20);
    let params = g.uniform_slots("params", 1);
    let x = g.storage("x", rows * k);
    let w = g.storage("w", k * n);
    let b = g.storage("b", n);
    let out = g.storage("out", rows * n);
    let bound = linear::bind(
        &g,
        &params,
        Buffers {
            x: &x,
            w: &w,
            b: &b,
            out: &out,
        },
    );
    // fits: on a GPU, the tiled kernel for many rows and the per-row one for a keystroke's
    // few; on an adapter that runs on the CPU, the per-row one always
    let gpu_tiles = linear::tile_from(true);
    let many = linear::step(
        &bound,
        0..rows,
        (k, n),
        Weight::WithBias,
        ACT_NONE,
        gpu_tiles,
    );
    assert_eq!(
        many.map(|s| (s.kernel, s.grid)).unwrap(),
        ("linear", [2, 2, 1])
    );
    let few = linear::step(
        &bound,
        17..rows,
        (k, n),
        Weight::WithBias,
        ACT_NONE,
        gpu_tiles,
    );
    assert_eq!(
        few.map(|s| (s.kernel, s.grid)).unwrap(),
        ("linear_rows", [1, 1, 1])
    );
    let cpu_rows = linear::tile_from(false);
    let all = linear::step(
        &bound,
        0..rows,
        (k, n),
        Weight::WithBias,
        ACT_NONE,
        cpu_rows,
    );
    // 20 rows in groups of 8: 3 groups
    assert_eq!(
        all.map(|s| (s.kernel, s.grid)).unwrap(),
        ("linear_rows", [1, 3, 1])
    );
    // one row too many, or a wider W than bound: an error naming the buffer, before any dispatch
    let e = linear::step(&bound, 0..rows + 1, (k, n), Weight::WithBias, ACT_NONE, 9).unwrap_err();
    assert!(
        matches!(&e, GpuError::Shape(m) if m.contains("linear: x")),
        "{e}"
    );
    let e = linear::step(&bound, 0..4, (k, 2 * n), Weight::WithBias, ACT_NONE, 9).unwrap_err();
    assert!(
        matches!(&e, GpuError::Shape(m) if m.contains("W needs")),
        "{e}"
    );
    // per-head kernels check their rows against the positions the buffers hold
    let heads = attnlab_gpu::step::Heads {
        count: 2,
        dk: 4,
        positions: 8,
    };
    let m = |name| g.storage(name, heads.square_len());
    let (q, kk) = (
        g.storage("q", heads.dk_len()),
        g.storage("k", heads.dk_len()),
    );
    let (raw, scaled, masked) = (m("raw"), m("scaled"), m("masked"));
    let sb = attn_scores::bind(
        &g,
        &params,
        attn_scores::Buffers {
            q: &q,
            k: &kk,
            raw: &raw,
            scaled: &scaled,
            masked: &masked,
        },
    );
    assert!(attn_scores::step(&sb, 0..8, 0..8, heads, 0.5, true).is_ok());
    assert!(attn_scores::step(&sb, 0..9, 0..9, heads, 0.5, true).is_err());
}

#[test]
fn rms_norm_matches_cpu_reference() {
    let Some(g) = gpu() else { return };
    for (rows, d) in [(1, 1), (3, 64), (5, 576), (2, 1000)] {
        let x = rand_vec(rows * d, d as u64, 10.0);
        let gain = rand_vec(d, 1, 1.0);
        let mut want = vec![0.0; rows * d];
        attnlab_model::llama::rms_norm(&x, &gain, d, 1e-5, &mut want);
        let p = rms_norm::Params {
            row0: 0,
            d: d as u32,
            eps: 1e-5,
            _pad: 0,
        };
        let got = run(
            &g,
            "rms_norm",
            bytes_of(&p),
            &[f(&x), f(&gain), f(&vec![0.0; rows * d])],
            [rows as u32, 1, 1],
        );
        assert_close(
            &format!("rms_norm d={d}"),
            &got[0][..rows * d],
            &want,
            ATOL,
            RTOL,
        );
    }
}

#[test]
fn rope_matches_cpu_reference_on_both_pair_layouts_and_a_later_row_range() {
    use attnlab_model::llama::{rope as cpu_rope, rope_table, RopePairs};
    let Some(g) = gpu() else { return };
    for (t, heads, dk, pairs, rows) in [
        (1, 1, 2, RopePairs::Adjacent, 0..1),
        (7, 3, 8, RopePairs::Halves, 0..7),
        (40, 9, 64, RopePairs::Adjacent, 0..40),
        (40, 3, 64, RopePairs::Halves, 0..40),
        (12, 2, 16, RopePairs::Adjacent, 5..12),
    ] {
        let inv_freq: Vec<f32> = (0..dk / 2)
            .map(|i| 10_000f32.powf(-2.0 * i as f32 / dk as f32))
            .collect();
        let table = rope_table(&inv_freq, t);
        let x = rand_vec(t * heads * dk, dk as u64 + t as u64, 2.0);
        let mut want = x.clone();
        cpu_rope(&mut want, heads, dk, &table, pairs);
        // rows before the range stay as they were
        let w = heads * dk;
        want[..rows.start * w].copy_from_slice(&x[..rows.start * w]);
        let p = rope::Params {
            row0: rows.start as u32,
            row1: rows.end as u32,
            heads: heads as u32,
            dk: dk as u32,
            pos0: 0,
            halves: u32::from(pairs == RopePairs::Halves),
            ..Default::default()
        };
        let items = (rows.end - rows.start) * heads * dk / 2;
        let got = run(
            &g,
            "rope",
            bytes_of(&p),
            &[f(&table), f(&x)],
            [(items as u32).div_ceil(rope::WG[0]), 1, 1],
        );
        assert_close(
            &format!("rope t={t} heads={heads} dk={dk} {pairs:?} rows {rows:?}"),
            &got[0][..t * w],
            &want,
            ATOL,
            RTOL,
        );
    }
}

#[test]
fn swiglu_matches_cpu_reference_and_leaves_elements_outside_its_range() {
    let Some(g) = gpu() else { return };
    for (from, n) in [(0, 1), (0, 255), (3, 257), (100, 70_000)] {
        let gate = rand_vec(n, n as u64, 12.0);
        let up = rand_vec(n, 7, 3.0);
        let mut want = gate.clone();
        attnlab_model::llama::swiglu(&mut want[from..], &up[from..]);
        let p = swiglu::Params {
            start: from as u32,
            end: n as u32,
            ..Default::default()
        };
        let got = run(
            &g,
            "swiglu",
            bytes_of(&p),
            &[f(&gate), f(&up)],
            [((n - from) as u32).div_ceil(swiglu::WG[0]), 1, 1],
        );
        assert_close(
            &format!("swiglu {from}..{n}"),
            &got[0][..n],
            &want,
            ATOL,
            RTOL,
        );
        assert_eq!(got[0][..from], gate[..from], "swiglu {from}..{n}");
    }
}

#[test]
fn residual_add_matches_cpu_reference_on_its_rows_only() {
    let Some(g) = gpu() else { return };
    for (row0, row1, d) in [(0, 1, 1), (0, 5, 576), (3, 9, 33)] {
        let a = rand_vec(row1 * d, 1, 2.0);
        let b = rand_vec(row1 * d, 2, 2.0);
        let mut want = vec![0.0; (row1 - row0) * d];
        cpu::residual_add(&a[row0 * d..], &b[row0 * d..], &mut want);
        let p = residual_add::Params {
            row0: row0 as u32,
            row1: row1 as u32,
            d: d as u32,
            ..Default::default()
        };
        let n = ((row1 - row0) * d) as u32;
        let got = run(
            &g,
            "residual_add",
            bytes_of(&p),
            &[f(&a), f(&b), f(&vec![9.0; row1 * d])],
            [n.div_ceil(residual_add::WG[0]), 1, 1],
        );
        let what = format!("residual_add rows {row0}..{row1} of {d}");
        assert_close(&what, &got[0][row0 * d..row1 * d], &want, ATOL, RTOL);
        assert!(got[0][..row0 * d].iter().all(|&v| v == 9.0), "{what}");
    }
}

#[test]
fn gather_heads_gives_each_query_head_its_key_value_head() {
    let Some(g) = gpu() else { return };
    // (heads, group, dk, positions, rows): multi-head (group 1), grouped-query (SmolLM2's 9
    // heads on 3), multi-query (one key/value head), a later row range
    for (h, group, dk, positions, rows) in [
        (4, 1, 8, 6, 0..6),
        (9, 3, 64, 8, 0..5),
        (4, 4, 16, 5, 0..5),
        (6, 2, 8, 10, 7..10),
    ] {
        let width = h / group * dk;
        let src = rand_vec(rows.end * width, h as u64, 1.0);
        let p = gather_heads::Params {
            row0: rows.start as u32,
            row1: rows.end as u32,
            heads: h as u32,
            dk: dk as u32,
            positions: positions as u32,
            group: group as u32,
            ..Default::default()
        };
        let n = (rows.len() * h * dk) as u32;
        let got = run(
            &g,
            "gather_heads",
            bytes_of(&p),
            &[f(&src), f(&vec![5.0; h * positions * dk])],
            [n.div_ceil(gather_heads::WG[0]), 1, 1],
        );
        for head in 0..h {
            for r in 0..positions {
                let at = (head * positions + r) * dk;
                let got = &got[0][at..at + dk];
                if rows.contains(&r) {
                    let from = r * width + head / group * dk;
                    assert_eq!(got, &src[from..from + dk], "head {head} row {r}");
                } else {
                    assert!(got.iter().all(|&v| v == 5.0), "head {head} row {r} written");
                }
            }
        }
    }
}

/// Rows of random blocks of `ty`: random bytes with each block's f16 scale (and minimum) set
/// to small finite values, as llama.cpp's quantizers leave them.
fn random_blocks(
    ty: attnlab_model::gguf::GgmlType,
    rows: usize,
    cols: usize,
    seed: u64,
) -> Vec<u8> {
    use attnlab_model::gguf::GgmlType as T;
    let (block, size) = ty.block().unwrap();
    let n = rows * cols / block;
    let mut bytes: Vec<u8> = rand_vec(n * size, seed, 1.0)
        .iter()
        .map(|x| ((x + 1.0) * 127.9) as u8)
        .collect();
    let mut scales = rand_vec(2 * n, seed + 1, 0.05);
    // the first block's scale an f16 subnormal (below 6.1e-5), negative
    scales[0] = -3e-6;
    for b in 0..n {
        let half = |x: f32| half::f16::from_f32(x).to_le_bytes();
        let at = b * size;
        match ty {
            T::Q4_0 | T::Q8_0 | T::Q5_0 => bytes[at..at + 2].copy_from_slice(&half(scales[2 * b])),
            T::Q4_1 | T::Q5_1 | T::Q4_K | T::Q5_K => {
                bytes[at..at + 2].copy_from_slice(&half(scales[2 * b]));
                bytes[at + 2..at + 4].copy_from_slice(&half(scales[2 * b + 1]));
            }
            T::Q6_K => bytes[at + 208..at + 210].copy_from_slice(&half(scales[2 * b])),
            // F16 and BF16: every value its own small number
            T::F16 => bytes[at..at + 2].copy_from_slice(&half(scales[2 * b] * 20.0)),
            _ => bytes[at..at + 2]
                .copy_from_slice(&half::bf16::from_f32(scales[2 * b] * 20.0).to_le_bytes()),
        }
    }
    bytes
}

#[test]
fn qmatmul_matches_cpu_reference_on_every_block_type_it_reads() {
    use attnlab_model::gguf::GgmlType;
    use attnlab_model::qmatrix::{QMatrix, Storage};
    let Some(g) = gpu() else { return };
    for ty in qmatmul::TYPES {
        // rows of x: one, a few less than ROWS, more than ROWS and not a multiple of it
        for (m, k, n, row0) in [
            (1, 32usize, 1, 0),
            (5, 64, 33, 0),
            (7, 576, 70, 3),
            (9, 64, 5, 1),
        ] {
            // the K-quants' blocks are 256 wide
            let k = k.next_multiple_of(ty.block().unwrap().0);
            let seed = (k + n) as u64;
            let (storage, bytes) = if ty == GgmlType::F32 {
                let v = rand_vec(n * k, seed, 0.5);
                (Storage::F32(v.clone()), f(&v))
            } else {
                let bytes = random_blocks(ty, n, k, seed);
                (
                    Storage::Blocks {
                        ty,
                        bytes: bytes.clone(),
                    },
                    bytes,
                )
            };
            let w = QMatrix {
                rows: n,
                cols: k,
                storage,
            };
            let x = rand_vec((row0 + m) * k, m as u64, 1.0);
            let bias = rand_vec(n, seed + 7, 1.0);
            for with_bias in [false, true] {
                let mut want = vec![0.0; m * n];
                w.matmul_t(&x[row0 * k..], m, &mut want);
                if with_bias {
                    for (y, b) in want.iter_mut().zip(bias.iter().cycle()) {
                        *y += b;
                    }
                }
                let mut padded = bytes.clone();
                padded.resize(bytes.len().next_multiple_of(4), 0);
                let p = qmatmul::Params {
                    m: m as u32,
                    k: k as u32,
                    n: n as u32,
                    ty: ty.0,
                    row_bytes: qmatmul::row_bytes(ty, k).unwrap() as u32,
                    row0: row0 as u32,
                    bias: with_bias.into(),
                    ..Default::default()
                };
                let got = run(
                    &g,
                    "qmatmul",
                    bytes_of(&p),
                    &[f(&x), padded, f(&bias), f(&vec![0.0; (row0 + m) * n])],
                    [
                        (n as u32).div_ceil(qmatmul::WG[0]),
                        m.div_ceil(qmatmul::ROWS) as u32,
                        1,
                    ],
                );
                let what = format!(
                    "qmatmul {} m={m} k={k} n={n} from row {row0}, bias {with_bias}",
                    ty.name()
                );
                // sums of k products whose terms reach hundreds (a K-quant's 8-bit scales):
                // within ATOL of the largest output, as f32 sums in another order differ
                let largest = want.iter().fold(1f32, |a, x| a.max(x.abs()));
                let got_rows = &got[0][row0 * n..(row0 + m) * n];
                assert_close(&what, got_rows, &want, ATOL * largest, RTOL);
                // rows outside the range are left alone
                assert!(got[0][..row0 * n].iter().all(|&v| v == 0.0), "{what}");
            }
        }
    }
    // a type the kernel does not read is refused by name
    let e = qmatmul::row_bytes(attnlab_model::gguf::GgmlType(10), 256).unwrap_err();
    assert!(e.to_string().contains("Q2_K"), "{e}");
    // and a row that is not whole blocks
    assert!(qmatmul::row_bytes(attnlab_model::gguf::GgmlType::Q4_K, 576).is_err());
}

#[test]
fn qembed_reads_each_tokens_row_of_every_type_it_reads() {
    use attnlab_model::gguf::GgmlType;
    use attnlab_model::qmatrix::{QMatrix, Storage};
    let Some(g) = gpu() else { return };
    let (vocab, d) = (7, 256);
    let tokens: [u32; 5] = [3, 0, 6, 3, 1];
    for ty in qmatmul::TYPES {
        let (storage, bytes) = if ty == GgmlType::F32 {
            let v = rand_vec(vocab * d, 3, 0.5);
            (Storage::F32(v.clone()), f(&v))
        } else {
            let bytes = random_blocks(ty, vocab, d, 5);
            (
                Storage::Blocks {
                    ty,
                    bytes: bytes.clone(),
                },
                bytes,
            )
        };
        let w = QMatrix {
            rows: vocab,
            cols: d,
            storage,
        };
        let mut padded = bytes;
        padded.resize(padded.len().next_multiple_of(4), 0);
        // rows 1.. only: row 0 stays as it was
        let p = qembed::Params {
            row0: 1,
            row1: tokens.len() as u32,
            d: d as u32,
            ty: ty.0,
            row_bytes: qmatmul::row_bytes(ty, d).unwrap() as u32,
            ..Default::default()
        };
        let got = run(
            &g,
            "qembed",
            bytes_of(&p),
            &[
                bytemuck::cast_slice(&tokens).to_vec(),
                padded,
                f(&vec![2.0; tokens.len() * d]),
            ],
            [((tokens.len() - 1) * d).div_ceil(256) as u32, 1, 1],
        );
        let mut want = vec![0.0; d];
        assert!(got[0][..d].iter().all(|&v| v == 2.0), "{}", ty.name());
        for (r, &t) in tokens.iter().enumerate().skip(1) {
            w.rows_into(t as usize, &mut want);
            assert_close(
                &format!("qembed {} row {r} (token {t})", ty.name()),
                &got[0][r * d..(r + 1) * d],
                &want,
                ATOL,
                RTOL,
            );
        }
    }
}

/// The fused attention (online softmax, keys through workgroup memory) against its CPU twin
/// and against the three steps the views show: one query; 70 queries (more than a
/// workgroup's 64) and keys that are not a multiple of the tile; rows that start inside the
/// text (an incremental forward: queries 9..14 of 14 keys); the mask off; d_k 128 (the most
/// a tile holds) with large scores; a tiny and a large τ; a head switched off; 1,100 keys of
/// 64 values (a query's loops past 65,536 iterations, which llvmpipe cuts off, wrote nothing
/// from 500 keys on before the loops went four vec4s at a time).
#[test]
fn attn_fused_matches_its_cpu_twin_and_the_three_steps() {
    let Some(g) = gpu() else { return };
    // (H, positions, first row, d_k, scale of q and k, causal, τ, ablated head)
    for (h, t, row0, dk, mag, causal, tau, off) in [
        (1, 1, 0, 4, 1.0, true, 1.0, None),
        (2, 70, 0, 12, 1.0, true, 1.0, None),
        (3, 14, 9, 64, 2.0, true, 1.0, Some(1)),
        (2, 37, 0, 64, 2.0, false, 1.0, None),
        (1, 33, 0, 128, 6.0, true, 1.0, None),
        (2, 20, 0, 8, 1.0, true, 0.02, None),
        (2, 20, 3, 8, 1.0, true, 50.0, None),
        (1, 1100, 0, 64, 1.0, true, 1.0, None),
    ] {
        let q = rand_vec(h * t * dk, 21, mag);
        let k = rand_vec(h * t * dk, 22, mag);
        let v = rand_vec(h * t * dk, 23, 1.0);
        let scale = 1.0 / (dk as f32).sqrt();
        let ablate: std::collections::BTreeSet<(usize, usize)> =
            off.map(|o| (0, o)).into_iter().collect();
        let (lo, hi) = attn_v::ablation_mask(&ablate, 0);
        let params = attn_fused::Params {
            row0: row0 as u32,
            row1: t as u32,
            keys: t as u32,
            dk: dk as u32,
            positions: t as u32,
            d: (h * dk) as u32,
            scale,
            tau,
            causal: causal as u32,
            ablate_lo: lo,
            ablate_hi: hi,
            _pad0: 0,
        };
        let unset = -7.0;
        let mut out = run(
            &g,
            "attn_fused",
            bytes_of(&params),
            &[
                f(&q),
                f(&k),
                f(&v),
                f(&vec![unset; h * t * dk]),
                f(&vec![unset; t * h * dk]),
            ],
            [
                (t - row0).div_ceil(attn_fused::WG[0] as usize) as u32,
                h as u32,
                1,
            ],
        );
        let (head_out, concat) = (out.remove(0), out.remove(0));
        let what = format!(
            "attn_fused H {h} T {t} from {row0} d_k {dk} |q| {mag} causal {causal} τ {tau}"
        );
        for hh in 0..h {
            let td = hh * t * dk..(hh + 1) * t * dk;
            let (qh, kh, vh) = (&q[td.clone()], &k[td.clone()], &v[td.clone()]);
            let n = t - row0;
            let from = causal.then_some(row0);
            let mut twin = vec![0.0; n * dk];
            let dims = (n, t, dk);
            cpu::attn_fused(&qh[row0 * dk..], kh, vh, dims, scale, tau, from, &mut twin);
            let mut steps = attnlab_model::testing::attention_in_steps(
                &qh[row0 * dk..],
                kh,
                vh,
                dims,
                scale,
                tau,
                from,
            );
            if off == Some(hh) {
                twin.fill(0.0);
                steps.fill(0.0);
            }
            let got = &head_out[td.start + row0 * dk..td.end];
            assert_close(
                &format!("{what}, head {hh} vs its twin"),
                got,
                &twin,
                ATOL,
                RTOL,
            );
            assert_close(
                &format!("{what}, head {hh} vs the steps"),
                got,
                &steps,
                ATOL,
                RTOL,
            );
            // the rows before row0 are not written; concat holds the same numbers side by side
            assert!(head_out[td.start..td.start + row0 * dk]
                .iter()
                .all(|&x| x == unset));
            for i in row0..t {
                let c = &concat[i * h * dk + hh * dk..][..dk];
                assert_eq!(
                    c,
                    &head_out[td.start + i * dk..][..dk],
                    "{what}: concat row {i}"
                );
            }
        }
    }
}

/// The pooled rows (cells of `span` keys, then the five role terms) against the weights the
/// views compute on the CPU: one query; 70 queries over more than a workgroup, keys not a
/// multiple of the tile, span 4 with a last partial cell; rows that start inside the text;
/// the mask off; d_k 128 with large scores; tiny and large τ; 1,100 keys (the loops that
/// llvmpipe cuts off past 65,536 iterations); cells fewer than the keys need (the last
/// ones dropped, as `Pooled` drops them).
#[test]
fn attn_pool_matches_the_weights_pooled_on_the_cpu() {
    let Some(g) = gpu() else { return };
    // (H, positions, first row, d_k, scale of q and k, causal, τ, span, side)
    for (h, t, row0, dk, mag, causal, tau, span, side) in [
        (1, 1, 0, 4, 1.0, true, 1.0, 1, 4),
        (2, 70, 0, 12, 1.0, true, 1.0, 4, 18),
        (3, 14, 9, 64, 2.0, true, 1.0, 1, 14),
        (2, 37, 0, 64, 2.0, false, 1.0, 2, 19),
        (1, 33, 0, 128, 6.0, true, 1.0, 1, 33),
        (2, 20, 0, 8, 1.0, true, 0.02, 2, 10),
        (2, 20, 3, 8, 1.0, true, 50.0, 8, 3),
        (1, 1100, 0, 64, 1.0, true, 1.0, 32, 35),
        (1, 40, 0, 16, 1.0, true, 1.0, 2, 8),
    ] {
        let q = rand_vec(h * t * dk, 31, mag);
        let k = rand_vec(h * t * dk, 32, mag);
        let scale = 1.0 / (dk as f32).sqrt();
        let params = attn_pool::Params {
            row0: row0 as u32,
            row1: t as u32,
            keys: t as u32,
            dk: dk as u32,
            positions: t as u32,
            span: span as u32,
            side: side as u32,
            scale,
            tau,
            causal: causal as u32,
            _pad0: 0,
            _pad1: 0,
        };
        let n = t - row0;
        let width = attn_pool::row_len(side);
        let out = run(
            &g,
            "attn_pool",
            bytes_of(&params),
            &[f(&q), f(&k), f(&vec![-7.0; h * n * width])],
            [n.div_ceil(attn_pool::WG[0] as usize) as u32, h as u32, 1],
        );
        let what = format!("attn_pool H {h} T {t} from {row0} d_k {dk} causal {causal} τ {tau} span {span} side {side}");
        for hh in 0..h {
            let td = hh * t * dk..(hh + 1) * t * dk;
            let (mut scores, mut scaled, mut masked) =
                (vec![0.0; n * t], vec![0.0; n * t], vec![0.0; n * t]);
            cpu::attn_scores(
                &q[td.start + row0 * dk..td.end],
                &k[td.clone()],
                (n, t, dk),
                scale,
                causal.then_some(row0),
                &mut scores,
                &mut scaled,
                &mut masked,
            );
            let mut w = vec![0.0; n * t];
            cpu::softmax_rows(&masked, t, tau, &mut w);
            for r in 0..n {
                let (i, row) = (row0 + r, &w[r * t..(r + 1) * t]);
                let got = &out[0][(hh * n + r) * width..][..width];
                let mut cells = vec![0.0f32; side];
                for (j, &x) in row.iter().enumerate() {
                    if j / span < side {
                        cells[j / span] += x;
                    }
                }
                assert_close(
                    &format!("{what}: head {hh} row {i} cells"),
                    &got[..side],
                    &cells,
                    ATOL,
                    RTOL,
                );
                if i > 0 {
                    let terms = attnlab_model::roles::row_terms(row, i, causal).map(|x| x as f32);
                    assert_close(
                        &format!("{what}: head {hh} row {i} terms"),
                        &got[side..],
                        &terms,
                        1e-4,
                        1e-3,
                    );
                }
            }
        }
    }
}
