//! A weight matrix kept as it is stored: f32 values, or the blocks of a GGUF tensor type
//! (F16, BF16, Q4_0 … Q6_K) as bytes, so that a quantized model stays as small in memory as
//! its file. Products dequantize `TILE` rows at a time into a scratch buffer and multiply
//! those (`cpu::matmul_into`): at most `TILE` × columns f32 values exist at once.

use crate::cpu;
use crate::error::{Error, Result};
use crate::gguf::{dequant, GgmlType, Gguf, TensorInfo};

/// Rows dequantized at a time by `QMatrix::matmul_t`: in wasm 64, natively 256, so that the
/// product of a tile (matrixmultiply there) is large enough to split over the cores.
pub const TILE: usize = if cfg!(target_arch = "wasm32") {
    64
} else {
    256
};

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
    pub fn from_gguf(g: &Gguf, bytes: &[u8], t: &TensorInfo) -> Result<QMatrix> {
        let [rows, cols] = t.shape[..] else {
            return Err(Error::Gguf(format!(
                "tensor `{}` has shape {:?}; a matrix is needed",
                t.name, t.shape
            )));
        };
        let storage = if t.ty == GgmlType::F32 {
            Storage::F32(g.read(bytes, t)?)
        } else if t.ty.is_read() {
            Storage::Blocks {
                ty: t.ty,
                bytes: bytes[t.start..t.start + t.len].to_vec(),
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
                dequant::dequantize(*ty, &bytes[r0 * row_bytes..(r0 + n) * row_bytes], out);
            }
        }
    }

    /// `y = x · selfᵀ`: x (m, cols) → y (m, rows), as a `Linear` layer without bias.
    pub fn matmul_t(&self, x: &[f32], m: usize, y: &mut [f32]) {
        let (k, n) = (self.cols, self.rows);
        assert!(x.len() == m * k && y.len() == m * n);
        if let Storage::F32(w) = &self.storage {
            return cpu::matmul_into(x, w, m, k, n, true, y, 0.0);
        }
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
