// causal_mask: a query may not look at later keys. masked = scaled, except where key j comes
// after query i (and the mask is on): there the most negative f32, WGSL's stand-in for −∞.

struct Params {
    row0: u32,
    row1: u32,
    col0: u32,
    col1: u32,
    positions: u32,
    enabled: u32,
    _pad0: u32,
    _pad1: u32,
}

// the most negative f32 (−3.4028235e38), as an exact hex literal: Tint rejects the decimal
// spelling as not representable
const MASKED: f32 = -0x1.fffffep+127f;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> scaled: array<f32>;          // (H, P, P)
@group(0) @binding(2) var<storage, read_write> masked: array<f32>;    // (H, P, P)

@compute @workgroup_size(16, 16)
fn causal_mask(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = p.row0 + gid.y;
    let j = p.col0 + gid.x;
    if (i >= p.row1 || j >= p.col1) {
        return;
    }
    let idx = (gid.z * p.positions + i) * p.positions + j;
    if (p.enabled == 1u && j > i) {
        masked[idx] = MASKED;
    } else {
        masked[idx] = scaled[idx];
    }
}
