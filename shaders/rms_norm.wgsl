// rms_norm: x / √(mean(x²) + ε) · g along each row of width D, one workgroup per row
// [row0, row0 + groups): the Llama family's RMSNorm. CPU twin: llama::rms_norm.

struct Params {
    row0: u32,
    d: u32,
    eps: f32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;           // (P, D)
@group(0) @binding(2) var<storage, read> g: array<f32>;           // (D)
@group(0) @binding(3) var<storage, read_write> out: array<f32>;   // (P, D)

var<workgroup> red: array<f32, WG_X>;

@compute @workgroup_size(WG_X, WG_Y, WG_Z)
fn rms_norm(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let base = (p.row0 + wid.x) * p.d;
    var s = 0.0;
    for (var c = lid.x; c < p.d; c = c + WG_X) {
        let v = x[base + c];
        s = s + v * v;
    }
    // the sum of squares, by a tree in workgroup memory
    red[lid.x] = s;
    workgroupBarrier();
    for (var k = WG_X / 2u; k > 0u; k = k / 2u) {
        if (lid.x < k) {
            red[lid.x] = red[lid.x] + red[lid.x + k];
        }
        workgroupBarrier();
    }
    let inv = 1.0 / sqrt(red[0] / f32(p.d) + p.eps);
    for (var c = lid.x; c < p.d; c = c + WG_X) {
        out[base + c] = x[base + c] * inv * g[c];
    }
}
