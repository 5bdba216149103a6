// ablate_heads: switch one head off by zeroing its output rows [row0, row1).

struct Params {
    row0: u32,
    row1: u32,
    dk: u32,
    positions: u32,
    head: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> head_out: array<f32>;  // (H, P, Dk)

@compute @workgroup_size(64)
fn ablate_heads(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= (p.row1 - p.row0) * p.dk) {
        return;
    }
    head_out[(p.head * p.positions + p.row0) * p.dk + gid.x] = 0.0;
}
