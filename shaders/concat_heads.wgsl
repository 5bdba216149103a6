// concat_heads: the heads side by side, concat[t, h·Dk + e] = O[h, t, e], rows [row0, row1).

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
@group(0) @binding(1) var<storage, read> head_out: array<f32>;       // (H, P, Dk)
@group(0) @binding(2) var<storage, read_write> concat: array<f32>;   // (P, D)

@compute @workgroup_size(64)
fn concat_heads(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= (p.row1 - p.row0) * p.d) {
        return;
    }
    let t = p.row0 + gid.x / p.d;
    let c = gid.x % p.d;
    concat[t * p.d + c] = head_out[((c / p.dk) * p.positions + t) * p.dk + c % p.dk];
}
