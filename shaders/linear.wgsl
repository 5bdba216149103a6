// linear: out = x · W + b for rows [row0, row1), as a 16×16-tiled matrix product in
// workgroup memory. W is (K, N) (GPT-2's Conv1D), or (N, K) when w_transposed = 1
// (the tied lm head reads wte that way); has_bias = 0 skips the bias; act applies the FFN's
// activation to the result (0: none; activation.wgsl, put in front of this file).

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

// a square tile of the workgroup's size (WG_X = WG_Y: kernels.rs writes both in the header)
const TILE: u32 = WG_X;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;          // (P, K)
@group(0) @binding(2) var<storage, read> w: array<f32>;          // (K, N) or (N, K)
@group(0) @binding(3) var<storage, read> b: array<f32>;          // (N)
@group(0) @binding(4) var<storage, read_write> out: array<f32>;  // (P, N)

var<workgroup> x_tile: array<array<f32, TILE>, TILE>;
var<workgroup> w_tile: array<array<f32, TILE>, TILE>;

@compute @workgroup_size(WG_X, WG_Y, WG_Z)
fn linear(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let r = p.row0 + wid.y * TILE + lid.y;  // output row
    let c = wid.x * TILE + lid.x;           // output column
    var acc = 0.0;
    let tiles = (p.k + TILE - 1u) / TILE;
    for (var t = 0u; t < tiles; t = t + 1u) {
        // pass 1: stage one tile of x and one of W in workgroup memory
        let kx = t * TILE + lid.x;
        var xv = 0.0;
        if (r < p.row1 && kx < p.k) {
            xv = x[r * p.k + kx];
        }
        x_tile[lid.y][lid.x] = xv;
        let kw = t * TILE + lid.y;
        var wv = 0.0;
        if (kw < p.k && c < p.n) {
            if (p.w_transposed == 1u) {
                wv = w[c * p.k + kw];
            } else {
                wv = w[kw * p.n + c];
            }
        }
        w_tile[lid.y][lid.x] = wv;
        workgroupBarrier();
        // pass 2: accumulate the tile's partial dot products
        for (var i = 0u; i < TILE; i = i + 1u) {
            acc = acc + x_tile[lid.y][i] * w_tile[i][lid.x];
        }
        workgroupBarrier();
    }
    // pass 3: bias and store
    if (r < p.row1 && c < p.n) {
        var bias = 0.0;
        if (p.has_bias == 1u) {
            bias = b[c];
        }
        out[(r - p.out_shift) * p.n + c] = activate(acc + bias, p.act);
    }
}
