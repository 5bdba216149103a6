// attn_v: head output O[h, i] = Σ_j w[h, i, j] · v_j for queries [row0, row1) over keys
// [0, keys), one invocation per (query, value dimension) — counted row by row — and per head,
// with no workgroup memory or barriers (as attn_scores), written per head (H, P, Dk) and
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

@compute @workgroup_size(WG_X, WG_Y, WG_Z)
fn attn_v(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let h = gid.z;
    // the output's number: the grid spreads over y past 65,535 workgroups (step::flat_groups)
    let n = gid.x + gid.y * groups.x * WG_X;
    if (n >= (p.row1 - p.row0) * p.dk) {
        return;
    }
    let i = p.row0 + n / p.dk;  // query row
    let e = n % p.dk;           // value dimension
    let wi = (h * p.positions + i) * p.positions;
    let ve = h * p.positions * p.dk + e;
    var acc = 0.0;
    for (var j = 0u; j < p.keys; j = j + 1u) {
        acc = acc + w[wi + j] * v[ve + j * p.dk];
    }
    let o = select(acc, 0.0, ablated(h));
    out[(h * p.positions + i) * p.dk + e] = o;
    concat[i * p.d + h * p.dk + e] = o;
}
