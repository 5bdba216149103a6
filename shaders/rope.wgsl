// rope: rotates each head's dimension pairs of x in place — rows [row0, row1) of (P, H × Dk),
// row r at position pos0 + r — by the cosine and sine the table holds for that position and
// pair (llama::rope_table, computed once on the CPU). Pair i is (2i, 2i + 1) when `halves` is
// 0 (a llama GGUF file's layout), (i, i + Dk/2) when it is 1 (Hugging Face's). One invocation
// per (row, head, pair), on a flat grid. CPU twin: llama::rope.

struct Params {
    row0: u32,
    row1: u32,
    heads: u32,
    dk: u32,
    pos0: u32,
    halves: u32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> table: array<f32>;       // (positions, Dk/2, 2)
@group(0) @binding(2) var<storage, read_write> x: array<f32>;     // (P, H × Dk)

@compute @workgroup_size(WG_X, WG_Y, WG_Z)
fn rope(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) n: vec3<u32>) {
    let half = p.dk / 2u;
    let per_row = p.heads * half;
    // a grid of up to 65,535 × 65,535 workgroups: row-major over (y, x)
    let i = gid.y * n.x * WG_X + gid.x;
    if (i >= (p.row1 - p.row0) * per_row) {
        return;
    }
    let row = p.row0 + i / per_row;
    let head = (i % per_row) / half;
    let pair = i % half;
    let at = ((p.pos0 + row) * half + pair) * 2u;
    let c = table[at];
    let s = table[at + 1u];
    let base = row * p.heads * p.dk + head * p.dk;
    var a = base + 2u * pair;
    var b = a + 1u;
    if (p.halves == 1u) {
        a = base + pair;
        b = a + half;
    }
    let x0 = x[a];
    let x1 = x[b];
    x[a] = x0 * c - x1 * s;
    x[b] = x1 * c + x0 * s;
}
