// swiglu: the Llama family's FFN gate, in place: gate ← SiLU(gate) · up = gate / (1 + e^−gate)
// · up, elements [start, end). One invocation per element. CPU twin: llama::swiglu.

struct Params {
    start: u32,
    end: u32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> gate: array<f32>;  // (P, F)
@group(0) @binding(2) var<storage, read> up: array<f32>;          // (P, F)

@compute @workgroup_size(WG_X, WG_Y, WG_Z)
fn swiglu(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) n: vec3<u32>) {
    // a grid of up to 65,535 × 65,535 workgroups: row-major over (y, x)
    let i = p.start + gid.y * n.x * WG_X + gid.x;
    if (i >= p.end) {
        return;
    }
    let v = gate[i];
    gate[i] = v / (1.0 + exp(-v)) * up[i];
}
