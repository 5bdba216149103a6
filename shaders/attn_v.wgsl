// attn_v: head output O[h, i] = Σ_j w[h, i, j] · v_j for queries [row0, row1) over keys
// [0, keys), 16×16-tiled over the keys in workgroup memory, written per head (H, P, Dk) and
// side by side (P, D), the concatenation W_O reads: concat[i, h·Dk + e] = O[h, i, e].
// A head switched off (bit h of the 64-bit mask ablate_lo | ablate_hi << 32) outputs 0.

struct Params {
    row0: u32,
    row1: u32,
    keys: u32,
    dk: u32,
    positions: u32,
    d: u32,
    ablate_lo: u32,
    ablate_hi: u32,
}

// a square tile of the workgroup's size (WG_X = WG_Y: kernels.rs writes both in the header)
const TILE: u32 = WG_X;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> w: array<f32>;              // (H, P, P)
@group(0) @binding(2) var<storage, read> v: array<f32>;              // (H, P, Dk)
@group(0) @binding(3) var<storage, read_write> out: array<f32>;      // (H, P, Dk)
@group(0) @binding(4) var<storage, read_write> concat: array<f32>;   // (P, D)

fn ablated(h: u32) -> bool {
    if (h < 32u) {
        return ((p.ablate_lo >> h) & 1u) == 1u;
    }
    return h < 64u && ((p.ablate_hi >> (h - 32u)) & 1u) == 1u;
}

var<workgroup> w_tile: array<array<f32, TILE>, TILE>;
var<workgroup> v_tile: array<array<f32, TILE>, TILE>;

@compute @workgroup_size(WG_X, WG_Y, WG_Z)
fn attn_v(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let h = wid.z;
    let i = p.row0 + wid.y * TILE + lid.y;  // query row
    let e = wid.x * TILE + lid.x;           // value dimension
    var acc = 0.0;
    for (var t = 0u; t < (p.keys + TILE - 1u) / TILE; t = t + 1u) {
        // pass 1: stage weights w[i, j…] and values v[j…, e]
        let jw = t * TILE + lid.x;
        var wv = 0.0;
        if (i < p.row1 && jw < p.keys) {
            wv = w[(h * p.positions + i) * p.positions + jw];
        }
        w_tile[lid.y][lid.x] = wv;
        let jv = t * TILE + lid.y;
        var vv = 0.0;
        if (jv < p.keys && e < p.dk) {
            vv = v[(h * p.positions + jv) * p.dk + e];
        }
        v_tile[lid.y][lid.x] = vv;
        workgroupBarrier();
        // pass 2: the weighted sum over this tile of keys
        for (var j = 0u; j < TILE; j = j + 1u) {
            acc = acc + w_tile[lid.y][j] * v_tile[j][lid.x];
        }
        workgroupBarrier();
    }
    if (i < p.row1 && e < p.dk) {
        let o = select(acc, 0.0, ablated(h));
        out[(h * p.positions + i) * p.dk + e] = o;
        concat[i * p.d + h * p.dk + e] = o;
    }
}
