//! The matrix product the CPU reference runs in WebAssembly: `out = beta·out + a · b` (or
//! `a · bᵀ`), with no packing and no per-call set-up.
//!
//! Natively `cpu::matmul_into` calls matrixmultiply (threads, AVX). In wasm it has one thread
//! and packs both operands on every call — the weights included — which at a keystroke's
//! few rows costs more than the arithmetic. These kernels read the weights where they lie,
//! once per product:
//! - `nn` (b stored (K, N), the linear layers and weights·V): a 4 × 8 tile of `out` kept in
//!   registers while k runs (measured against 6 × 8, 4 × 12, 3 × 16, 2 × 16 and k unrolled
//!   by two: all slower in V8), `out[i][j..j+8] += a[i][k] · b[k][j..j+8]`; the 8 columns of b
//!   it reads (K × 8) stay in L1 while every row block of a passes them (copied out
//!   contiguous first when there are more than a few row blocks).
//! - `nt` (b stored (N, K), the tied lm head and QKᵀ): 4 rows of a against 2 rows of b as
//!   dot products along k, summed across lanes at the end.
//!
//! `F4` is four f32 lanes: `v128` where the build has WebAssembly SIMD, a plain array
//! elsewhere, so the same kernels run natively in the tests.

/// Rows of `out` in a register tile.
const MR: usize = 4;
/// `F4`s of columns in an `nn` register tile (8 columns).
const NV: usize = 2;
/// Rows of b in an `nt` register tile.
const NC: usize = 2;
/// Up to how many rows of `a` `nt` takes dot products along k (faster than matrixmultiply in
/// wasm at 16 rows, level at 64, slower at 128); past that, `nn`'s tiles on transposed panels.
const NT_ROWS: usize = 16;
/// Past how many rows of `a` `nn` copies each column panel of b out contiguous.
const PANEL_FROM: usize = 16;
/// Rows of `a` whose tiles pass one column panel of b before the next panel: a chunk of a
/// (MC × K) stays in cache while the panels stream.
const MC: usize = 32;

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub(crate) mod lanes {
    use core::arch::wasm32::*;

    #[derive(Clone, Copy)]
    pub struct F4(v128);

    impl F4 {
        #[inline(always)]
        pub fn zero() -> F4 {
            F4(f32x4_splat(0.0))
        }
        /// Four copies of `*p`.
        #[inline(always)]
        pub unsafe fn splat(p: *const f32) -> F4 {
            F4(v128_load32_splat(p as *const u32))
        }
        #[inline(always)]
        pub unsafe fn load(p: *const f32) -> F4 {
            F4(v128_load(p as *const v128))
        }
        #[inline(always)]
        pub unsafe fn store(self, p: *mut f32) {
            v128_store(p as *mut v128, self.0)
        }
        /// `self + a·b` (a multiply, then an add: plain SIMD has no fused multiply-add).
        #[inline(always)]
        pub fn madd(self, a: F4, b: F4) -> F4 {
            F4(f32x4_add(self.0, f32x4_mul(a.0, b.0)))
        }
        #[inline(always)]
        pub fn add(self, o: F4) -> F4 {
            F4(f32x4_add(self.0, o.0))
        }
        #[inline(always)]
        pub fn scale(self, s: f32) -> F4 {
            F4(f32x4_mul(self.0, f32x4_splat(s)))
        }
        /// The sum of the four lanes.
        #[inline(always)]
        pub fn sum(self) -> f32 {
            let v = self.0;
            let s = f32x4_add(v, i32x4_shuffle::<2, 3, 0, 1>(v, v));
            let s = f32x4_add(s, i32x4_shuffle::<1, 0, 3, 2>(s, s));
            f32x4_extract_lane::<0>(s)
        }
        /// Four copies of `x`.
        #[inline(always)]
        pub fn all(x: f32) -> F4 {
            F4(f32x4_splat(x))
        }
        /// The 32 4-bit values of 16 bytes at `p` as numbers: the low nibbles of bytes
        /// 0 … 15, then their high nibbles (GGUF's Q4_0/Q4_1 order).
        #[inline(always)]
        pub unsafe fn nibbles(p: *const u8) -> [F4; 8] {
            let v = v128_load(p as *const v128);
            let [a, b, c, d] = widen_u8(v128_and(v, u8x16_splat(0x0F)));
            let [e, f, g, h] = widen_u8(u8x16_shr(v, 4));
            [a, b, c, d, e, f, g, h]
        }
        /// The 16 signed bytes at `p` as numbers.
        #[inline(always)]
        pub unsafe fn bytes_i8(p: *const u8) -> [F4; 4] {
            let v = v128_load(p as *const v128);
            let (l, h) = (i16x8_extend_low_i8x16(v), i16x8_extend_high_i8x16(v));
            [
                i32x4_extend_low_i16x8(l),
                i32x4_extend_high_i16x8(l),
                i32x4_extend_low_i16x8(h),
                i32x4_extend_high_i16x8(h),
            ]
            .map(|x| F4(f32x4_convert_i32x4(x)))
        }
    }

    /// 16 unsigned bytes as four `F4`s.
    #[inline(always)]
    fn widen_u8(v: v128) -> [F4; 4] {
        let (l, h) = (u16x8_extend_low_u8x16(v), u16x8_extend_high_u8x16(v));
        [
            u32x4_extend_low_u16x8(l),
            u32x4_extend_high_u16x8(l),
            u32x4_extend_low_u16x8(h),
            u32x4_extend_high_u16x8(h),
        ]
        .map(|x| F4(f32x4_convert_u32x4(x)))
    }
}

#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
pub(crate) mod lanes {
    #[derive(Clone, Copy)]
    pub struct F4([f32; 4]);

    impl F4 {
        #[inline(always)]
        pub fn zero() -> F4 {
            F4([0.0; 4])
        }
        #[inline(always)]
        pub unsafe fn splat(p: *const f32) -> F4 {
            F4([*p; 4])
        }
        #[inline(always)]
        pub unsafe fn load(p: *const f32) -> F4 {
            F4(core::ptr::read_unaligned(p as *const [f32; 4]))
        }
        #[inline(always)]
        pub unsafe fn store(self, p: *mut f32) {
            core::ptr::write_unaligned(p as *mut [f32; 4], self.0)
        }
        #[inline(always)]
        pub fn madd(self, a: F4, b: F4) -> F4 {
            F4(std::array::from_fn(|l| self.0[l] + a.0[l] * b.0[l]))
        }
        #[inline(always)]
        pub fn add(self, o: F4) -> F4 {
            F4(std::array::from_fn(|l| self.0[l] + o.0[l]))
        }
        #[inline(always)]
        pub fn scale(self, s: f32) -> F4 {
            F4(self.0.map(|x| x * s))
        }
        #[inline(always)]
        pub fn sum(self) -> f32 {
            (self.0[0] + self.0[2]) + (self.0[1] + self.0[3])
        }
        #[inline(always)]
        pub fn all(x: f32) -> F4 {
            F4([x; 4])
        }
        #[inline(always)]
        pub unsafe fn nibbles(p: *const u8) -> [F4; 8] {
            let q = core::slice::from_raw_parts(p, 16);
            std::array::from_fn(|g| {
                F4(std::array::from_fn(|l| {
                    let j = (g % 4) * 4 + l;
                    (if g < 4 { q[j] & 0x0F } else { q[j] >> 4 }) as f32
                }))
            })
        }
        #[inline(always)]
        pub unsafe fn bytes_i8(p: *const u8) -> [F4; 4] {
            let q = core::slice::from_raw_parts(p, 16);
            std::array::from_fn(|g| F4(std::array::from_fn(|l| (q[g * 4 + l] as i8) as f32)))
        }
    }
}

pub(crate) use lanes::F4;

/// `out = beta·out + a · b`: a (M, K), b (K, N), out (M, N), all row-major. With beta 0,
/// `out` is only written.
pub fn nn(a: &[f32], b: &[f32], m: usize, k: usize, n: usize, out: &mut [f32], beta: f32) {
    tiles(a, b, (m, k, n), false, out, beta)
}

/// `nn`'s register tiles (`MR` rows × 4·`NV` columns); with `bt`, b is stored (N, K) and
/// each panel is copied out transposed.
fn tiles(
    a: &[f32],
    b: &[f32],
    (m, k, n): (usize, usize, usize),
    bt: bool,
    out: &mut [f32],
    beta: f32,
) {
    assert!(a.len() >= m * k && b.len() >= k * n && out.len() >= m * n);
    let b_at = |kk: usize, j: usize| if bt { b[j * k + kk] } else { b[kk * n + j] };
    let nr = 4 * NV;
    let n8 = n / nr * nr;
    // past a few row blocks, each column panel of b (K × nr) is first copied out contiguous:
    // its rows are then next to each other instead of n apart (measured in wasm: 15 % faster
    // at 64 and 128 rows, slower at 16); bᵀ is always copied (transposed)
    let copy = bt || m > PANEL_FROM;
    let mut panel = vec![0.0f32; if copy { k * nr } else { 0 }];
    for i0 in (0..m).step_by(MC) {
        let mc = MC.min(m - i0);
        for j in (0..n8).step_by(nr) {
            let (bp, ldb) = if copy {
                if bt {
                    for c in 0..nr {
                        let col = &b[(j + c) * k..][..k];
                        for (kk, &x) in col.iter().enumerate() {
                            panel[kk * nr + c] = x;
                        }
                    }
                } else {
                    for (kk, row) in panel.chunks_exact_mut(nr).enumerate() {
                        row.copy_from_slice(&b[kk * n + j..][..nr]);
                    }
                }
                (panel.as_ptr(), nr)
            } else {
                // SAFETY: j < n8 ≤ n
                (unsafe { b.as_ptr().add(j) }, n)
            };
            let mut i = i0;
            while i < i0 + mc {
                let mr = MR.min(i0 + mc - i);
                // SAFETY: rows i..i+mr of a and out, columns j..j+nr of out are in bounds
                // (asserted above: i + mr ≤ m, j + nr ≤ n), and bp points at K rows of nr
                // columns ldb apart (in b or in the panel).
                unsafe {
                    let tile = Tile {
                        a,
                        k,
                        i,
                        bp,
                        ldb,
                        n,
                        j,
                        beta,
                    };
                    match mr {
                        4 => tile.run::<4, NV>(out),
                        3 => tile.run::<3, NV>(out),
                        2 => tile.run::<2, NV>(out),
                        _ => tile.run::<1, NV>(out),
                    }
                }
                i += mr;
            }
        }
    }
    // the last columns, one at a time
    for i in 0..m {
        let row = &a[i * k..][..k];
        for j in n8..n {
            let s: f32 = row.iter().enumerate().map(|(kk, x)| x * b_at(kk, j)).sum();
            let o = &mut out[i * n + j];
            *o = if beta == 0.0 { s } else { beta * *o + s };
        }
    }
}

/// One register tile of `nn`: rows `i..` of a (rows k long) against the column panel of b at
/// `bp` (K rows `ldb` apart), into out at row `i`, column `j` (rows `n` long).
struct Tile<'a> {
    a: &'a [f32],
    k: usize,
    i: usize,
    bp: *const f32,
    ldb: usize,
    n: usize,
    j: usize,
    beta: f32,
}

impl Tile<'_> {
    /// `R` rows × 4·`V` columns.
    #[inline(always)]
    unsafe fn run<const R: usize, const V: usize>(&self, out: &mut [f32]) {
        let mut acc = [[F4::zero(); V]; R];
        let (ap, mut bp) = (self.a.as_ptr().add(self.i * self.k), self.bp);
        for kk in 0..self.k {
            let bv: [F4; V] = std::array::from_fn(|h| F4::load(bp.add(4 * h)));
            for (r, acc) in acc.iter_mut().enumerate() {
                let x = F4::splat(ap.add(r * self.k + kk));
                for h in 0..V {
                    acc[h] = acc[h].madd(x, bv[h]);
                }
            }
            bp = bp.add(self.ldb);
        }
        let op = out.as_mut_ptr().add(self.i * self.n + self.j);
        for (r, acc) in acc.iter().enumerate() {
            for (h, v) in acc.iter().enumerate() {
                let p = op.add(r * self.n + 4 * h);
                let v = if self.beta == 0.0 {
                    *v
                } else {
                    v.add(F4::load(p).scale(self.beta))
                };
                v.store(p);
            }
        }
    }
}

/// `out = beta·out + a · bᵀ`: a (M, K), b (N, K), out (M, N), all row-major.
/// Up to `NT_ROWS` rows as dot products along k (`dots`), past that through `nn`'s tiles
/// with b's panels copied out transposed.
pub fn nt(a: &[f32], b: &[f32], m: usize, k: usize, n: usize, out: &mut [f32], beta: f32) {
    if m <= NT_ROWS {
        dots(a, b, m, k, n, out, beta)
    } else {
        tiles(a, b, (m, k, n), true, out, beta)
    }
}

/// `nt` as dot products along k: `MR` rows of a against `NC` rows of b at a time.
fn dots(a: &[f32], b: &[f32], m: usize, k: usize, n: usize, out: &mut [f32], beta: f32) {
    assert!(a.len() >= m * k && b.len() >= n * k && out.len() >= m * n);
    let n2 = n / NC * NC;
    for i0 in (0..m).step_by(MC) {
        let mc = MC.min(m - i0);
        for j in (0..n2).step_by(NC) {
            let mut i = i0;
            while i < i0 + mc {
                let mr = MR.min(i0 + mc - i);
                // SAFETY: rows i..i+mr of a and out, rows j..j+NC of b are in bounds.
                unsafe {
                    match mr {
                        4 => nt_tile::<4, NC>(a, b, k, n, i, j, out, beta),
                        3 => nt_tile::<3, NC>(a, b, k, n, i, j, out, beta),
                        2 => nt_tile::<2, NC>(a, b, k, n, i, j, out, beta),
                        _ => nt_tile::<1, NC>(a, b, k, n, i, j, out, beta),
                    }
                }
                i += mr;
            }
        }
        for j in n2..n {
            for i in i0..i0 + mc {
                // SAFETY: row i of a and out, row j of b are in bounds.
                unsafe { nt_tile::<1, 1>(a, b, k, n, i, j, out, beta) };
            }
        }
    }
}

/// `R` rows of a (from `i`) against `C` rows of b (from `j`): out[i + r][j + c].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn nt_tile<const R: usize, const C: usize>(
    a: &[f32],
    b: &[f32],
    k: usize,
    n: usize,
    i: usize,
    j: usize,
    out: &mut [f32],
    beta: f32,
) {
    let k4 = k / 4 * 4;
    let mut acc = [[F4::zero(); C]; R];
    let (ap, bp) = (a.as_ptr().add(i * k), b.as_ptr().add(j * k));
    let mut kk = 0;
    while kk < k4 {
        let bv: [F4; C] = std::array::from_fn(|c| F4::load(bp.add(c * k + kk)));
        for (r, acc) in acc.iter_mut().enumerate() {
            let x = F4::load(ap.add(r * k + kk));
            for c in 0..C {
                acc[c] = acc[c].madd(x, bv[c]);
            }
        }
        kk += 4;
    }
    for (r, acc) in acc.iter().enumerate() {
        for (c, v) in acc.iter().enumerate() {
            let mut s = v.sum();
            for kk in k4..k {
                s += *ap.add(r * k + kk) * *bp.add(c * k + kk);
            }
            let o = &mut out[(i + r) * n + j + c];
            *o = if beta == 0.0 { s } else { beta * *o + s };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(a: &[f32], b: &[f32], m: usize, k: usize, n: usize, bt: bool) -> Vec<f64> {
        let mut out = vec![0.0f64; m * n];
        for i in 0..m {
            for j in 0..n {
                out[i * n + j] = (0..k)
                    .map(|kk| {
                        let bv = if bt { b[j * k + kk] } else { b[kk * n + j] };
                        a[i * k + kk] as f64 * bv as f64
                    })
                    .sum();
            }
        }
        out
    }

    fn values(len: usize, seed: u32) -> Vec<f32> {
        // a fixed pseudo-random sequence in [−1, 1)
        let mut s = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
        (0..len)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 17;
                s ^= s << 5;
                (s as f32 / u32::MAX as f32) * 2.0 - 1.0
            })
            .collect()
    }

    /// Every edge of the tiling: rows not a multiple of 4 or of the chunk, columns not a
    /// multiple of 8 (nn) or 2 (nt), k not a multiple of 4, and single rows and columns;
    /// beta 0 (out is garbage first) and 1 (out accumulates).
    #[test]
    fn nn_and_nt_match_a_naive_product_at_every_edge_of_the_tiling() {
        for &(m, k, n) in &[
            (1, 1, 1),
            (1, 256, 6000),
            (3, 5, 9),
            (4, 8, 8),
            (7, 64, 17),
            (16, 256, 768),
            (33, 13, 31),
            (70, 130, 66),
        ] {
            let a = values(m * k, 1);
            for bt in [false, true] {
                let b = values(k * n, 2);
                for beta in [0.0f32, 1.0] {
                    let start = if beta == 0.0 {
                        vec![f32::NAN; m * n]
                    } else {
                        values(m * n, 3)
                    };
                    let mut out = start.clone();
                    if bt {
                        nt(&a, &b, m, k, n, &mut out, beta);
                    } else {
                        nn(&a, &b, m, k, n, &mut out, beta);
                    }
                    let want = naive(&a, &b, m, k, n, bt);
                    for (idx, (&got, &w)) in out.iter().zip(&want).enumerate() {
                        let w = w + if beta == 0.0 { 0.0 } else { start[idx] as f64 };
                        let tol = 1e-5 + 1e-5 * (k as f64).sqrt() * w.abs().max(1.0);
                        assert!(
                            (got as f64 - w).abs() <= tol,
                            "m {m} k {k} n {n} bᵀ {bt} beta {beta}: out[{idx}] = {got}, want {w}"
                        );
                    }
                }
            }
        }
    }
}
