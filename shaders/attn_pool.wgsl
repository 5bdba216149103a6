// attn_pool: what the heads grid and the head-role table read of a head's attention weights
// w_ij = softmax_j(mask(q_i · k_j · scale) / τ), for queries [row0, row1), without writing the
// (T, T) map: each query's row of weights summed over `span` keys at a time into `side` cells
// (cell c = Σ w_ij for j in [c · span, (c + 1) · span); cells past the last key are 0), then
// its five text-role terms (roles::row_terms): w_i,i−1, w_i,0, w_ii, the row's entropy ÷
// ln(keys it sees), and Σ w_ij over j in [i − 3, i] (0 before row 4). A thread holds one query
// of one head and walks the keys twice through workgroup memory: once for the row's maximum
// and sum (an online softmax, as attn_fused), once for the weights themselves. Out: per head,
// per query row from row0, side + 5 values. CPU twin: `Pooled` from `Trace::head_rows`
// (summed in another order: equal up to rounding).

struct Params {
    row0: u32,
    row1: u32,
    keys: u32,
    dk: u32,
    positions: u32,
    span: u32,
    side: u32,
    scale: f32,
    tau: f32,
    causal: u32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<f32>;              // (H, P, Dk)
@group(0) @binding(2) var<storage, read> k: array<f32>;              // (H, P, Dk)
@group(0) @binding(3) var<storage, read_write> out: array<f32>;      // (H, row1 − row0, side + 5)

// TILE keys of at most MAX_DK values, four to a vec4 (8 KiB)
var<workgroup> kt: array<vec4<f32>, 512>;   // TILE * MAX_DK / 4

fn q4(at: u32) -> vec4<f32> {
    return vec4<f32>(q[at], q[at + 1u], q[at + 2u], q[at + 3u]);
}

fn k4(at: u32) -> vec4<f32> {
    return vec4<f32>(k[at], k[at + 1u], k[at + 2u], k[at + 3u]);
}

// Loads keys [j0, j0 + TILE) below `walk` into the tile (every thread of the workgroup calls it).
fn load_tile(j0: u32, walk: u32, base: u32, d4: u32, lid: u32) {
    for (var e = lid; e < TILE * d4; e = e + WG_X) {
        let j = j0 + e / d4;
        if (j < walk) {
            kt[e] = k4(base + j * p.dk + 4u * (e % d4));
        }
    }
}

// q_i · k_j × scale for the key at `row` of the tile (four vec4s an iteration, as attn_fused)
fn tile_score(qi: ptr<function, array<vec4<f32>, 32>>, row: u32, d4: u32, d16: u32) -> f32 {
    var dot4 = vec4<f32>(0.0);
    var c = 0u;
    for (; c < d16; c = c + 4u) {
        dot4 = dot4 + (*qi)[c] * kt[row + c] + (*qi)[c + 1u] * kt[row + c + 1u]
            + (*qi)[c + 2u] * kt[row + c + 2u] + (*qi)[c + 3u] * kt[row + c + 3u];
    }
    for (; c < d4; c = c + 1u) {
        dot4 = dot4 + (*qi)[c] * kt[row + c];
    }
    return (dot4.x + dot4.y + dot4.z + dot4.w) * p.scale;
}

@compute @workgroup_size(WG_X, WG_Y, WG_Z)
fn attn_pool(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let h = wid.y;
    let dk = p.dk;
    let d4 = dk / 4u;
    let d16 = d4 / 4u * 4u;
    let i = p.row0 + wid.x * WG_X + lid;
    let live = i < p.row1;
    let base = h * p.positions * dk;
    let last = min(p.row0 + (wid.x + 1u) * WG_X, p.row1) - 1u;
    var walk = p.keys;
    var mine = p.keys;
    if (p.causal == 1u) {
        walk = min(last + 1u, p.keys);
        mine = min(i + 1u, p.keys);
    }
    var qi: array<vec4<f32>, 32>;   // MAX_DK / 4
    if (live) {
        for (var c = 0u; c < d4; c = c + 1u) {
            qi[c] = q4(base + i * dk + 4u * c);
        }
    }
    // pass 1: the row's maximum and Σ exp((x − max) / τ), the maximum moving as it grows
    var m = 0.0;
    var sum = 0.0;
    for (var j0 = 0u; j0 < walk; j0 = j0 + TILE) {
        load_tile(j0, walk, base, d4, lid);
        workgroupBarrier();
        if (live && j0 < mine) {
            let n = min(TILE, mine - j0);
            for (var jj = 0u; jj < n; jj = jj + 1u) {
                let x = tile_score(&qi, jj * d4, d4, d16);
                if (j0 + jj == 0u) {
                    m = x;
                    sum = 1.0;
                } else {
                    let grown = max(x, m);
                    sum = sum * exp((m - grown) / p.tau) + exp((x - grown) / p.tau);
                    m = grown;
                }
            }
        }
        workgroupBarrier();
    }
    // pass 2: each weight, into its cell and the role terms
    let width = p.side + 5u;
    let at = (h * (p.row1 - p.row0) + (i - p.row0)) * width;
    var inv = 0.0;
    if (sum > 0.0) {
        inv = 1.0 / sum;
    }
    var cell = 0u;
    var acc = 0.0;
    var prev = 0.0;
    var first = 0.0;
    var self_w = 0.0;
    var plogp = 0.0;
    var local = 0.0;
    for (var j0 = 0u; j0 < walk; j0 = j0 + TILE) {
        load_tile(j0, walk, base, d4, lid);
        workgroupBarrier();
        if (live && j0 < mine) {
            let n = min(TILE, mine - j0);
            for (var jj = 0u; jj < n; jj = jj + 1u) {
                let x = tile_score(&qi, jj * d4, d4, d16);
                let w = exp((x - m) / p.tau) * inv;
                let j = j0 + jj;
                let into = j / p.span;
                if (into != cell) {
                    if (cell < p.side) {
                        out[at + cell] = acc;
                    }
                    cell = into;
                    acc = 0.0;
                }
                acc = acc + w;
                if (j == 0u) {
                    first = w;
                }
                if (j + 1u == i) {
                    prev = w;
                }
                if (j == i) {
                    self_w = w;
                }
                if (j + 3u >= i && j <= i) {
                    local = local + w;
                }
                if (w > 0.0) {
                    plogp = plogp + w * log(w);
                }
            }
        }
        workgroupBarrier();
    }
    if (!live) {
        return;
    }
    if (cell < p.side) {
        out[at + cell] = acc;
    }
    for (var c = cell + 1u; c < p.side; c = c + 1u) {
        out[at + c] = 0.0;
    }
    var broad = 0.0;
    if (mine > 1u) {
        broad = -plogp / log(f32(mine));
    }
    if (i < 4u) {
        local = 0.0;
    }
    out[at + p.side] = prev;
    out[at + p.side + 1u] = first;
    out[at + p.side + 2u] = self_w;
    out[at + p.side + 3u] = broad;
    out[at + p.side + 4u] = local;
}
