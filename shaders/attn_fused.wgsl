// attn_fused: a head's output O[h, i] = Σ_j softmax_j(mask(q_i · k_j · scale) / τ) · v_j for
// queries [row0, row1) over keys [0, keys), without writing a score: an online softmax
// (Milakov & Gimelshein 2018, as FlashAttention runs it) keeps per query the running maximum,
// the running sum of exp((x − max) / τ) and the running weighted sum of values, rescaling
// both whenever the maximum grows. A workgroup holds WG_X queries of one head; the keys and
// values come through workgroup memory TILE keys at a time, so each is read from the buffer
// once per workgroup. With the causal mask a query walks the keys up to its own position.
// Written per head (H, P, Dk) and side by side (P, D), as attn_v writes them; a switched-off
// head (bit h of ablate_lo | ablate_hi << 32) outputs 0. CPU twin: cpu::attn_fused, in the
// same order of operations but for the dot products, summed here four lanes apart.

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

// TILE keys of at most MAX_DK values each, four to a vec4, for k and for v: 16 KiB, WebGPU's
// least workgroup storage. Four at a time, and four vec4s an iteration, also keep a query's
// loop iterations under 65,536 up to thousands of keys: Mesa's llvmpipe (lavapipe) cuts a
// shader's loops off past that many, leaving its output unwritten.
var<workgroup> kt: array<vec4<f32>, 512>;   // TILE * MAX_DK / 4
var<workgroup> vt: array<vec4<f32>, 512>;

fn ablated(h: u32) -> bool {
    if (h < 32u) {
        return ((p.ablate_lo >> h) & 1u) == 1u;
    }
    return h < 64u && ((p.ablate_hi >> (h - 32u)) & 1u) == 1u;
}

// four values from `at` on (WGSL passes no storage pointer to a function: one per binding)
fn q4(at: u32) -> vec4<f32> {
    return vec4<f32>(q[at], q[at + 1u], q[at + 2u], q[at + 3u]);
}

fn k4(at: u32) -> vec4<f32> {
    return vec4<f32>(k[at], k[at + 1u], k[at + 2u], k[at + 3u]);
}

fn v4(at: u32) -> vec4<f32> {
    return vec4<f32>(v[at], v[at + 1u], v[at + 2u], v[at + 3u]);
}

@compute @workgroup_size(WG_X, WG_Y, WG_Z)
fn attn_fused(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let h = wid.y;
    let dk = p.dk;
    let d4 = dk / 4u;        // vec4s a row holds (the host checks dk % 4 == 0)
    let d16 = d4 / 4u * 4u;  // of them, those the unrolled loops take four at a time
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
    var qi: array<vec4<f32>, 32>;   // MAX_DK / 4
    var acc: array<vec4<f32>, 32>;
    if (live) {
        for (var c = 0u; c < d4; c = c + 1u) {
            qi[c] = q4(base + i * dk + 4u * c);
            acc[c] = vec4<f32>(0.0);
        }
    }
    var m = 0.0;
    var sum = 0.0;
    for (var j0 = 0u; j0 < walk; j0 = j0 + TILE) {
        for (var e = lid; e < TILE * d4; e = e + WG_X) {
            let j = j0 + e / d4;
            if (j < walk) {
                let at = base + j * dk + 4u * (e % d4);
                kt[e] = k4(at);
                vt[e] = v4(at);
            }
        }
        workgroupBarrier();
        if (live && j0 < mine) {
            let n = min(TILE, mine - j0);
            for (var jj = 0u; jj < n; jj = jj + 1u) {
                let row = jj * d4;
                var dot4 = vec4<f32>(0.0);
                var c = 0u;
                for (; c < d16; c = c + 4u) {
                    dot4 = dot4 + qi[c] * kt[row + c] + qi[c + 1u] * kt[row + c + 1u]
                        + qi[c + 2u] * kt[row + c + 2u] + qi[c + 3u] * kt[row + c + 3u];
                }
                for (; c < d4; c = c + 1u) {
                    dot4 = dot4 + qi[c] * kt[row + c];
                }
                let x = (dot4.x + dot4.y + dot4.z + dot4.w) * p.scale;
                var old = 0.0;
                var e = 1.0;
                if (j0 + jj == 0u) {
                    m = x;
                    sum = 1.0;
                } else {
                    let grown = max(x, m);
                    old = exp((m - grown) / p.tau);
                    e = exp((x - grown) / p.tau);
                    m = grown;
                    sum = sum * old + e;
                }
                c = 0u;
                for (; c < d16; c = c + 4u) {
                    acc[c] = acc[c] * old + e * vt[row + c];
                    acc[c + 1u] = acc[c + 1u] * old + e * vt[row + c + 1u];
                    acc[c + 2u] = acc[c + 2u] * old + e * vt[row + c + 2u];
                    acc[c + 3u] = acc[c + 3u] * old + e * vt[row + c + 3u];
                }
                for (; c < d4; c = c + 1u) {
                    acc[c] = acc[c] * old + e * vt[row + c];
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
    for (var c = 0u; c < d4; c = c + 1u) {
        let o = acc[c] * inv;
        for (var u = 0u; u < 4u; u = u + 1u) {
            out[base + i * dk + 4u * c + u] = o[u];
            concat[i * p.d + h * dk + 4u * c + u] = o[u];
        }
    }
}
