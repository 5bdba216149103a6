//! A slim result, read back from an engine that keeps no maps (`Keep::Streams`): what a page
//! shows of a long text and no more — the heads it asks for (their q, k, v and outputs over
//! every position; the maps are computed from them, `Trace::slim_from`), the next-token
//! prediction after the last position, and every head's rows pooled for the heads grid and
//! the roles (`attn_pool`, the rows the caller's `Pooled` lacks). Everything else — the
//! residual streams, the other heads' vectors — stays on the GPU, so a keystroke reads back
//! O(asked heads · T · d_k + layers · heads · new rows · 69) floats, not the whole trace.

use std::ops::Range;

use attnlab_model::{Field, HeadVectors};

use super::binds::AttentionBinds;
use super::buffers::Activations;
use crate::attn_pool::{self, Pooling};
use crate::context::{Gpu, SLOT};
use crate::error::GpuError;
use crate::step::{Heads, Step};

/// What a slim forward reads back.
#[derive(Clone, Debug, PartialEq)]
pub struct SlimAsk {
    /// The heads whose vectors come back, (layer, head).
    pub heads: Vec<(usize, usize)>,
    /// Every head's query rows `rows` pooled as `Pooling` says (`Pooled::plan` gives both).
    pub pool: Option<(Range<usize>, Pooling)>,
}

/// What a slim forward read back.
#[derive(Clone, Debug, PartialEq)]
pub struct SlimRead {
    /// The last position's logits and probabilities.
    pub logits: Vec<f32>,
    pub probs: Vec<f32>,
    /// The asked heads' vectors, in the order asked.
    pub heads: Vec<HeadVectors>,
    /// Head after head (layer · n_head + head), each asked row's cells then its five role
    /// terms (`Pooled::update_pooled` reads them); empty when no pooling was asked.
    pub pooled: Vec<f32>,
}

/// Where a slim readback put each part in the staging buffer (offsets in f32s).
pub(super) struct SlimBack {
    vocab: usize,
    logits: usize,
    probs: usize,
    /// Per asked head: (layer, head), then q, k, v, head_out.
    heads: Vec<((usize, usize), [usize; 4])>,
    /// Per layer, each pooled layer's copy.
    pooled: Vec<usize>,
    pooled_len: usize,
    /// The run's positions and each head's width.
    t: usize,
    dk: usize,
    pub floats: usize,
}

/// The per-head fields a head's vectors are read from, in `HeadVectors`' order.
const VECTORS: [Field; 4] = [Field::Q, Field::K, Field::V, Field::HeadOut];

/// Records the slim readback of a forward over `t` tokens into `staging` (at least
/// `Read::floats` long): the one
/// prediction row, each asked head's vectors, and — for each layer — its pooling step (in a
/// pass of its own, its params at uniform slot `first_slot + layer`) then its pooled rows'
/// copy (`rows` rows of `width` floats per head).
#[allow(clippy::too_many_arguments)]
pub(super) fn record(
    enc: &mut wgpu::CommandEncoder,
    gpu: &Gpu,
    a: &Activations,
    staging: &wgpu::Buffer,
    heads: Heads,
    t: usize,
    asked: &[(usize, usize)],
    pool: &[Step<'_>],
    (rows, width, first_slot): (usize, usize, usize),
) -> SlimBack {
    let mut at = 0usize;
    let mut copy = |enc: &mut wgpu::CommandEncoder, src: &wgpu::Buffer, from: usize, len: usize| {
        let to = at;
        enc.copy_buffer_to_buffer(
            src,
            (from * 4) as u64,
            staging,
            (to * 4) as u64,
            (len * 4) as u64,
        );
        at += len;
        to
    };
    let row = |i: usize| &a.rows[i];
    let vocab = row(a.logits).width;
    // without the maps the predictions are one row, the last position's
    let logits = copy(enc, &row(a.logits).buffer, 0, vocab);
    let probs = copy(enc, &row(a.probs).buffer, 0, vocab);
    let (dk, stride) = (heads.dk, heads.positions * heads.dk);
    let heads_at = asked
        .iter()
        .map(|&(l, h)| {
            let hb = &a.blocks[l].heads;
            (
                (l, h),
                VECTORS.map(|f| copy(enc, hb.get(f), h * stride, t * dk)),
            )
        })
        .collect();
    let pooled_len = heads.count * rows * width;
    let mut pooled = Vec::new();
    if let Some(buffer) = a.pool.as_ref() {
        for (li, step) in pool.iter().enumerate() {
            {
                let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("pool"),
                    timestamp_writes: None,
                });
                pass.set_pipeline(&gpu.kernel(step.kernel).pipeline);
                let slot = (first_slot + li) as u64 * SLOT;
                pass.set_bind_group(0, step.bind, &[slot as u32]);
                pass.dispatch_workgroups(step.grid[0], step.grid[1], step.grid[2]);
            }
            pooled.push(copy(enc, buffer, 0, pooled_len));
        }
    }
    SlimBack {
        vocab,
        logits,
        probs,
        heads: heads_at,
        pooled,
        pooled_len,
        t,
        dk,
        floats: at,
    }
}

impl SlimBack {
    /// The parts, cut out of the mapped staging buffer `all`.
    pub fn read(&self, all: &[f32]) -> SlimRead {
        let part = |at: usize, len: usize| all[at..at + len].to_vec();
        let n = self.t * self.dk;
        SlimRead {
            logits: part(self.logits, self.vocab),
            probs: part(self.probs, self.vocab),
            heads: self
                .heads
                .iter()
                .map(|&((layer, head), [q, k, v, o])| HeadVectors {
                    layer,
                    head,
                    q: part(q, n),
                    k: part(k, n),
                    v: part(v, n),
                    head_out: part(o, n),
                })
                .collect(),
            pooled: self
                .pooled
                .iter()
                .flat_map(|&at| &all[at..at + self.pooled_len])
                .copied()
                .collect(),
        }
    }
}

/// Floats a pooled row of `pooling` takes.
pub(super) fn width(pooling: &Pooling) -> usize {
    attn_pool::row_len(pooling.side)
}

/// What a forward reads back.
pub(super) enum Read<'a, 's> {
    /// The Trace the engine's `Keep` says.
    Trace,
    /// A slim result (`slim::record`): these heads' vectors, the last prediction and, with
    /// `pool` (one step per layer), `rows` pooled rows of `width` floats per head and layer.
    Slim {
        heads: &'a [(usize, usize)],
        pool: &'a [Step<'s>],
        rows: usize,
        width: usize,
    },
}

impl Read<'_, '_> {
    /// Floats the readback of a forward over `t` tokens copies.
    pub fn floats(&self, a: &Activations, heads: Heads, t: usize) -> usize {
        match self {
            Read::Trace => super::readback::floats(a, heads, t),
            Read::Slim {
                heads: asked,
                pool,
                rows,
                width,
            } => {
                let vocab = a.rows[a.logits].width;
                2 * vocab
                    + asked.len() * VECTORS.len() * t * heads.dk
                    + pool.len() * heads.count * rows * width
            }
        }
    }
}

/// What a forward gives: the Trace, or a slim result.
pub(super) enum Output {
    Trace(Box<attnlab_model::Trace>),
    Slim(SlimRead),
}

impl Output {
    pub fn trace(self) -> attnlab_model::Trace {
        match self {
            Output::Trace(t) => *t,
            Output::Slim(_) => unreachable!("a forward read for its Trace"),
        }
    }

    pub fn slim(self) -> SlimRead {
        match self {
            Output::Slim(s) => s,
            Output::Trace(_) => unreachable!("a forward read for a slim result"),
        }
    }
}

/// A forward's readback plan: the Trace, or a slim result with its pooling steps.
pub(super) struct Reading<'a, 'b> {
    slim: Option<&'a SlimAsk>,
    pool: Vec<Step<'b>>,
    rows: usize,
    width: usize,
}

impl<'a, 'b> Reading<'a, 'b> {
    /// For a forward over `t` tokens of an engine with `blocks`: the Trace without `slim`;
    /// with it, `slim` checked against the engine and its pooling steps made (one per layer,
    /// none without pooling or without a row to pool).
    pub fn new(
        a: &Activations,
        blocks: impl ExactSizeIterator<Item = &'b AttentionBinds>,
        heads: Heads,
        t: usize,
        slim: Option<&'a SlimAsk>,
        opts: &attnlab_model::AttentionOptions,
    ) -> Result<Self, GpuError> {
        let mut reading = Reading {
            slim,
            pool: Vec::new(),
            rows: 0,
            width: 0,
        };
        let Some(ask) = slim else {
            return Ok(reading);
        };
        if a.pool.is_none() {
            return Err(GpuError::Shape(
                "a slim result comes from an engine that keeps no maps (Keep::Streams)".into(),
            ));
        }
        let layers = blocks.len();
        if let Some(&(l, h)) = ask
            .heads
            .iter()
            .find(|&&(l, h)| l >= layers || h >= heads.count)
        {
            return Err(GpuError::Model(attnlab_model::Error::Options(format!(
                "no head {l}.{h}: the model has {layers} layers × {} heads",
                heads.count
            ))));
        }
        let Some((rows, pooling)) = &ask.pool else {
            return Ok(reading);
        };
        if rows.end != t || rows.start > t {
            return Err(GpuError::Shape(format!(
                "pooled rows {}..{} are not the last ones of {t}",
                rows.start, rows.end
            )));
        }
        let steps = blocks
            .map(|b| b.pool(heads, rows.clone(), t, *pooling, opts))
            .collect::<Result<Vec<_>, _>>()?;
        if !rows.is_empty() {
            reading.pool = steps;
        }
        (reading.rows, reading.width) = (rows.len(), width(pooling));
        Ok(reading)
    }

    /// The pooling dispatches.
    pub fn dispatches(&self) -> usize {
        self.pool.len()
    }

    /// What `execute` reads back.
    pub fn read(&self) -> Read<'_, 'b> {
        match self.slim {
            None => Read::Trace,
            Some(ask) => Read::Slim {
                heads: &ask.heads,
                pool: &self.pool,
                rows: self.rows,
                width: self.width,
            },
        }
    }
}
