//! The readback: after the dispatches, one staging buffer receives everything the Trace
//! holds — each distinct row buffer's first T rows, each head's q, k, v and output rows, the
//! packed score matrices — and, once mapped, is cut into the Trace's fields. [`Readback`]
//! records where each part went, so the two halves cannot disagree.

use std::collections::HashMap;

use attnlab_model::{AttentionOptions, Dims, Field, LayerTrace, Shape, Trace};

use super::buffers::{Activations, PACKED};
use crate::pack_scores;
use crate::step::Heads;

/// Where one block's per-head fields lie in the staging buffer, by field (offsets in f32s;
/// `usize::MAX` for a row-major field, which lies in its row buffer's copy).
type BlockAt = [usize; Field::COUNT];

/// Where each part of one forward's Trace lies in the staging buffer.
pub(super) struct Readback {
    t: usize,
    /// Row buffer index → offset of its first T rows.
    rows: HashMap<usize, usize>,
    blocks: Vec<BlockAt>,
    /// f32s in all.
    pub floats: usize,
}

/// Appends copies to the staging buffer, keeping count of where the next one goes.
struct Cursor<'a> {
    staging: &'a wgpu::Buffer,
    /// in f32s
    at: usize,
}

impl Cursor<'_> {
    /// Copies `len` f32s of `src` from `from` on; returns where they land.
    fn copy(
        &mut self,
        enc: &mut wgpu::CommandEncoder,
        src: &wgpu::Buffer,
        from: usize,
        len: usize,
    ) -> usize {
        let to = self.at;
        enc.copy_buffer_to_buffer(
            src,
            (from * 4) as u64,
            self.staging,
            (to * 4) as u64,
            (len * 4) as u64,
        );
        self.at += len;
        to
    }

    /// An (H, P, Dk) matrix's first T rows of every head, heads one after the other: each
    /// head's rows are contiguous, one copy per head.
    fn heads(
        &mut self,
        enc: &mut wgpu::CommandEncoder,
        m: &wgpu::Buffer,
        heads: Heads,
        t: usize,
    ) -> usize {
        let first = self.at;
        for h in 0..heads.count {
            self.copy(enc, m, h * heads.positions * heads.dk, t * heads.dk);
        }
        first
    }
}

/// Floats the readback of a forward over `t` tokens copies: what `record` copies.
pub(super) fn floats(a: &Activations, heads: Heads, t: usize) -> usize {
    let rows: usize = a
        .trace_rows
        .iter()
        .map(|&i| read_rows(a, i, t) * a.rows[i].width)
        .sum();
    let per_head = Field::ALL
        .iter()
        .filter(|f| f.shape() == Shape::Heads)
        .count();
    let packed = match &a.packed {
        Some(_) => a.blocks.len() * pack_scores::packed_len(heads.count, t),
        None => 0,
    };
    rows + a.blocks.len() * per_head * heads.count * t * heads.dk + packed
}

/// Records the copies into `staging` (at least `floats` long) for a forward over `t` tokens.
pub(super) fn record(
    enc: &mut wgpu::CommandEncoder,
    a: &Activations,
    staging: &wgpu::Buffer,
    heads: Heads,
    t: usize,
) -> Readback {
    let mut cur = Cursor { staging, at: 0 };
    let mut rows = HashMap::new();
    for &i in &a.trace_rows {
        let len = read_rows(a, i, t) * a.rows[i].width;
        rows.insert(i, cur.copy(enc, &a.rows[i].buffer, 0, len));
    }
    // each block's (H, T, Dk) fields, then the packed score matrices, every layer's, where
    // pack_scores put them
    let mut blocks: Vec<BlockAt> = a
        .blocks
        .iter()
        .map(|b| {
            Field::ALL.map(|f| match f.shape() {
                Shape::Heads => cur.heads(enc, b.heads.get(f), heads, t),
                Shape::Rows(_) | Shape::Square => usize::MAX,
            })
        })
        .collect();
    if let Some(packed) = &a.packed {
        let layer_len = pack_scores::packed_len(heads.count, t);
        let packed_at = cur.copy(enc, packed, 0, blocks.len() * layer_len);
        for (li, at) in blocks.iter_mut().enumerate() {
            for (i, f) in PACKED.into_iter().enumerate() {
                at[f as usize] = packed_at + li * layer_len + i * heads.count * t * t;
            }
        }
    }
    Readback {
        t,
        rows,
        blocks,
        floats: cur.at,
    }
}

/// How many rows of row buffer `i` a Trace of `t` tokens reads: `t`, or all it holds when it
/// holds fewer (the one row of logits of an engine that keeps only the last prediction).
fn read_rows(a: &Activations, i: usize, t: usize) -> usize {
    let b = &a.rows[i];
    t.min((b.buffer.size() / 4) as usize / b.width)
}

impl Readback {
    /// The Trace of a model of `dims` (its `t` = the tokens run), cut out of the mapped
    /// staging buffer `all`.
    pub fn trace(
        &self,
        all: &[f32],
        a: &Activations,
        dims: Dims,
        (tokens, dropped, options): (&[u32], usize, &AttentionOptions),
    ) -> Trace {
        let t = self.t;
        debug_assert_eq!(dims.t, t);
        let row = |i: usize| {
            let at = self.rows[&i];
            all[at..at + read_rows(a, i, t) * a.rows[i].width].to_vec()
        };
        let layers = a
            .blocks
            .iter()
            .zip(&self.blocks)
            .map(|(b, at)| {
                let mut layer = LayerTrace::default();
                for f in Field::ALL.into_iter().filter(|&f| a.keep.keeps(f)) {
                    *f.of_mut(&mut layer) = match f.shape() {
                        Shape::Rows(_) => row(b.row(f)),
                        shape => {
                            let from = at[f as usize];
                            all[from..from + shape.len(&dims)].to_vec()
                        }
                    };
                }
                layer
            })
            .collect();
        Trace {
            dims,
            tokens: tokens.to_vec(),
            dropped,
            options: options.clone(),
            embedding: row(a.embedding),
            layers,
            ln_f: a.ln_f.map(row),
            logits: row(a.logits),
            probs: row(a.probs),
            heads: Vec::new(),
            thumbnails: None,
        }
    }
}
