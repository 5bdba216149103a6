// attn_scores: the three score matrices of every head in one pass, for queries [row0, row1)
// and keys [col0, col1):
//   raw    S[h, i, j] = q_i · k_j
//   scaled S[h, i, j] · scale                      (scale = 1/√d_k, or 1 with scaling off)
//   masked scaled, except where key j comes after query i and the mask is on: there the most
//          negative f32, WGSL's stand-in for −∞
// Temperature is applied inside softmax_rows, so that a tiny τ cannot overflow the stored
// scores. One invocation per (query, key) pair of the region, counted row by row, and per
// head: no workgroup memory and no barriers (software GPUs run these fastest; a keystroke's
// regions are one row or one column thin, which a square tile would mostly leave idle).
// CPU twin: cpu::attn_scores.

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

// the most negative f32 (−3.4028235e38), as an exact hex literal: Tint rejects the decimal
// spelling as not representable
const MASKED: f32 = -0x1.fffffep+127f;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<f32>;               // (H, P, Dk)
@group(0) @binding(2) var<storage, read> k: array<f32>;               // (H, P, Dk)
@group(0) @binding(3) var<storage, read_write> raw: array<f32>;       // (H, P, P)
@group(0) @binding(4) var<storage, read_write> scaled: array<f32>;    // (H, P, P)
@group(0) @binding(5) var<storage, read_write> masked: array<f32>;    // (H, P, P)

@compute @workgroup_size(WG_X, WG_Y, WG_Z)
fn attn_scores(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let h = gid.z;
    let cols = p.col1 - p.col0;
    // the pair's number: the grid spreads over y past 65,535 workgroups (step::flat_groups)
    let n = gid.x + gid.y * groups.x * WG_X;
    if (n >= (p.row1 - p.row0) * cols) {
        return;
    }
    let i = p.row0 + n / cols;   // query
    let j = p.col0 + n % cols;   // key
    let head = h * p.positions * p.dk;
    let qi = head + i * p.dk;
    let kj = head + j * p.dk;
    var acc = 0.0;
    for (var e = 0u; e < p.dk; e = e + 1u) {
        acc = acc + q[qi + e] * k[kj + e];
    }
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
