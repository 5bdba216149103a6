// layernorm: (x − mean) / √(var + ε) · g + b along each row of width D, one workgroup per
// row [row0, row1) (layernorm_row.wgsl, put in front, does the row).

struct Params {
    row0: u32,
    d: u32,
    eps: f32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> ln_src: array<f32>;         // (P, D) x
@group(0) @binding(2) var<storage, read> ln_g: array<f32>;           // (D)
@group(0) @binding(3) var<storage, read> ln_b: array<f32>;           // (D)
@group(0) @binding(4) var<storage, read_write> out: array<f32>;      // (P, D)

@compute @workgroup_size(WG_X, WG_Y, WG_Z)
fn layernorm(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let base = (p.row0 + wid.x) * p.d;
    var s = 0.0;
    for (var c = lid.x; c < p.d; c = c + WG_X) {
        s = s + ln_src[base + c];
    }
    layernorm_row(lid.x, base, p.d, p.eps, s);
}
