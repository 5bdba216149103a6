// qk_scores: raw attention scores S[h, i, j] = q_i · k_j for queries [row0, row1) and keys
// [col0, col1) of every head, 16×16-tiled over d_k in workgroup memory.

struct Params {
    row0: u32,
    row1: u32,
    col0: u32,
    col1: u32,
    dk: u32,
    positions: u32,
    _pad0: u32,
    _pad1: u32,
}

const TILE: u32 = 16u;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<f32>;               // (H, P, Dk)
@group(0) @binding(2) var<storage, read> k: array<f32>;               // (H, P, Dk)
@group(0) @binding(3) var<storage, read_write> scores: array<f32>;    // (H, P, P)

var<workgroup> q_tile: array<array<f32, 16>, 16>;
var<workgroup> k_tile: array<array<f32, 16>, 16>;

@compute @workgroup_size(16, 16)
fn qk_scores(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
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
        scores[(h * p.positions + i) * p.positions + j] = acc;
    }
}
