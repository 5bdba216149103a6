// softmax_rows: w_j = exp((x_j − max) / τ) / Σ exp(…) along each row of a (rows, cols)
// matrix from row0 on, one workgroup per row, with the reductions in workgroup memory (a row
// longer than the workgroup is strided over): for long rows, the next-token probabilities.
// Entries equal to MASKED get weight exactly 0. (Attention rows: attn_softmax.)

struct Params {
    row0: u32,         // row of workgroup 0
    cols: u32,
    tau: f32,
    _pad: u32,
}

// the most negative f32 (−3.4028235e38), as an exact hex literal: Tint rejects the decimal
// spelling as not representable
const MASKED: f32 = -0x1.fffffep+127f;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;              // (rows, cols)
@group(0) @binding(2) var<storage, read_write> w: array<f32>;        // (rows, cols)

var<workgroup> red: array<f32, WG_X>;

@compute @workgroup_size(WG_X, WG_Y, WG_Z)
fn softmax_rows(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let base = (p.row0 + wid.x) * p.cols;
    // pass 1: row max over the unmasked entries (numerical stability)
    var m = MASKED;
    for (var j = lid.x; j < p.cols; j = j + WG_X) {
        let v = x[base + j];
        if (v != MASKED) {
            m = max(m, v);
        }
    }
    red[lid.x] = m;
    workgroupBarrier();
    for (var s = WG_X / 2u; s > 0u; s = s / 2u) {
        if (lid.x < s) {
            red[lid.x] = max(red[lid.x], red[lid.x + s]);
        }
        workgroupBarrier();
    }
    let row_max = red[0];
    workgroupBarrier();
    // pass 2: exponentials and their sum
    var sum = 0.0;
    for (var j = lid.x; j < p.cols; j = j + WG_X) {
        let v = x[base + j];
        var e = 0.0;
        if (v != MASKED) {
            e = exp((v - row_max) / p.tau);
        }
        w[base + j] = e;
        sum = sum + e;
    }
    red[lid.x] = sum;
    workgroupBarrier();
    for (var s = WG_X / 2u; s > 0u; s = s / 2u) {
        if (lid.x < s) {
            red[lid.x] = red[lid.x] + red[lid.x + s];
        }
        workgroupBarrier();
    }
    let total = red[0];
    // pass 3: normalise (a fully masked row has total 0: it keeps all-zero weights)
    var inv = 0.0;
    if (total > 0.0) {
        inv = 1.0 / total;
    }
    for (var j = lid.x; j < p.cols; j = j + WG_X) {
        w[base + j] = w[base + j] * inv;
    }
}
