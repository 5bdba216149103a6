// qembed: the token embedding read from a matrix kept as its file stores it (the blocks
// qmatmul reads; the Llama family's token_embd, which a tied output head shares): out row r
// ← row tokens[r] of W, dequantized, rows [row0, row1) of (P, D). One invocation per value,
// on a flat grid. CPU twin: QMatrix::rows_into.

struct Params {
    row0: u32,
    row1: u32,
    d: u32,
    ty: u32,
    row_bytes: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> tokens: array<u32>;      // (P)
@group(0) @binding(2) var<storage, read> w: array<u32>;           // vocabulary rows of `row_bytes`
@group(0) @binding(3) var<storage, read_write> out: array<f32>;   // (P, D)

@compute @workgroup_size(WG_X, WG_Y, WG_Z)
fn qembed(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) n: vec3<u32>) {
    // a grid of up to 65,535 × 65,535 workgroups: row-major over (y, x)
    let i = gid.y * n.x * WG_X + gid.x;
    if (i >= (p.row1 - p.row0) * p.d) {
        return;
    }
    let row = p.row0 + i / p.d;
    let c = i % p.d;
    out[row * p.d + c] = dequant(tokens[row] * p.row_bytes, c, p.ty);
}
