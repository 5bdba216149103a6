//! The direct product on Q4_0, Q4_1 and Q8_0 blocks (`dot_rows`) with x86-64's AVX2, FMA and
//! F16C, chosen at run time (`available`): a block's 32 integers become four vectors of eight
//! f32 once for all rows of x, each multiplied with x's 32 values in f32 (fused
//! multiply-adds), the block's sum scaled by d; Q4_1's offset m adds m·Σx (Σx per block of x,
//! computed once). x stays f32: no activation is rounded to 8 bits, as llama.cpp's products
//! do, so the result is the dequantized matrix's product to f32 rounding.

use core::arch::x86_64::*;

use crate::gguf::GgmlType;

/// Whether this CPU runs `dot_rows` (checked once by the standard library, then cached).
pub(super) fn available() -> bool {
    is_x86_feature_detected!("avx2")
        && is_x86_feature_detected!("fma")
        && is_x86_feature_detected!("f16c")
}

/// The types `dot_rows` takes.
pub(super) fn takes(ty: GgmlType) -> bool {
    matches!(ty, GgmlType::Q4_0 | GgmlType::Q4_1 | GgmlType::Q8_0)
}

/// `y[i·n + r − rows.start] = x_i · W_r` for the weight rows `rows` (W's rows of `k` values,
/// whole blocks of `ty`, in `bytes` from row 0), the `m` rows of x (m·k values); y holds
/// m × `rows.len()` values. `sums` is Σx over each block of each row of x (m · k / 32).
///
/// # Safety
/// The CPU has AVX2, FMA and F16C (`available`).
#[target_feature(enable = "avx2,fma,f16c")]
pub(super) unsafe fn dot_rows(
    ty: GgmlType,
    bytes: &[u8],
    k: usize,
    x: &[f32],
    sums: &[f32],
    rows: std::ops::Range<usize>,
    y: &mut [f32],
) {
    let m = x.len() / k;
    match m {
        1 => rows_of::<1>(ty, bytes, k, x, sums, rows, y),
        2 => rows_of::<2>(ty, bytes, k, x, sums, rows, y),
        3 => rows_of::<3>(ty, bytes, k, x, sums, rows, y),
        4 => rows_of::<4>(ty, bytes, k, x, sums, rows, y),
        _ => panic!("dot_rows takes 1 to 4 rows of x, not {m}"),
    }
}

#[target_feature(enable = "avx2,fma,f16c")]
fn rows_of<const M: usize>(
    ty: GgmlType,
    bytes: &[u8],
    k: usize,
    x: &[f32],
    sums: &[f32],
    rows: std::ops::Range<usize>,
    y: &mut [f32],
) {
    let (block, size) = ty.block().expect("a read type");
    assert!(takes(ty) && block == 32 && k.is_multiple_of(block));
    let per_row = k / block;
    let n = rows.len();
    assert!(x.len() == M * k && sums.len() == M * per_row && y.len() == M * n);
    assert!(bytes.len() >= rows.end * per_row * size);
    for (o, r) in rows.enumerate() {
        let row = &bytes[r * per_row * size..(r + 1) * per_row * size];
        let mut acc = [_mm256_setzero_ps(); M];
        let mut offset = [0f32; M];
        for (b, blk) in row.chunks_exact(size).enumerate() {
            // SAFETY: `blk` is one whole block of `ty` (its length is the type's block size)
            let (q, d, mm) = unsafe { block_values(ty, blk) };
            let d = _mm256_set1_ps(d);
            for i in 0..M {
                let at = i * k + b * block;
                let xb = &x[at..at + block];
                // SAFETY: `xb` holds 32 values; each load reads 8 of them
                let s = unsafe {
                    let p = xb.as_ptr();
                    let s = _mm256_mul_ps(q[0], _mm256_loadu_ps(p));
                    let s = _mm256_fmadd_ps(q[1], _mm256_loadu_ps(p.add(8)), s);
                    let s = _mm256_fmadd_ps(q[2], _mm256_loadu_ps(p.add(16)), s);
                    _mm256_fmadd_ps(q[3], _mm256_loadu_ps(p.add(24)), s)
                };
                acc[i] = _mm256_fmadd_ps(s, d, acc[i]);
                offset[i] += mm * sums[i * per_row + b];
            }
        }
        for i in 0..M {
            y[i * n + o] = sum8(acc[i]) + offset[i];
        }
    }
}

/// A block's 32 integers as four vectors of eight f32 (Q4_0's less 8, as ggml reads them),
/// its scale d and offset m (0 but for Q4_1).
///
/// # Safety
/// `blk` is one whole block of `ty` (18 bytes for Q4_0, 20 for Q4_1, 34 for Q8_0).
#[target_feature(enable = "avx2,fma,f16c")]
#[inline]
unsafe fn block_values(ty: GgmlType, blk: &[u8]) -> ([__m256; 4], f32, f32) {
    let p = blk.as_ptr();
    // d (and for Q4_1 m after it) as f16 at the block's start
    let scales = _mm_cvtph_ps(_mm_cvtsi32_si128(if ty == GgmlType::Q4_1 {
        (p as *const i32).read_unaligned()
    } else {
        (p as *const u16).read_unaligned() as i32
    }));
    let d = _mm_cvtss_f32(scales);
    let m = _mm_cvtss_f32(_mm_shuffle_ps::<1>(scales, scales));
    let eight = |at: __m128i| _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(at));
    match ty {
        GgmlType::Q8_0 => {
            let q = |at: usize| {
                _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(
                    p.add(at) as *const __m128i
                )))
            };
            ([q(2), q(10), q(18), q(26)], d, 0.0)
        }
        _ => {
            // byte j holds value j in its low nibble and value j + 16 in its high one
            let at = if ty == GgmlType::Q4_1 { 4 } else { 2 };
            let bytes = _mm_loadu_si128(p.add(at) as *const __m128i);
            let low_bits = _mm_set1_epi8(0x0F);
            let lo = _mm_and_si128(bytes, low_bits);
            let hi = _mm_and_si128(_mm_srli_epi16::<4>(bytes), low_bits);
            let mut q = [
                eight(lo),
                eight(_mm_srli_si128::<8>(lo)),
                eight(hi),
                eight(_mm_srli_si128::<8>(hi)),
            ];
            if ty == GgmlType::Q4_0 {
                q = q.map(|v| _mm256_sub_ps(v, _mm256_set1_ps(8.0)));
                (q, d, 0.0)
            } else {
                (q, d, m)
            }
        }
    }
}

/// The sum of a vector's eight lanes.
#[target_feature(enable = "avx2,fma,f16c")]
#[inline]
fn sum8(v: __m256) -> f32 {
    let s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
    let s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    let s = _mm_add_ss(s, _mm_shuffle_ps::<1>(s, s));
    _mm_cvtss_f32(s)
}
