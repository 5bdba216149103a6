// dequant (functions only, put in front of qmatmul and qembed): reading a GGUF matrix kept
// as bytes in `w: array<u32>` — one byte, an f16, one value of a row of any type the GPU
// reads. Types (ggml's ids): F32 0, F16 1, Q4_0 2, Q4_1 3, Q5_0 6, Q5_1 7, Q8_0 8, Q4_K 12,
// Q5_K 13, Q6_K 14, BF16 30. CPU twin: gguf::dequant.

fn byte_at(i: u32) -> u32 {
    return (w[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu;
}

// the little-endian 16 bits at byte i
fn bits16(i: u32) -> u32 {
    return byte_at(i) | (byte_at(i + 1u) << 8u);
}

// the f16 at byte i, widened exactly by its bits (unpack2x16float needs a capability that
// not every device has)
fn f16_at(i: u32) -> f32 {
    let h = bits16(i);
    let e = (h >> 10u) & 0x1fu;
    let m = h & 0x3ffu;
    var v = bitcast<f32>(((e + 112u) << 23u) | (m << 13u));
    if (e == 0u) {
        v = f32(m) * exp2(-24.0);
    } else if (e == 31u) {
        v = bitcast<f32>(0x7f800000u | (m << 13u));
    }
    return select(v, -v, (h & 0x8000u) != 0u);
}

// the 4-bit value j (0 … 31) of a block whose 16 bytes of nibbles start at byte q: values
// 0 … 15 are the low nibbles, 16 … 31 the high ones
fn nibble(q: u32, j: u32) -> u32 {
    let b = byte_at(q + (j & 15u));
    return select(b & 15u, b >> 4u, j >= 16u);
}

// the little-endian 32 bits at byte i (any alignment)
fn bits32(i: u32) -> u32 {
    return bits16(i) | (bits16(i + 2u) << 16u);
}

// Q5_0 and Q5_1: value j (0 … 31) of a block whose fifth bits (32 of them) start at byte h and
// whose nibbles start at byte q: the nibble as Q4's, bit j of the fifth bits on top
fn five_bit(h: u32, q: u32, j: u32) -> f32 {
    return f32(nibble(q, j) | (((bits32(h) >> j) & 1u) << 4u));
}

// Q4_K and Q5_K: the 6-bit scale (m = 0) or minimum (m = 1) of sub-block j (0 … 7) from the
// 12 bytes of packed scales at byte s
fn scale_min_k4(s: u32, j: u32, m: u32) -> f32 {
    if (j < 4u) {
        return f32(byte_at(s + j + 4u * m) & 63u);
    }
    let lo = byte_at(s + j + 4u);
    let top = byte_at(s + j - 4u + 4u * m) >> 6u;
    return f32(select(lo & 15u, lo >> 4u, m == 1u) | (top << 4u));
}

// Q4_K (no fifth bits) and Q5_K (fifth bits at byte `qh`): value e (0 … 255) of the block at
// byte b whose 4-bit values start at byte `qs`
fn k_quant(b: u32, qh: u32, qs: u32, e: u32, five: bool) -> f32 {
    let sub = e / 32u;
    let l = e % 32u;
    let byte = byte_at(qs + 32u * (sub / 2u) + l);
    var q = select(byte & 15u, byte >> 4u, (sub & 1u) == 1u);
    if (five) {
        q = q | (((byte_at(qh + l) >> sub) & 1u) << 4u);
    }
    return f16_at(b) * scale_min_k4(b + 4u, sub, 0u) * f32(q) - f16_at(b + 2u) * scale_min_k4(b + 4u, sub, 1u);
}

// Q6_K: value e (0 … 255) of the block at byte b — 128 bytes of low 4 bits, 64 of high 2
// bits, 16 signed scales, d last
fn q6_k(b: u32, e: u32) -> f32 {
    let half = e / 128u;
    let k = (e % 128u) / 32u;
    let l = e % 32u;
    let low = byte_at(b + 64u * half + 32u * (k & 1u) + l);
    let q = select(low & 15u, low >> 4u, k >= 2u) | (((byte_at(b + 128u + 32u * half + l) >> (2u * k)) & 3u) << 4u);
    let sc = i32(byte_at(b + 192u + e / 16u));
    return f16_at(b + 208u) * f32(select(sc, sc - 256, sc >= 128)) * (f32(q) - 32.0);
}

// the value at column c of a row of type `ty` (ggml's id) starting at byte `base`
fn dequant(base: u32, c: u32, ty: u32) -> f32 {
    let j = c & 31u;
    switch ty {
        case 0u: {
            return bitcast<f32>(w[(base >> 2u) + c]);
        }
        case 1u: {
            return f16_at(base + 2u * c);
        }
        case 30u: {
            return bitcast<f32>(bits16(base + 2u * c) << 16u);
        }
        case 2u: {
            let b = base + (c >> 5u) * 18u;
            return (f32(nibble(b + 2u, j)) - 8.0) * f16_at(b);
        }
        case 3u: {
            let b = base + (c >> 5u) * 20u;
            return f32(nibble(b + 4u, j)) * f16_at(b) + f16_at(b + 2u);
        }
        case 8u: {
            let b = base + (c >> 5u) * 34u;
            let q = i32(byte_at(b + 2u + j));
            return f32(select(q, q - 256, q >= 128)) * f16_at(b);
        }
        case 6u: {
            let b = base + (c >> 5u) * 22u;
            return (five_bit(b + 2u, b + 6u, j) - 16.0) * f16_at(b);
        }
        case 7u: {
            let b = base + (c >> 5u) * 24u;
            return five_bit(b + 4u, b + 8u, j) * f16_at(b) + f16_at(b + 2u);
        }
        case 12u: {
            let b = base + (c >> 8u) * 144u;
            return k_quant(b, 0u, b + 16u, c & 255u, false);
        }
        case 13u: {
            let b = base + (c >> 8u) * 176u;
            return k_quant(b, b + 16u, b + 48u, c & 255u, true);
        }
        case 14u: {
            return q6_k(base + (c >> 8u) * 210u, c & 255u);
        }
        default: {
            return 0.0;
        }
    }
}
