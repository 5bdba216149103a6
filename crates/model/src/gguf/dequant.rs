//! Dequantization of GGUF blocks to f32, as ggml defines each format (its
//! `dequantize_row_*`), with ggml's order of operations so that the values are ggml's to the
//! bit (checked against gguf-py in `tests/gguf.rs`).

use half::{bf16, f16};

use super::ggml_type::GgmlType;

/// The little-endian f16 at byte `at` of `b` (a block's scale), as f32.
#[inline]
pub(crate) fn f16_at(b: &[u8], at: usize) -> f32 {
    f16::from_le_bytes([b[at], b[at + 1]]).to_f32()
}

/// Writes the `out.len()` values held by `bytes` (whole blocks of `ty`). The caller checks
/// that `ty` is read (`GgmlType::is_read`) and that the lengths agree (`expected_len`).
pub fn dequantize(ty: GgmlType, bytes: &[u8], out: &mut [f32]) {
    let (n, size) = ty.block().expect("a known type");
    debug_assert_eq!(bytes.len() / size * n, out.len());
    for (block, y) in bytes.chunks_exact(size).zip(out.chunks_exact_mut(n)) {
        match ty {
            GgmlType::F32 => y[0] = f32::from_le_bytes([block[0], block[1], block[2], block[3]]),
            GgmlType::F16 => y[0] = f16_at(block, 0),
            GgmlType::BF16 => y[0] = bf16::from_le_bytes([block[0], block[1]]).to_f32(),
            GgmlType::Q4_0 => q4_0(block, y),
            GgmlType::Q4_1 => q4_1(block, y),
            GgmlType::Q5_0 => q5_0(block, y),
            GgmlType::Q5_1 => q5_1(block, y),
            GgmlType::Q8_0 => q8_0(block, y),
            GgmlType::Q4_K => q4_k(block, y),
            GgmlType::Q5_K => q5_k(block, y),
            GgmlType::Q6_K => q6_k(block, y),
            _ => unreachable!("{} is not read", ty.name()),
        }
    }
}

/// d (f16), 16 bytes of 4-bit values: element j in the low nibble of byte j, element j + 16
/// in its high nibble; y = (q − 8)·d.
fn q4_0(b: &[u8], y: &mut [f32]) {
    let d = f16_at(b, 0);
    for j in 0..16 {
        let q = b[2 + j];
        y[j] = ((q & 0x0F) as i32 - 8) as f32 * d;
        y[j + 16] = ((q >> 4) as i32 - 8) as f32 * d;
    }
}

/// d, m (f16), 16 bytes of 4-bit values (as Q4_0); y = q·d + m.
fn q4_1(b: &[u8], y: &mut [f32]) {
    let (d, m) = (f16_at(b, 0), f16_at(b, 2));
    for j in 0..16 {
        let q = b[4 + j];
        y[j] = (q & 0x0F) as f32 * d + m;
        y[j + 16] = (q >> 4) as f32 * d + m;
    }
}

/// The 5-bit values of a Q5 block: the low 4 bits as Q4_0, bit j of `high` the fifth bit of
/// element j.
fn five_bits(qs: &[u8], high: u32, j: usize) -> (u32, u32) {
    let lo = (qs[j] & 0x0F) as u32 | ((high >> j) & 1) << 4;
    let hi = (qs[j] >> 4) as u32 | ((high >> (j + 16)) & 1) << 4;
    (lo, hi)
}

/// d (f16), 4 bytes of fifth bits, 16 bytes of low nibbles; y = (q − 16)·d.
fn q5_0(b: &[u8], y: &mut [f32]) {
    let d = f16_at(b, 0);
    let high = u32::from_le_bytes([b[2], b[3], b[4], b[5]]);
    for j in 0..16 {
        let (lo, hi) = five_bits(&b[6..22], high, j);
        y[j] = (lo as i32 - 16) as f32 * d;
        y[j + 16] = (hi as i32 - 16) as f32 * d;
    }
}

/// d, m (f16), 4 bytes of fifth bits, 16 bytes of low nibbles; y = q·d + m.
fn q5_1(b: &[u8], y: &mut [f32]) {
    let (d, m) = (f16_at(b, 0), f16_at(b, 2));
    let high = u32::from_le_bytes([b[4], b[5], b[6], b[7]]);
    for j in 0..16 {
        let (lo, hi) = five_bits(&b[8..24], high, j);
        y[j] = lo as f32 * d + m;
        y[j + 16] = hi as f32 * d + m;
    }
}

/// d (f16), 32 signed bytes; y = q·d.
fn q8_0(b: &[u8], y: &mut [f32]) {
    let d = f16_at(b, 0);
    for j in 0..32 {
        y[j] = (b[2 + j] as i8) as f32 * d;
    }
}

/// The 6-bit scale and minimum of sub-block `j` (0..8) of a Q4_K/Q5_K block, from its 12
/// bytes of packed scales: bytes 0–3 hold scales 0–3 (and the top two bits of scales 4–7),
/// bytes 4–7 the minimums likewise, bytes 8–11 the low four bits of scales and minimums 4–7.
pub fn scale_min_k4(j: usize, s: &[u8]) -> (u8, u8) {
    if j < 4 {
        (s[j] & 63, s[j + 4] & 63)
    } else {
        (
            (s[j + 4] & 0x0F) | ((s[j - 4] >> 6) << 4),
            (s[j + 4] >> 4) | ((s[j] >> 6) << 4),
        )
    }
}

/// Q4_K and Q5_K: d, dmin (f16), 12 bytes of scales, then (Q5_K) 32 bytes `qh` of fifth
/// bits, then 128 bytes `qs` of 4-bit values. Sub-block s (32 elements) reads the low nibbles
/// (s even) or high nibbles (s odd) of `qs` bytes 32·(s/2) .. +32, and bit s of `qh` byte l is
/// element 32·s + l's fifth bit; y = d·scale·q − dmin·min.
fn k_quant(b: &[u8], qs: &[u8], qh: Option<&[u8]>, y: &mut [f32]) {
    let (d, dmin) = (f16_at(b, 0), f16_at(b, 2));
    for s in 0..8 {
        let (sc, m) = scale_min_k4(s, &b[4..16]);
        let (ds, ms) = (d * sc as f32, dmin * m as f32);
        let bytes = &qs[32 * (s / 2)..32 * (s / 2) + 32];
        for l in 0..32 {
            let low = if s % 2 == 0 {
                bytes[l] & 0x0F
            } else {
                bytes[l] >> 4
            };
            let q = low | qh.map_or(0, |h| ((h[l] >> s) & 1) << 4);
            y[32 * s + l] = ds * q as f32 - ms;
        }
    }
}

fn q4_k(b: &[u8], y: &mut [f32]) {
    k_quant(b, &b[16..144], None, y)
}

fn q5_k(b: &[u8], y: &mut [f32]) {
    k_quant(b, &b[48..176], Some(&b[16..48]), y)
}

/// 128 bytes of low 4 bits, 64 bytes of high 2 bits, 16 signed scales, d (f16, last). Each
/// half of 128 elements reads 64 low bytes and 32 high bytes: element 128h + 32k + l takes
/// the low or high nibble of low byte l or 32 + l and bits 2k..2k+2 of high byte l;
/// y = d·scale[e/16]·(q − 32).
fn q6_k(b: &[u8], y: &mut [f32]) {
    let d = f16_at(b, 208);
    let scales = &b[192..208];
    for h in 0..2 {
        let (ql, qh) = (&b[64 * h..64 * h + 64], &b[128 + 32 * h..128 + 32 * h + 32]);
        for l in 0..32 {
            let hi = qh[l];
            let q = [
                (ql[l] & 0x0F) | (hi & 3) << 4,
                (ql[32 + l] & 0x0F) | ((hi >> 2) & 3) << 4,
                (ql[l] >> 4) | ((hi >> 4) & 3) << 4,
                (ql[32 + l] >> 4) | ((hi >> 6) & 3) << 4,
            ];
            for (k, q) in q.into_iter().enumerate() {
                let e = 128 * h + 32 * k + l;
                let sc = scales[e / 16] as i8;
                y[e] = d * sc as f32 * (q as i32 - 32) as f32;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_packed_k_scales_unpack_as_ggml_packs_them() {
        let s = [1, 2, 3, 4, 5, 6, 7, 8, 0x21, 0x43, 0x65, 0x87];
        let got: Vec<(u8, u8)> = (0..8).map(|j| scale_min_k4(j, &s)).collect();
        assert_eq!(
            got,
            [
                (1, 5),
                (2, 6),
                (3, 7),
                (4, 8),
                (1, 2),
                (3, 4),
                (5, 6),
                (7, 8)
            ]
        );
        // the top two bits of bytes 0–7 are the high bits of scales and minimums 4–7
        let mut t = s;
        t[0] |= 0b1100_0000;
        t[4] |= 0b0100_0000;
        assert_eq!(scale_min_k4(4, &t), (1 | 3 << 4, 2 | 1 << 4));
        assert_eq!(scale_min_k4(0, &t), (1, 5), "the low six bits only");
    }

    #[test]
    fn q4_0_low_nibbles_are_the_first_half() {
        let mut b = [0u8; 18];
        b[..2].copy_from_slice(&f16::from_f32(0.5).to_le_bytes());
        b[2] = 0xF0; // element 0: 0 − 8, element 16: 15 − 8
        let mut y = [0f32; 32];
        dequantize(GgmlType::Q4_0, &b, &mut y);
        assert_eq!((y[0], y[16], y[1]), (-4.0, 3.5, -4.0));
    }
}
