//! A weight matrix kept as it is stored: f32 values, or the blocks of a GGUF tensor type
//! (F16, BF16, Q4_0 … Q6_K) as bytes, so that a quantized model stays as small in memory as
//! its file. Products dequantize `TILE` rows at a time into a scratch buffer and multiply
//! those (`cpu::matmul_into`): at most `TILE` × columns f32 values exist at once. A product
//! with a few rows of x (one appended token) reads the blocks directly instead (`dot_rows`):
//! nothing is dequantized to memory. That product has three forms: scalar, four lanes in
//! wasm (`dot_rows_lanes`, WebAssembly SIMD) and, natively on x86-64 CPUs with AVX2, FMA and
//! F16C, eight lanes (`avx2`), the largest matrices (the output head) split over the threads
//! for one row of x.

#[cfg(target_arch = "x86_64")]
mod avx2;

use crate::cpu;
use crate::error::{Error, Result};
use crate::gemm::F4;
use crate::gguf::dequant::{self, f16_at};
use crate::gguf::{GgmlType, Gguf, TensorBytes, TensorInfo};

/// Rows dequantized at a time by `QMatrix::matmul_t`: in wasm 64, natively 256, so that the
/// product of a tile (matrixmultiply there) is large enough to split over the cores.
pub const TILE: usize = if cfg!(target_arch = "wasm32") {
    64
} else {
    256
};

/// Rows of x up to which `QMatrix::matmul_t` multiplies the blocks directly (`dot_rows`,
/// in wasm `dot_rows_lanes`) rather than dequantizing tiles.
pub const FEW_ROWS: usize = 4;
/// In wasm, Q4_0, Q4_1 and Q8_0 blocks are turned into numbers four lanes at a time
/// (`F4`: WebAssembly SIMD), for the tiles and for the direct product alike. Natively `F4`
/// is a plain array: the direct product there is `avx2`'s where the CPU has it, else the
/// scalar loops.
const LANES: bool = cfg!(target_arch = "wasm32");

/// How a `QMatrix` holds its values.
#[derive(Clone, Debug, PartialEq)]
pub enum Storage {
    F32(Vec<f32>),
    /// Whole blocks of `ty`, each row `cols / block` of them.
    Blocks {
        ty: GgmlType,
        bytes: Vec<u8>,
    },
}

/// A (rows, cols) row-major weight matrix, as PyTorch's `Linear` holds it: (out, in).
#[derive(Clone, Debug, PartialEq)]
pub struct QMatrix {
    pub rows: usize,
    pub cols: usize,
    pub storage: Storage,
}

impl QMatrix {
    pub fn from_f32(rows: usize, cols: usize, values: Vec<f32>) -> QMatrix {
        assert_eq!(values.len(), rows * cols);
        QMatrix {
            rows,
            cols,
            storage: Storage::F32(values),
        }
    }

    /// The 2-D tensor `t` of a GGUF file, its bytes copied as they are (F32 as values).
    pub fn from_gguf(
        g: &Gguf,
        bytes: &(impl TensorBytes + ?Sized),
        t: &TensorInfo,
    ) -> Result<QMatrix> {
        let [rows, cols] = t.shape[..] else {
            return Err(Error::Gguf(format!(
                "tensor `{}` has shape {:?}; a matrix is needed",
                t.name, t.shape
            )));
        };
        let storage = if t.ty == GgmlType::F32 {
            Storage::F32(g.read(bytes, t)?)
        } else if t.ty.is_read() {
            let raw = bytes.tensor_bytes(t).ok_or_else(|| {
                Error::Gguf(format!("tensor `{}` lies outside these bytes", t.name))
            })?;
            Storage::Blocks {
                ty: t.ty,
                bytes: raw.into_owned(),
            }
        } else {
            return Err(Error::Gguf(format!(
                "tensor `{}` is {}, which attnlab does not read",
                t.name,
                t.ty.name()
            )));
        };
        Ok(QMatrix {
            rows,
            cols,
            storage,
        })
    }

    /// Bytes held.
    pub fn size(&self) -> usize {
        match &self.storage {
            Storage::F32(v) => v.len() * 4,
            Storage::Blocks { bytes, .. } => bytes.len(),
        }
    }

    /// Rows `r0 .. r0 + out.len() / cols` as f32.
    pub fn rows_into(&self, r0: usize, out: &mut [f32]) {
        let n = out.len() / self.cols;
        assert!(r0 + n <= self.rows && out.len() == n * self.cols);
        match &self.storage {
            Storage::F32(v) => out.copy_from_slice(&v[r0 * self.cols..(r0 + n) * self.cols]),
            Storage::Blocks { ty, bytes } => {
                let (block, size) = ty.block().expect("a read type");
                let row_bytes = self.cols / block * size;
                let bytes = &bytes[r0 * row_bytes..(r0 + n) * row_bytes];
                if LANES && in_lanes(*ty) {
                    dequantize_lanes(*ty, bytes, out)
                } else {
                    dequant::dequantize(*ty, bytes, out)
                }
            }
        }
    }

    /// `y = x · selfᵀ`: x (m, cols) → y (m, rows), as a `Linear` layer without bias.
    pub fn matmul_t(&self, x: &[f32], m: usize, y: &mut [f32]) {
        let (k, n) = (self.cols, self.rows);
        assert!(x.len() == m * k && y.len() == m * n);
        if m == 0 {
            return; // nothing to multiply (and the direct products divide by m)
        }
        let (ty, bytes) = match &self.storage {
            Storage::F32(w) => return cpu::matmul_into(x, w, m, k, n, true, y, 0.0),
            Storage::Blocks { ty, bytes } => (*ty, bytes),
        };
        if m <= FEW_ROWS && ty.is_quantized() {
            return if !LANES {
                #[cfg(target_arch = "x86_64")]
                if avx2::takes(ty) && avx2::available() {
                    return dot_rows_avx2(ty, bytes, k, x, m, y, threads());
                }
                dot_rows(ty, bytes, k, x, m, y)
            } else if in_lanes(ty) {
                dot_rows_lanes(ty, bytes, k, x, m, y)
            } else {
                self.tiled(x, m, y)
            };
        }
        self.tiled(x, m, y)
    }

    /// `matmul_t` on `TILE` rows of the weights dequantized at a time.
    fn tiled(&self, x: &[f32], m: usize, y: &mut [f32]) {
        let (k, n) = (self.cols, self.rows);
        let mut tile = vec![0f32; TILE.min(n) * k];
        let mut part = vec![0f32; m * TILE.min(n)];
        for r0 in (0..n).step_by(TILE) {
            let rows = TILE.min(n - r0);
            let (w, out) = (&mut tile[..rows * k], &mut part[..m * rows]);
            self.rows_into(r0, w);
            cpu::matmul_into(x, w, m, k, rows, true, out, 0.0);
            for i in 0..m {
                y[i * n + r0..i * n + r0 + rows].copy_from_slice(&out[i * rows..(i + 1) * rows]);
            }
        }
    }
}

/// The block types `LANES` reads four lanes at a time.
fn in_lanes(ty: GgmlType) -> bool {
    matches!(ty, GgmlType::Q4_0 | GgmlType::Q4_1 | GgmlType::Q8_0)
}

/// A Q4_0, Q4_1 or Q8_0 block's 32 integers as numbers (Q4_0's already less 8, as ggml
/// computes it), its scale d and its offset m: value j = q[j]·d + m (m is 0 but for Q4_1).
///
/// # Safety
/// `blk` is one whole block of `ty` (34 bytes for Q8_0, 18 for Q4_0, 20 for Q4_1).
#[inline(always)]
unsafe fn block_lanes(ty: GgmlType, blk: &[u8]) -> ([F4; 8], f32, f32) {
    let f16 = |at: usize| f16_at(blk, at);
    let p = blk.as_ptr();
    match ty {
        GgmlType::Q8_0 => {
            let [a, b, c, d] = F4::bytes_i8(p.add(2));
            let [e, f, g, h] = F4::bytes_i8(p.add(18));
            ([a, b, c, d, e, f, g, h], f16(0), 0.0)
        }
        GgmlType::Q4_0 => (
            F4::nibbles(p.add(2)).map(|q| q.add(F4::all(-8.0))),
            f16(0),
            0.0,
        ),
        _ => (F4::nibbles(p.add(4)), f16(0), f16(2)),
    }
}

/// `dequant::dequantize` for the types `in_lanes` takes, four lanes at a time and to the
/// same bits (q·d, then + m for Q4_1, as ggml orders it; Q4_0's (q − 8) is exact).
fn dequantize_lanes(ty: GgmlType, bytes: &[u8], out: &mut [f32]) {
    let (block, size) = ty.block().expect("a read type");
    assert!(in_lanes(ty) && block == 32 && bytes.len() / size * block == out.len());
    for (blk, y) in bytes.chunks_exact(size).zip(out.chunks_exact_mut(block)) {
        // SAFETY: `blk` is one whole block of `ty`; `y` holds its 32 values
        unsafe {
            let (q, d, m) = block_lanes(ty, blk);
            let m4 = F4::all(m);
            for (g, q) in q.into_iter().enumerate() {
                let v = q.scale(d);
                let v = if ty == GgmlType::Q4_1 { v.add(m4) } else { v };
                v.store(y.as_mut_ptr().add(4 * g));
            }
        }
    }
}

/// `dot_rows` for the types `in_lanes` takes, four lanes at a time: each block's integers are
/// turned into numbers once for all `m` (≤ `FEW_ROWS`) rows of x; a row's dot product is
/// Σ_blocks d·(q · x_block) + m·Σ x_block.
fn dot_rows_lanes(ty: GgmlType, bytes: &[u8], k: usize, x: &[f32], m: usize, y: &mut [f32]) {
    let (block, size) = ty.block().expect("a read type");
    assert!(in_lanes(ty) && block == 32 && m <= FEW_ROWS && k.is_multiple_of(block));
    assert!(x.len() == m * k && y.len().is_multiple_of(m));
    let (per_row, n) = (k / block, y.len() / m);
    assert!(bytes.len() >= n * per_row * size);
    let sums: Vec<f32> = x.chunks_exact(block).map(|c| c.iter().sum()).collect();
    for (r, row) in bytes.chunks_exact(per_row * size).enumerate().take(n) {
        let mut acc = [F4::zero(); FEW_ROWS];
        let mut offset = [0f32; FEW_ROWS];
        for (b, blk) in row.chunks_exact(size).enumerate() {
            // SAFETY: `blk` is one whole block; x's rows hold `k` values, so the block's 32
            // values of row i start at i·k + 32·b and end within x
            unsafe {
                let (q, d, mm) = block_lanes(ty, blk);
                let d = F4::all(d);
                for i in 0..m {
                    let xb = x.as_ptr().add(i * k + b * block);
                    let mut s = F4::zero();
                    for (g, q) in q.iter().enumerate() {
                        s = s.madd(*q, F4::load(xb.add(4 * g)));
                    }
                    acc[i] = acc[i].madd(s, d);
                    offset[i] += mm * sums[i * per_row + b];
                }
            }
        }
        for i in 0..m {
            y[i * n + r] = acc[i].sum() + offset[i];
        }
    }
}

/// `dot_rows` with AVX2 (`avx2::dot_rows`), on up to `threads` threads: for one row of x the
/// weight rows are split so that each thread takes at least `PER_THREAD` weights (the output
/// head of a model); a few rows of x, or a smaller matrix, run on this thread. Callers have
/// checked `avx2::available()`.
#[cfg(target_arch = "x86_64")]
fn dot_rows_avx2(
    ty: GgmlType,
    bytes: &[u8],
    k: usize,
    x: &[f32],
    m: usize,
    y: &mut [f32],
    threads: usize,
) {
    assert!(avx2::available(), "the caller checks the CPU");
    let n = y.len() / m;
    let sums: Vec<f32> = x.chunks_exact(32).map(|c| c.iter().sum()).collect();
    // SAFETY (each call): `avx2::available()` holds (asserted above)
    let part = |rows: std::ops::Range<usize>, out: &mut [f32]| unsafe {
        avx2::dot_rows(ty, bytes, k, x, &sums, rows, out)
    };
    let threads = threads.min(n * k / PER_THREAD).max(1);
    if threads == 1 || m > 1 {
        return part(0..n, y); // all rows: y is laid out as the kernel writes it
    }
    // one row of x: each thread writes its own run of y
    let chunk = n.div_ceil(threads);
    let (first, rest) = y.split_at_mut(chunk);
    std::thread::scope(|scope| {
        for (c, out) in rest.chunks_mut(chunk).enumerate() {
            let r0 = (c + 1) * chunk;
            scope.spawn(move || part(r0..r0 + out.len(), out));
        }
        part(0..chunk, first) // this thread's share
    });
}

/// Threads for the direct product natively: as many as matrixmultiply takes for the tiles
/// (`MATMUL_NUM_THREADS`, else the cores), read once.
#[cfg(target_arch = "x86_64")]
fn threads() -> usize {
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *THREADS.get_or_init(|| {
        std::env::var("MATMUL_NUM_THREADS")
            .ok()
            .and_then(|s| s.parse().ok())
            .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
            .unwrap_or(1)
            .clamp(1, 8)
    })
}

/// Weights a thread of `dot_rows_avx2` takes at least (fewer: one thread does it all).
#[cfg(target_arch = "x86_64")]
const PER_THREAD: usize = 1 << 22;

/// `y = x · Wᵀ` for W's blocks of `ty` (rows of `k` values), read directly: each block's dot
/// product with x from its integers and scales. Q4_0, Q4_1 and Q8_0 by their algebra (a
/// block's dot is d·Σ q·x, plus m·Σ x or − 8d·Σ x, Σ x computed once per block of x); other
/// types through one dequantized block on the stack.
fn dot_rows(ty: GgmlType, bytes: &[u8], k: usize, x: &[f32], m: usize, y: &mut [f32]) {
    let (block, size) = ty.block().expect("a read type");
    let (per_row, n) = (k / block, y.len() / m);
    // Σ x over each block of each row of x
    let sums: Vec<f32> = x.chunks_exact(block).map(|c| c.iter().sum()).collect();
    let mut scratch = [0f32; 256];
    for (r, row) in bytes.chunks_exact(per_row * size).enumerate().take(n) {
        for i in 0..m {
            let xr = &x[i * k..(i + 1) * k];
            let xs = &sums[i * per_row..(i + 1) * per_row];
            let mut acc = 0f32;
            for (b, blk) in row.chunks_exact(size).enumerate() {
                let xb = &xr[b * block..(b + 1) * block];
                acc += match ty {
                    GgmlType::Q8_0 => {
                        let q = &blk[2..34];
                        let dot: f32 = q.iter().zip(xb).map(|(&q, &x)| (q as i8) as f32 * x).sum();
                        f16_at(blk, 0) * dot
                    }
                    GgmlType::Q4_0 | GgmlType::Q4_1 => {
                        let at = if ty == GgmlType::Q4_0 { 2 } else { 4 };
                        let q = &blk[at..at + 16];
                        let mut dot = 0f32;
                        for j in 0..16 {
                            dot += (q[j] & 0x0F) as f32 * xb[j] + (q[j] >> 4) as f32 * xb[j + 16];
                        }
                        let d = f16_at(blk, 0);
                        if ty == GgmlType::Q4_0 {
                            d * (dot - 8.0 * xs[b])
                        } else {
                            d * dot + f16_at(blk, 2) * xs[b]
                        }
                    }
                    _ => {
                        let w = &mut scratch[..block];
                        dequant::dequantize(ty, blk, w);
                        w.iter().zip(xb).map(|(w, x)| w * x).sum()
                    }
                };
            }
            y[i * n + r] = acc;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Random blocks of `ty` whose f16 scales (at `scales`) are ordinary numbers.
    fn blocks(
        ty: GgmlType,
        rows: usize,
        cols: usize,
        scales: &[usize],
        rng: &mut impl Rng,
    ) -> QMatrix {
        let (block, size) = ty.block().unwrap();
        let mut bytes: Vec<u8> = (0..rows * cols / block * size)
            .map(|_| rng.random())
            .collect();
        for b in bytes.chunks_exact_mut(size) {
            for &at in scales {
                let s = half::f16::from_f32(rng.random_range(-0.05..0.05));
                b[at..at + 2].copy_from_slice(&s.to_le_bytes());
            }
        }
        QMatrix {
            rows,
            cols,
            storage: Storage::Blocks { ty, bytes },
        }
    }

    /// The direct product of a few rows equals the product of the dequantized tiles.
    #[test]
    fn a_few_rows_multiply_the_blocks_as_the_dequantized_matrix_does() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(36);
        let (rows, cols) = (70, 96);
        let cases = [
            (GgmlType::Q4_0, vec![0]),
            (GgmlType::Q4_1, vec![0, 2]),
            (GgmlType::Q5_0, vec![0]),
            (GgmlType::Q5_1, vec![0, 2]),
            (GgmlType::Q8_0, vec![0]),
        ];
        for (ty, scales) in cases {
            let w = blocks(ty, rows, cols, &scales, &mut rng);
            let mut dense = vec![0f32; rows * cols];
            w.rows_into(0, &mut dense);
            // more rows than FEW_ROWS: the tile path; the first FEW_ROWS of them: the direct one
            let m = FEW_ROWS + 1;
            let x: Vec<f32> = (0..m * cols).map(|_| rng.random_range(-1.0..1.0)).collect();
            let (mut tiled, mut direct) = (vec![0f32; m * rows], vec![0f32; FEW_ROWS * rows]);
            w.matmul_t(&x, m, &mut tiled);
            w.matmul_t(&x[..FEW_ROWS * cols], FEW_ROWS, &mut direct);
            for (i, (a, b)) in direct.iter().zip(&tiled).enumerate() {
                // the reference: the dequantized matrix, in f64
                let (r, c) = (i / rows, i % rows);
                let exact: f64 = (0..cols)
                    .map(|j| x[r * cols + j] as f64 * dense[c * cols + j] as f64)
                    .sum();
                assert!(
                    (a - b).abs() <= 1e-5 + 1e-4 * b.abs(),
                    "{}: [{i}] direct {a}, tiles {b}",
                    ty.name()
                );
                assert!(
                    (*a as f64 - exact).abs() <= 1e-5 + 1e-4 * exact.abs(),
                    "{}: [{i}] {a} vs {exact}",
                    ty.name()
                );
            }
        }
    }

    /// The AVX2 kernel (natively on x86-64 with AVX2, FMA and F16C): one to `FEW_ROWS` rows of
    /// x against Q4_0, Q4_1 and Q8_0 blocks equal to the dequantized matrix's product in f64,
    /// on a matrix small enough for one thread and on one large enough to be split over one,
    /// two or three threads (1,031 rows: the threads' runs of unequal length).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_avx2_kernel_equals_the_dequantized_product() {
        if !avx2::available() {
            eprintln!("this CPU lacks AVX2, FMA or F16C: the kernel is not used here");
            return;
        }
        let mut rng = rand::rngs::StdRng::seed_from_u64(38);
        for (ty, scales) in [
            (GgmlType::Q4_0, vec![0]),
            (GgmlType::Q4_1, vec![0, 2]),
            (GgmlType::Q8_0, vec![0]),
        ] {
            for (rows, cols) in [(37, 96), (1031, 2 * PER_THREAD / 1000 + 32)] {
                let cols = cols / 32 * 32;
                let w = blocks(ty, rows, cols, &scales, &mut rng);
                let Storage::Blocks { bytes, .. } = &w.storage else {
                    unreachable!()
                };
                let mut dense = vec![0f32; rows * cols];
                dequant::dequantize(ty, bytes, &mut dense);
                for (m, threads) in (1..=FEW_ROWS).map(|m| (m, 1)).chain([(1, 2), (1, 3)]) {
                    let x: Vec<f32> = (0..m * cols).map(|_| rng.random_range(-1.0..1.0)).collect();
                    let mut y = vec![f32::NAN; m * rows];
                    dot_rows_avx2(ty, bytes, cols, &x, m, &mut y, threads);
                    for (i, got) in y.iter().enumerate() {
                        let (r, c) = (i / rows, i % rows);
                        let terms =
                            (0..cols).map(|j| x[r * cols + j] as f64 * dense[c * cols + j] as f64);
                        let exact: f64 = terms.clone().sum();
                        // f32 rounding grows with the terms' sizes, not with their sum's
                        let size: f64 = terms.map(f64::abs).sum();
                        assert!(
                            (*got as f64 - exact).abs() <= 1e-6 * size,
                            "{} {rows}×{cols} m={m} on {threads}: [{i}] {got} vs {exact} (Σ|terms| {size})",
                            ty.name()
                        );
                    }
                }
            }
        }
    }

    /// The lanes' kernels (the worker's, WebAssembly SIMD there; here `F4`'s plain arrays,
    /// the same code): dequantization to the bits of ggml's, and the direct product of 1 to
    /// `FEW_ROWS` rows equal to the dequantized matrix's, in f64.
    #[test]
    fn the_lanes_kernels_equal_the_scalar_ones() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(37);
        let (rows, cols) = (37, 128);
        for (ty, scales) in [
            (GgmlType::Q4_0, vec![0]),
            (GgmlType::Q4_1, vec![0, 2]),
            (GgmlType::Q8_0, vec![0]),
        ] {
            let w = blocks(ty, rows, cols, &scales, &mut rng);
            let Storage::Blocks { bytes, .. } = &w.storage else {
                unreachable!()
            };
            let (mut scalar, mut lanes) = (vec![0f32; rows * cols], vec![1f32; rows * cols]);
            dequant::dequantize(ty, bytes, &mut scalar);
            dequantize_lanes(ty, bytes, &mut lanes);
            for (i, (a, b)) in lanes.iter().zip(&scalar).enumerate() {
                assert_eq!(
                    a.to_bits(),
                    b.to_bits(),
                    "{}: value {i}: {a} vs {b}",
                    ty.name()
                );
            }
            // no rows: nothing to do, on either path
            w.matmul_t(&[], 0, &mut []);
            for m in 1..=FEW_ROWS {
                let x: Vec<f32> = (0..m * cols).map(|_| rng.random_range(-1.0..1.0)).collect();
                let mut y = vec![f32::NAN; m * rows];
                dot_rows_lanes(ty, bytes, cols, &x, m, &mut y);
                for (i, got) in y.iter().enumerate() {
                    let (r, c) = (i / rows, i % rows);
                    let exact: f64 = (0..cols)
                        .map(|j| x[r * cols + j] as f64 * scalar[c * cols + j] as f64)
                        .sum();
                    assert!(
                        (*got as f64 - exact).abs() <= 1e-5 + 1e-4 * exact.abs(),
                        "{} m={m}: [{i}] {got} vs {exact}",
                        ty.name()
                    );
                }
            }
        }
    }
}
