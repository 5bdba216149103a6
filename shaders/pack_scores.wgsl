// pack_scores: copies the first T rows × T columns of every head of a layer's four (H, P, P)
// score matrices — raw, scaled, masked, weights (gid.z = 0…3) — into four compact (H, T, T)
// blocks from dst_offset on, in that order, for the single trace readback. (The (H, P, Dk)
// matrices need no kernel: each head's first T rows are contiguous, and are copied.)

struct Params {
    t: u32,
    positions: u32,
    heads: u32,
    dst_offset: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> raw: array<f32>;        // (H, P, P)
@group(0) @binding(2) var<storage, read> scaled: array<f32>;     // (H, P, P)
@group(0) @binding(3) var<storage, read> masked: array<f32>;     // (H, P, P)
@group(0) @binding(4) var<storage, read> weights: array<f32>;    // (H, P, P)
@group(0) @binding(5) var<storage, read_write> dst: array<f32>;

@compute @workgroup_size(WG_X, WG_Y, WG_Z)
fn pack_scores(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= p.t * p.t) {
        return;
    }
    let h = gid.y;
    let i = gid.x / p.t;
    let j = gid.x % p.t;
    let src = (h * p.positions + i) * p.positions + j;
    var v: f32;
    switch gid.z {
        case 0u: { v = raw[src]; }
        case 1u: { v = scaled[src]; }
        case 2u: { v = masked[src]; }
        default: { v = weights[src]; }
    }
    dst[p.dst_offset + ((gid.z * p.heads + h) * p.t + i) * p.t + j] = v;
}
