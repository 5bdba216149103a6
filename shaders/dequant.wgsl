// dequant (functions only, put in front of qmatmul and qembed): reading a GGUF matrix kept
// as bytes in `w: array<u32>` — one byte, an f16, one value of a row of any type the GPU
// reads. Types (ggml's ids): F32 0, F16 1, Q4_0 2, Q4_1 3, Q8_0 8, BF16 30. CPU twin:
// gguf::dequant.

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
        default: {
            return 0.0;
        }
    }
}
