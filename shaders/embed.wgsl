// embed: token + position embedding for rows [row0, row1).
// out[t, c] = scale · wte[tokens[t], c] + wpe[t, c]   (scale: 1, or √d_model with scale_embedding)

struct Params {
    row0: u32,
    row1: u32,
    d: u32,
    scale: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> tokens: array<u32>;     // (P)
@group(0) @binding(2) var<storage, read> wte: array<f32>;        // (V, D)
@group(0) @binding(3) var<storage, read> wpe: array<f32>;        // (P, D)
@group(0) @binding(4) var<storage, read_write> out: array<f32>;  // (P, D)

@compute @workgroup_size(WG_X, WG_Y, WG_Z)
fn embed(@builtin(global_invocation_id) gid: vec3<u32>) {
    let idx = p.row0 * p.d + gid.x;
    if (idx >= p.row1 * p.d) {
        return;
    }
    let t = idx / p.d;
    let c = idx % p.d;
    out[idx] = wte[tokens[t] * p.d + c] * p.scale + wpe[idx];
}
