// add_layernorm: the lesson's "Add & LayerNorm" in one pass, one workgroup per row
// [row0, row1): sum = a + b (the residual connection), then
// out = (sum − mean) / √(var + ε) · g + beta along the row of width D; both are kept (the
// views show the sum and the normalised row). Reductions in workgroup memory (row_sum.wgsl, put in front), as layernorm.

struct Params {
    row0: u32,
    d: u32,
    eps: f32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;              // (P, D) the stream
@group(0) @binding(2) var<storage, read> b: array<f32>;              // (P, D) the sublayer's output
@group(0) @binding(3) var<storage, read> g: array<f32>;              // (D)
@group(0) @binding(4) var<storage, read> beta: array<f32>;           // (D)
@group(0) @binding(5) var<storage, read_write> sum: array<f32>;      // (P, D)
@group(0) @binding(6) var<storage, read_write> out: array<f32>;      // (P, D)

@compute @workgroup_size(WG_X, WG_Y, WG_Z)
fn add_layernorm(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let base = (p.row0 + wid.x) * p.d;
    // pass 1: the residual sum (each thread its own columns, read back by the same thread
    // below), and the mean
    var s = 0.0;
    for (var c = lid.x; c < p.d; c = c + WG_X) {
        let v = a[base + c] + b[base + c];
        sum[base + c] = v;
        s = s + v;
    }
    red[lid.x] = s;
    workgroupBarrier();
    let mean = reduce_sum(lid.x) / f32(p.d);
    // pass 2: variance (two passes, not E[x²] − E[x]², for accuracy)
    var q = 0.0;
    for (var c = lid.x; c < p.d; c = c + WG_X) {
        let dev = sum[base + c] - mean;
        q = q + dev * dev;
    }
    red[lid.x] = q;
    workgroupBarrier();
    let inv = 1.0 / sqrt(reduce_sum(lid.x) / f32(p.d) + p.eps);
    // pass 3: normalise, then gain and bias
    for (var c = lid.x; c < p.d; c = c + WG_X) {
        out[base + c] = (sum[base + c] - mean) * inv * g[c] + beta[c];
    }
}
