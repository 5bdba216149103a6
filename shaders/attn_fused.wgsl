// attn_fused: a head's output O[h, i] = Σ_j softmax_j(mask(q_i · k_j · scale) / τ) · v_j for
// queries [row0, row1) over keys [0, keys), without writing a score: an online softmax
// (Milakov & Gimelshein 2018, as FlashAttention runs it) keeps per query the running maximum,
// the running sum of exp((x − max) / τ) and the running weighted sum of values, rescaling
// both whenever the maximum grows. A workgroup holds WG_X queries of one head; the keys and
// values come through workgroup memory TILE keys at a time, so each is read from the buffer
// once per workgroup. With the causal mask a query walks the keys up to its own position.
// Written per head (H, P, Dk) and side by side (P, D), as attn_v writes them; a switched-off
// head (bit h of ablate_lo | ablate_hi << 32) outputs 0. CPU twin: cpu::attn_fused, in the
// same order of operations.

struct Params {
    row0: u32,
    row1: u32,
    keys: u32,
    dk: u32,
    positions: u32,
    d: u32,
    scale: f32,
    tau: f32,
    causal: u32,
    ablate_lo: u32,
    ablate_hi: u32,
    _pad0: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<f32>;              // (H, P, Dk)
@group(0) @binding(2) var<storage, read> k: array<f32>;              // (H, P, Dk)
@group(0) @binding(3) var<storage, read> v: array<f32>;              // (H, P, Dk)
@group(0) @binding(4) var<storage, read_write> out: array<f32>;      // (H, P, Dk)
@group(0) @binding(5) var<storage, read_write> concat: array<f32>;   // (P, D)

// TILE keys of at most MAX_DK values each, for k and for v: 16 KiB, WebGPU's least
// workgroup storage
var<workgroup> kt: array<f32, 2048>;   // TILE * MAX_DK
var<workgroup> vt: array<f32, 2048>;

fn ablated(h: u32) -> bool {
    if (h < 32u) {
        return ((p.ablate_lo >> h) & 1u) == 1u;
    }
    return h < 64u && ((p.ablate_hi >> (h - 32u)) & 1u) == 1u;
}

@compute @workgroup_size(WG_X, WG_Y, WG_Z)
fn attn_fused(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let h = wid.y;
    let dk = p.dk;
    let i = p.row0 + wid.x * WG_X + lid;
    let live = i < p.row1;
    let base = h * p.positions * dk;
    // the keys the workgroup walks: the same for all its threads (the barriers need it)
    let last = min(p.row0 + (wid.x + 1u) * WG_X, p.row1) - 1u;
    var walk = p.keys;
    var mine = p.keys;
    if (p.causal == 1u) {
        walk = min(last + 1u, p.keys);
        mine = min(i + 1u, p.keys);
    }
    var qi: array<f32, MAX_DK>;
    var acc: array<f32, MAX_DK>;
    if (live) {
        for (var c = 0u; c < dk; c = c + 1u) {
            qi[c] = q[base + i * dk + c];
            acc[c] = 0.0;
        }
    }
    var m = 0.0;
    var sum = 0.0;
    for (var j0 = 0u; j0 < walk; j0 = j0 + TILE) {
        for (var e = lid; e < TILE * dk; e = e + WG_X) {
            let j = j0 + e / dk;
            if (j < walk) {
                kt[e] = k[base + j * dk + e % dk];
                vt[e] = v[base + j * dk + e % dk];
            }
        }
        workgroupBarrier();
        if (live && j0 < mine) {
            let n = min(TILE, mine - j0);
            for (var jj = 0u; jj < n; jj = jj + 1u) {
                var dot = 0.0;
                for (var c = 0u; c < dk; c = c + 1u) {
                    dot = dot + qi[c] * kt[jj * dk + c];
                }
                let x = dot * p.scale;
                if (j0 + jj == 0u) {
                    m = x;
                    sum = 1.0;
                    for (var c = 0u; c < dk; c = c + 1u) {
                        acc[c] = vt[c];
                    }
                } else {
                    let grown = max(x, m);
                    let old = exp((m - grown) / p.tau);
                    let e = exp((x - grown) / p.tau);
                    m = grown;
                    sum = sum * old + e;
                    for (var c = 0u; c < dk; c = c + 1u) {
                        acc[c] = acc[c] * old + e * vt[jj * dk + c];
                    }
                }
            }
        }
        workgroupBarrier();
    }
    if (!live) {
        return;
    }
    var inv = 0.0;
    if (sum > 0.0 && !ablated(h)) {
        inv = 1.0 / sum;
    }
    for (var c = 0u; c < dk; c = c + 1u) {
        let o = acc[c] * inv;
        out[base + i * dk + c] = o;
        concat[i * p.d + h * dk + c] = o;
    }
}
