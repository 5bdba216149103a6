// attn_softmax: the attention weights of every head, w_j = exp((x_j − max) / τ) / Σ exp(…)
// along each query row, one invocation per (row, head). A row is at most the context long,
// so each thread walks its own row three times: no workgroup memory and no barriers, which
// is what software GPUs (SwiftShader, lavapipe) run fastest, with T × H threads for a real
// one. Entries equal to MASKED get weight exactly 0. Rows below row0 were normalised by an
// earlier forward: only their columns from row0 on (keys that did not exist then, all
// masked) are cleared to 0. CPU twin: cpu::softmax_rows. (The next-token softmax, 6,000
// columns per row, is softmax_rows: one workgroup per row.)

struct Params {
    row0: u32,         // first row to normalise
    rows: u32,         // rows per head
    cols: u32,
    row_stride: u32,
    head_stride: u32,
    tau: f32,
    _pad0: u32,
    _pad1: u32,
}

// the most negative f32 (−3.4028235e38), as an exact hex literal: Tint rejects the decimal
// spelling as not representable
const MASKED: f32 = -0x1.fffffep+127f;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;              // (H, rows, row_stride)
@group(0) @binding(2) var<storage, read_write> w: array<f32>;        // (H, rows, row_stride)

@compute @workgroup_size(WG_X, WG_Y, WG_Z)
fn attn_softmax(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    if (i >= p.rows) {
        return;
    }
    let base = gid.y * p.head_stride + i * p.row_stride;
    if (i < p.row0) {
        for (var j = p.row0; j < p.cols; j = j + 1u) {
            w[base + j] = 0.0;
        }
        return;
    }
    // pass 1: row max over the unmasked entries (numerical stability)
    var m = MASKED;
    for (var j = 0u; j < p.cols; j = j + 1u) {
        let v = x[base + j];
        if (v != MASKED) {
            m = max(m, v);
        }
    }
    // pass 2: exponentials and their sum
    var sum = 0.0;
    for (var j = 0u; j < p.cols; j = j + 1u) {
        let v = x[base + j];
        var e = 0.0;
        if (v != MASKED) {
            e = exp((v - m) / p.tau);
        }
        w[base + j] = e;
        sum = sum + e;
    }
    // pass 3: normalise (a fully masked row has sum 0: it keeps all-zero weights)
    var inv = 0.0;
    if (sum > 0.0) {
        inv = 1.0 / sum;
    }
    for (var j = 0u; j < p.cols; j = j + 1u) {
        w[base + j] = w[base + j] * inv;
    }
}
