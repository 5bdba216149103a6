//! The readback: after the dispatches, one staging buffer receives everything the Trace
//! holds — each distinct row buffer's first T rows, each head's q, k, v and output rows, the
//! packed score matrices — and, once mapped, is cut into the Trace's fields. [`Readback`]
//! records where each part went, so the two halves cannot disagree.

use std::collections::HashMap;

use attnlab_model::{AttentionOptions, BlockRow, Config, Dims, LayerTrace, Trace};

use super::buffers::Activations;
use crate::pack_scores::{self, Score};
use crate::step::Heads;

/// Where one block's per-head matrices lie in the staging buffer (offsets in f32s).
struct BlockAt {
    q: usize,
    k: usize,
    v: usize,
    head_out: usize,
    /// The start of the block's packed score matrices (raw, scaled, masked, weights).
    scores: usize,
}

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

/// Records the copies into `a.staging` for a forward over `t` tokens.
pub(super) fn record(
    enc: &mut wgpu::CommandEncoder,
    a: &Activations,
    heads: Heads,
    t: usize,
) -> Readback {
    let mut cur = Cursor {
        staging: &a.staging,
        at: 0,
    };
    let mut rows = HashMap::new();
    for &i in &a.trace_rows {
        rows.insert(i, cur.copy(enc, &a.rows[i].buffer, 0, t * a.rows[i].width));
    }
    let mut blocks: Vec<BlockAt> = Vec::with_capacity(a.blocks.len());
    for b in &a.blocks {
        blocks.push(BlockAt {
            q: cur.heads(enc, &b.heads.q, heads, t),
            k: cur.heads(enc, &b.heads.k, heads, t),
            v: cur.heads(enc, &b.heads.v, heads, t),
            head_out: cur.heads(enc, &b.heads.head_out, heads, t),
            scores: 0,
        });
    }
    // the packed score matrices, every layer's, where pack_scores put them
    let layer_len = pack_scores::packed_len(heads.count, t);
    let packed_at = cur.copy(enc, &a.packed, 0, blocks.len() * layer_len);
    for (li, b) in blocks.iter_mut().enumerate() {
        b.scores = packed_at + li * layer_len;
    }
    Readback {
        t,
        rows,
        blocks,
        floats: cur.at,
    }
}

impl Readback {
    /// The Trace, cut out of the mapped staging buffer `all`.
    pub fn trace(
        &self,
        all: &[f32],
        a: &Activations,
        c: &Config,
        heads: Heads,
        (tokens, dropped, options): (&[u32], usize, &AttentionOptions),
    ) -> Trace {
        let t = self.t;
        let row = |i: usize| {
            let at = self.rows[&i];
            all[at..at + t * a.rows[i].width].to_vec()
        };
        let take = |at: usize, len: usize| all[at..at + len].to_vec();
        let dk_len = heads.count * t * heads.dk;
        let sq_len = heads.count * t * t;
        let layers = a
            .blocks
            .iter()
            .zip(&self.blocks)
            .map(|(b, at)| {
                let f = |field: BlockRow| row(b.row(field));
                let score = |s: Score| take(at.scores + s.offset(heads.count, t), sq_len);
                LayerTrace {
                    input: f(BlockRow::Input),
                    attn_in: f(BlockRow::AttnIn),
                    q: take(at.q, dk_len),
                    k: take(at.k, dk_len),
                    v: take(at.v, dk_len),
                    scores: score(Score::Raw),
                    scaled: score(Score::Scaled),
                    masked: score(Score::Masked),
                    weights: score(Score::Weights),
                    head_out: take(at.head_out, dk_len),
                    concat: f(BlockRow::Concat),
                    attn_out: f(BlockRow::AttnOut),
                    resid_attn: f(BlockRow::ResidAttn),
                    ln_1: f(BlockRow::Ln1),
                    ffn_in: f(BlockRow::FfnIn),
                    ffn_hidden: f(BlockRow::FfnHidden),
                    ffn_out: f(BlockRow::FfnOut),
                    resid_ffn: f(BlockRow::ResidFfn),
                    ln_2: f(BlockRow::Ln2),
                    output: f(BlockRow::Output),
                }
            })
            .collect();
        Trace {
            dims: Dims::new(c, t),
            tokens: tokens.to_vec(),
            dropped,
            options: options.clone(),
            embedding: row(a.embedding),
            layers,
            ln_f: a.ln_f.map(row),
            logits: row(a.logits),
            probs: row(a.probs),
        }
    }
}
