// split_heads: the fused projection qkv = X·[W_Q | W_K | W_V] (P, 3D) split into per-head
// Q, K and V, each (H, P, Dk), for rows [row0, row1).

struct Params {
    row0: u32,
    row1: u32,
    d: u32,
    dk: u32,
    positions: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> qkv: array<f32>;         // (P, 3D)
@group(0) @binding(2) var<storage, read_write> q: array<f32>;     // (H, P, Dk)
@group(0) @binding(3) var<storage, read_write> k: array<f32>;     // (H, P, Dk)
@group(0) @binding(4) var<storage, read_write> v: array<f32>;     // (H, P, Dk)

@compute @workgroup_size(WG_X, WG_Y, WG_Z)
fn split_heads(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= (p.row1 - p.row0) * p.d) {
        return;
    }
    let t = p.row0 + gid.x / p.d;
    let c = gid.x % p.d;
    let head = c / p.dk;
    let dst = (head * p.positions + t) * p.dk + c % p.dk;
    let src = t * 3u * p.d + c;
    q[dst] = qkv[src];
    k[dst] = qkv[src + p.d];
    v[dst] = qkv[src + 2u * p.d];
}
