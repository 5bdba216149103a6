// qmatmul: y = x · Wᵀ (+ b) with W kept as its file stores it — rows of GGUF blocks, read as
// bytes from an array of u32 and dequantized inside the product, so that a quantized model
// stays compact on the GPU. x (M, K) rows [row0, row0 + m), W (N, K) as `row_bytes` bytes a
// row, b (N) added when `bias` is 1, y (M, N). Types: those of dequant.wgsl; Q4_0, Q4_1 and
// Q8_0 (SmolLM2's) block by block, with each block's scale read once, the others value by
// value. One invocation per output column and ROWS rows of x: each weight is dequantized
// once for those rows. CPU twin: QMatrix::matmul_t.

struct Params {
    m: u32,
    k: u32,
    n: u32,
    ty: u32,
    row_bytes: u32,
    row0: u32,
    bias: u32,
    out_shift: u32,   // y's row r holds x's row r + out_shift (0, or the first row alone)
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;           // (M, K)
@group(0) @binding(2) var<storage, read> w: array<u32>;           // N rows of `row_bytes`
@group(0) @binding(3) var<storage, read> b: array<f32>;           // (N), or 4 zeros
@group(0) @binding(4) var<storage, read_write> y: array<f32>;     // (M, N)

@compute @workgroup_size(WG_X, WG_Y, WG_Z)
fn qmatmul(@builtin(global_invocation_id) gid: vec3<u32>) {
    let col = gid.x;
    let first = gid.y * ROWS;
    if (col >= p.n || first >= p.m) {
        return;
    }
    let rows = min(ROWS, p.m - first);
    let xr = (p.row0 + first) * p.k;
    let base = col * p.row_bytes;
    var acc: array<f32, ROWS>;
    if (p.ty != 2u && p.ty != 3u && p.ty != 8u) {
        // value by value (plain floats, Q5_0, Q5_1 and the K-quants)
        for (var c = 0u; c < p.k; c = c + 1u) {
            let wv = dequant(base, c, p.ty);
            for (var r = 0u; r < rows; r = r + 1u) {
                acc[r] = acc[r] + x[xr + r * p.k + c] * wv;
            }
        }
    } else {
        // blocks of 32: Q4_0 (scale, 16 bytes of nibbles), Q4_1 (scale, minimum, nibbles),
        // Q8_0 (scale, 32 signed bytes); nibble j's low half is value j, its high half j + 16
        var size = 34u;
        var quants = 2u;
        if (p.ty == 2u) {
            size = 18u;
        } else if (p.ty == 3u) {
            size = 20u;
            quants = 4u;
        }
        for (var blk = 0u; blk < p.k / 32u; blk = blk + 1u) {
            let at = base + blk * size;
            let d = f16_at(at);
            var m = 0.0;
            if (p.ty == 2u) {
                m = -8.0 * d;
            } else if (p.ty == 3u) {
                m = f16_at(at + 2u);
            }
            let c0 = blk * 32u;
            if (p.ty == 8u) {
                for (var j = 0u; j < 32u; j = j + 1u) {
                    let q = i32(byte_at(at + 2u + j));
                    let wv = f32(select(q, q - 256, q >= 128)) * d;
                    for (var r = 0u; r < rows; r = r + 1u) {
                        acc[r] = acc[r] + x[xr + r * p.k + c0 + j] * wv;
                    }
                }
            } else {
                for (var j = 0u; j < 16u; j = j + 1u) {
                    let q = byte_at(at + quants + j);
                    let lo = f32(q & 15u) * d + m;
                    let hi = f32(q >> 4u) * d + m;
                    for (var r = 0u; r < rows; r = r + 1u) {
                        let xi = xr + r * p.k + c0 + j;
                        acc[r] = acc[r] + x[xi] * lo + x[xi + 16u] * hi;
                    }
                }
            }
        }
    }
    for (var r = 0u; r < rows; r = r + 1u) {
        var v = acc[r];
        if (p.bias == 1u) {
            v = v + b[col];
        }
        y[(p.row0 + first + r - p.out_shift) * p.n + col] = v;
    }
}
