// residual_add: out = a + b, rows [row0, row1) of width D — the residual stream plus what a
// sublayer wrote (the Llama family's blocks add before they normalise; GPT-2's blocks use
// add_layernorm). One invocation per element, on a flat grid. CPU twin: cpu::residual_add.

struct Params {
    row0: u32,
    row1: u32,
    d: u32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;           // (P, D)
@group(0) @binding(2) var<storage, read> b: array<f32>;           // (P, D)
@group(0) @binding(3) var<storage, read_write> out: array<f32>;   // (P, D)

@compute @workgroup_size(WG_X, WG_Y, WG_Z)
fn residual_add(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) n: vec3<u32>) {
    // a grid of up to 65,535 × 65,535 workgroups: row-major over (y, x)
    let i = gid.y * n.x * WG_X + gid.x;
    if (i >= (p.row1 - p.row0) * p.d) {
        return;
    }
    let at = p.row0 * p.d + i;
    out[at] = a[at] + b[at];
}
