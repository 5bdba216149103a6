// layernorm: (x − mean) / √(var + ε) · g + b along each row of width D, one workgroup per
// row [row0, row1), reductions in workgroup memory (row_sum.wgsl, put in front).

struct Params {
    row0: u32,
    d: u32,
    eps: f32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;              // (P, D)
@group(0) @binding(2) var<storage, read> g: array<f32>;              // (D)
@group(0) @binding(3) var<storage, read> b: array<f32>;              // (D)
@group(0) @binding(4) var<storage, read_write> out: array<f32>;      // (P, D)

@compute @workgroup_size(WG_X, WG_Y, WG_Z)
fn layernorm(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let base = (p.row0 + wid.x) * p.d;
    // pass 1: mean
    var s = 0.0;
    for (var c = lid.x; c < p.d; c = c + WG_X) {
        s = s + x[base + c];
    }
    red[lid.x] = s;
    workgroupBarrier();
    let mean = reduce_sum(lid.x) / f32(p.d);
    // pass 2: variance (two passes, not E[x²] − E[x]², for accuracy)
    var q = 0.0;
    for (var c = lid.x; c < p.d; c = c + WG_X) {
        let dev = x[base + c] - mean;
        q = q + dev * dev;
    }
    red[lid.x] = q;
    workgroupBarrier();
    let inv = 1.0 / sqrt(reduce_sum(lid.x) / f32(p.d) + p.eps);
    // pass 3: normalise, then gain and bias
    for (var c = lid.x; c < p.d; c = c + WG_X) {
        out[base + c] = (x[base + c] - mean) * inv * g[c] + b[c];
    }
}
