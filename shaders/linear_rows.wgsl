// linear_rows: out = x · W + b for rows [row0, row1) — on a GPU the few rows a keystroke
// adds; on an adapter that runs on the CPU (SwiftShader, lavapipe) every row.
// One invocation per output column and per group of up to 8 rows, looping over k, with no
// workgroup memory or barriers: a scalar sum for one row (most keystrokes), two vec4 sums
// for more (no dynamically indexed array, which software GPUs keep in memory). (The tiled
// `linear` computes 16 rows per workgroup, so for one new row it does 16× the work; on a GPU
// it wins back for many rows through workgroup-memory reuse.)
// Same Params and bindings as `linear`; W is (K, N), or (N, K) when w_transposed = 1; act as
// in `linear` (activation.wgsl, put in front of this file).

struct Params {
    row0: u32,
    row1: u32,
    k: u32,
    n: u32,
    w_transposed: u32,
    has_bias: u32,
    act: u32,
    out_shift: u32,   // out's row r holds x's row r + out_shift (0, or the first row alone)
}

// ROWS (rows per invocation) comes from the header kernels.rs writes: linear_rows::MAX_ROWS

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;          // (P, K)
@group(0) @binding(2) var<storage, read> w: array<f32>;          // (K, N) or (N, K)
@group(0) @binding(3) var<storage, read> b: array<f32>;          // (N)
@group(0) @binding(4) var<storage, read_write> out: array<f32>;  // (P, N)

@compute @workgroup_size(WG_X, WG_Y, WG_Z)
fn linear_rows(@builtin(global_invocation_id) gid: vec3<u32>) {
    let c = gid.x;                     // output column
    let r0 = p.row0 + gid.y * ROWS;    // first row of this group
    if (c >= p.n || r0 >= p.row1) {
        return;
    }
    let rows = min(ROWS, p.row1 - r0);
    // each of the (up to) four rows' offset in x; past the last row, the last row again (its
    // products are computed and not stored)
    let last = p.row1 - 1u;
    let x0 = r0 * p.k;
    let x1 = min(r0 + 1u, last) * p.k;
    let x2 = min(r0 + 2u, last) * p.k;
    let x3 = min(r0 + 3u, last) * p.k;
    let x4 = min(r0 + 4u, last) * p.k;
    let x5 = min(r0 + 5u, last) * p.k;
    let x6 = min(r0 + 6u, last) * p.k;
    let x7 = min(r0 + 7u, last) * p.k;
    var acc = vec4<f32>(0.0);
    var acc2 = vec4<f32>(0.0);
    if (rows == 1u) {
        // one row (most keystrokes): a scalar sum
        var a = 0.0;
        if (p.w_transposed == 1u) {
            let wc = c * p.k;
            for (var kk = 0u; kk < p.k; kk = kk + 1u) {
                a = a + x[x0 + kk] * w[wc + kk];
            }
        } else {
            for (var kk = 0u; kk < p.k; kk = kk + 1u) {
                a = a + x[x0 + kk] * w[kk * p.n + c];
            }
        }
        acc.x = a;
    } else if (p.w_transposed == 1u) {
        let wc = c * p.k;
        for (var kk = 0u; kk < p.k; kk = kk + 1u) {
            let wv = w[wc + kk];
            acc = acc + vec4<f32>(x[x0 + kk], x[x1 + kk], x[x2 + kk], x[x3 + kk]) * wv;
            acc2 = acc2 + vec4<f32>(x[x4 + kk], x[x5 + kk], x[x6 + kk], x[x7 + kk]) * wv;
        }
    } else {
        for (var kk = 0u; kk < p.k; kk = kk + 1u) {
            let wv = w[kk * p.n + c];
            acc = acc + vec4<f32>(x[x0 + kk], x[x1 + kk], x[x2 + kk], x[x3 + kk]) * wv;
            acc2 = acc2 + vec4<f32>(x[x4 + kk], x[x5 + kk], x[x6 + kk], x[x7 + kk]) * wv;
        }
    }
    // pass 2: bias and store
    var bias = 0.0;
    if (p.has_bias == 1u) {
        bias = b[c];
    }
    for (var i = 0u; i < min(rows, 4u); i = i + 1u) {
        out[(r0 + i - p.out_shift) * p.n + c] = activate(acc[i] + bias, p.act);
    }
    for (var i = 4u; i < rows; i = i + 1u) {
        out[(r0 + i - p.out_shift) * p.n + c] = activate(acc2[i - 4u] + bias, p.act);
    }
}
