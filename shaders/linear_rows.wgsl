// linear_rows: out = x · W + b for a few rows [row0, row1) — the rows a keystroke adds.
// One invocation per output column and per group of up to 8 rows, looping over k: no idle
// work. (The tiled `linear` computes 16 rows per workgroup, so for one new row it does 16×
// the work; it wins back for many rows through workgroup-memory reuse.)
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
    _pad: u32,
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
    // pass 1: dot products of up to ROWS rows with column c of W
    var acc: array<f32, 8>;
    for (var kk = 0u; kk < p.k; kk = kk + 1u) {
        var wv: f32;
        if (p.w_transposed == 1u) {
            wv = w[c * p.k + kk];
        } else {
            wv = w[kk * p.n + c];
        }
        for (var i = 0u; i < rows; i = i + 1u) {
            acc[i] = acc[i] + x[(r0 + i) * p.k + kk] * wv;
        }
    }
    // pass 2: bias and store
    var bias = 0.0;
    if (p.has_bias == 1u) {
        bias = b[c];
    }
    for (var i = 0u; i < rows; i = i + 1u) {
        out[(r0 + i) * p.n + c] = activate(acc[i] + bias, p.act);
    }
}
