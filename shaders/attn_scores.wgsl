// attn_scores: the three score matrices of every head in one pass, for queries [row0, row1)
// and keys [col0, col1):
//   raw    S[h, i, j] = q_i · k_j                 (16×16-tiled over d_k in workgroup memory)
//   scaled S[h, i, j] · scale                      (scale = 1/√d_k, or 1 with scaling off)
//   masked scaled, except where key j comes after query i and the mask is on: there the most
//          negative f32, WGSL's stand-in for −∞
// Temperature is applied inside softmax_rows, so that a tiny τ cannot overflow the stored
// scores. CPU twin: cpu::attn_scores.

struct Params {
    row0: u32,
    row1: u32,
    col0: u32,
    col1: u32,
    dk: u32,
    positions: u32,
    scale: f32,
    causal: u32,
}

// a square tile of the workgroup's size (WG_X = WG_Y: kernels.rs writes both in the header)
const TILE: u32 = WG_X;

// the most negative f32 (−3.4028235e38), as an exact hex literal: Tint rejects the decimal
// spelling as not representable
const MASKED: f32 = -0x1.fffffep+127f;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<f32>;               // (H, P, Dk)
@group(0) @binding(2) var<storage, read> k: array<f32>;               // (H, P, Dk)
@group(0) @binding(3) var<storage, read_write> raw: array<f32>;       // (H, P, P)
@group(0) @binding(4) var<storage, read_write> scaled: array<f32>;    // (H, P, P)
@group(0) @binding(5) var<storage, read_write> masked: array<f32>;    // (H, P, P)

var<workgroup> q_tile: array<array<f32, TILE>, TILE>;
var<workgroup> k_tile: array<array<f32, TILE>, TILE>;

@compute @workgroup_size(WG_X, WG_Y, WG_Z)
fn attn_scores(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let h = wid.z;
    let i = p.row0 + wid.y * TILE + lid.y;   // query
    let j = p.col0 + wid.x * TILE + lid.x;   // key
    let head = h * p.positions * p.dk;
    let kj = p.col0 + wid.x * TILE + lid.y;  // the key this thread stages
    var acc = 0.0;
    for (var t = 0u; t < (p.dk + TILE - 1u) / TILE; t = t + 1u) {
        // pass 1: stage a tile of queries and a tile of keys
        let e = t * TILE + lid.x;
        var qv = 0.0;
        if (i < p.row1 && e < p.dk) {
            qv = q[head + i * p.dk + e];
        }
        q_tile[lid.y][lid.x] = qv;
        var kv = 0.0;
        if (kj < p.col1 && e < p.dk) {
            kv = k[head + kj * p.dk + e];
        }
        k_tile[lid.y][lid.x] = kv;  // k_tile[key][dim]
        workgroupBarrier();
        // pass 2: partial dot products q_i · k_j
        for (var e2 = 0u; e2 < TILE; e2 = e2 + 1u) {
            acc = acc + q_tile[lid.y][e2] * k_tile[lid.x][e2];
        }
        workgroupBarrier();
    }
    if (i < p.row1 && j < p.col1) {
        let idx = (h * p.positions + i) * p.positions + j;
        let s = acc * p.scale;
        raw[idx] = acc;
        scaled[idx] = s;
        if (p.causal == 1u && j > i) {
            masked[idx] = MASKED;
        } else {
            masked[idx] = s;
        }
    }
}
