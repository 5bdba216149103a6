// gather_heads: a row-major projection (P, S × Dk) of S heads → per-head rows (H, P, Dk),
// rows [row0, row1), query head h reading source head h / group — q with group 1, and the
// keys and values of grouped-query attention, where `group` query heads share one key/value
// head. One invocation per value, on a flat grid. CPU twin: the per-head columns of
// llama::forward's pass.

struct Params {
    row0: u32,
    row1: u32,
    heads: u32,
    dk: u32,
    positions: u32,
    group: u32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> src: array<f32>;         // (P, S × Dk)
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;   // (H, P, Dk)

@compute @workgroup_size(WG_X, WG_Y, WG_Z)
fn gather_heads(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) n: vec3<u32>) {
    // a grid of up to 65,535 × 65,535 workgroups: row-major over (y, x)
    let i = gid.y * n.x * WG_X + gid.x;
    let per_row = p.heads * p.dk;
    if (i >= (p.row1 - p.row0) * per_row) {
        return;
    }
    let row = p.row0 + i / per_row;
    let head = (i % per_row) / p.dk;
    let c = i % p.dk;
    let width = p.heads / p.group * p.dk;
    dst[(head * p.positions + row) * p.dk + c] = src[row * width + (head / p.group) * p.dk + c];
}
