// scale_scores: scaled = scores · scale, where scale = 1/√d_k (or 1 with scaling off), over
// rows [row0, row1) × columns [col0, col1) of every head. Temperature is applied inside
// softmax_rows, so a tiny τ cannot overflow the stored scores.

struct Params {
    row0: u32,
    row1: u32,
    col0: u32,
    col1: u32,
    positions: u32,
    scale: f32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> scores: array<f32>;          // (H, P, P)
@group(0) @binding(2) var<storage, read_write> scaled: array<f32>;    // (H, P, P)

@compute @workgroup_size(16, 16)
fn scale_scores(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = p.row0 + gid.y;
    let j = p.col0 + gid.x;
    if (i >= p.row1 || j >= p.col1) {
        return;
    }
    let idx = (gid.z * p.positions + i) * p.positions + j;
    scaled[idx] = scores[idx] * p.scale;
}
