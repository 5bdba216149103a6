// residual_add: out = a + b over elements [start, end) (rows × width).

struct Params {
    start: u32,
    end: u32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(64)
fn residual_add(@builtin(global_invocation_id) gid: vec3<u32>) {
    let idx = p.start + gid.x;
    if (idx >= p.end) {
        return;
    }
    out[idx] = a[idx] + b[idx];
}
