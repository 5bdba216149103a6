// add_layernorm: the lesson's "Add & LayerNorm" in one pass, one workgroup per row
// [row0, row1): sum = a + b (the residual connection), then
// out = (sum − mean) / √(var + ε) · g + beta along the row of width D (layernorm_row.wgsl, put
// in front, as in layernorm); both are kept (the views show the sum and the normalised row).

struct Params {
    row0: u32,
    d: u32,
    eps: f32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;              // (P, D) the stream
@group(0) @binding(2) var<storage, read> b: array<f32>;              // (P, D) the sublayer's output
@group(0) @binding(3) var<storage, read> ln_g: array<f32>;           // (D) g
@group(0) @binding(4) var<storage, read> ln_b: array<f32>;           // (D) beta
@group(0) @binding(5) var<storage, read_write> ln_src: array<f32>;   // (P, D) sum
@group(0) @binding(6) var<storage, read_write> out: array<f32>;      // (P, D)

@compute @workgroup_size(WG_X, WG_Y, WG_Z)
fn add_layernorm(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let base = (p.row0 + wid.x) * p.d;
    // the residual sum (each invocation its own columns, read back by the same invocation in
    // layernorm_row), and this invocation's share of the mean
    var s = 0.0;
    for (var c = lid.x; c < p.d; c = c + WG_X) {
        let v = a[base + c] + b[base + c];
        ln_src[base + c] = v;
        s = s + v;
    }
    layernorm_row(lid.x, base, p.d, p.eps, s);
}
