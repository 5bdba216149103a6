//! The engine's storage: the weights on the GPU, and every activation buffer, sized once for
//! the whole context (`capacity` positions) and reused by every forward.

use std::cell::RefCell;
use std::ops::Range;

use attnlab_model::{Config, Dims, Field, Keep, Model, Shape, TraceLayout};

use crate::context::Gpu;
use crate::error::GpuError;
use crate::step::Heads;
use crate::{attn_fused, attn_pool, pack_scores};

/// At most this many bytes of activation, trace and readback buffers (weights not counted).
pub const ACTIVATION_BUDGET: u64 = 1 << 30;

/// The budget of an engine without the maps that serves a page's long texts (1.5 GiB):
/// SmolLM2 holds 2,048 positions in it (1,024 in `ACTIVATION_BUDGET`), a GPT-2-sized model
/// its whole context.
pub const LONG_TEXT_BUDGET: u64 = 3 << 29;

/// Floats of one row pooled for the thumbnails (`attn_pool`, at most 64 cells and the roles).
const POOLED: usize = attn_pool::MAX_SIDE + attn_pool::TERMS;

/// Rows a keystroke's slim readback pools, which the staging buffer of an engine without the
/// maps holds from the start (a paste grows it).
const SLIM_ROWS: usize = 64;

/// How many positions the engine's buffers hold for `c`: the model's context `n_positions`,
/// halved until the buffers of that many positions — activations, the per-head matrices, their
/// packed copy and the readback buffer — take at most `budget` bytes and none is larger than
/// `max_binding`. Never below 16 (or the context, if smaller). A bundled-size model keeps its
/// whole context; GPT-2 (1024 positions, 12 × 12 heads) gets fewer when the maps are kept,
/// all of them when they are not (`Keep::Streams`: no (H, P, P) buffer).
pub fn capacity(c: &Config, max_binding: u64, budget: u64, keep: Keep) -> usize {
    capacity_of(&Dims::new(c, c.n_positions), max_binding, budget, keep)
}

/// [`capacity`] for a model of any architecture, its sizes as a trace of its whole context
/// (`dims.t`) has them.
pub fn capacity_of(dims: &Dims, max_binding: u64, budget: u64, keep: Keep) -> usize {
    let (l, d, h, dk, f, v) = (
        dims.n_layer as u64,
        dims.d_model as u64,
        dims.n_head as u64,
        dims.d_k as u64,
        dims.d_ff as u64,
        dims.vocab as u64,
    );
    // floats per position of the row-major buffers (at most 10 d-wide + qkv + hidden per
    // layer, embedding, ln_f, logits, probs — without the maps, three d-wide per layer and
    // the rest once for all layers), and of the per-head matrices at p positions
    let maps = keep.keeps(Field::Weights) as u64;
    let every = keep.every_prediction() as u64;
    let block = 10 * d + 3 * d + f;
    // (without the maps the logits and probabilities are one row, whatever the positions)
    let rows = if maps == 1 {
        l * block + 2 * d + 2 * every * v
    } else {
        l * 3 * d + block + 2 * d + 2 * every * v
    };
    let heads = |p: u64| l * 4 * h * p * (dk + maps * p);
    // what the readback copies: with the maps, every row and both of them; without, a
    // slim result's (a page's long text: a few heads' vectors, every head's rows pooled —
    // the staging grows for more) and the pooled rows' own buffer
    let pooled = POOLED as u64;
    let read = |p: u64| {
        if maps == 1 {
            rows * p + heads(p)
        } else {
            4 * 2 * p * dk + l * h * p * pooled + h * p * pooled
        }
    };
    let fits = |p: u64| {
        // activations + heads, the packed copy of the maps, and the readback
        let total = 4 * (rows * p + heads(p) + maps * heads(p) + read(p));
        let largest = 4 * [maps * h * p * p, every * p * v, p * f, maps * heads(p)]
            .into_iter()
            .max()
            .unwrap_or(0);
        total <= budget && largest <= max_binding
    };
    let floor = dims.t.min(16) as u64;
    let mut p = dims.t as u64;
    while p > floor && !fits(p) {
        p = (p / 2).max(floor);
    }
    p as usize
}

/// Rows the logits and probabilities buffers hold at `p` positions: every one, or the last
/// position's alone for a Trace that keeps no more.
fn prediction_rows(keep: Keep, p: usize) -> usize {
    if keep.every_prediction() {
        p
    } else {
        1
    }
}

/// The rows `s..t` of a forward the output head runs for, and how far up it writes them
/// (`linear::step_shifted`, `qmatmul::step_shifted`): the new rows in place, or the last row
/// into row 0 of the one-row buffers.
pub(super) fn predicted(keep: Keep, (s, t): (usize, usize)) -> (Range<usize>, usize) {
    if keep.every_prediction() {
        (s..t, 0)
    } else {
        (t - 1..t, t - 1)
    }
}

/// Refuses an engine whose buffers at `heads.positions` would not bind: each of `sizes`
/// (name, floats), the logits over a vocabulary of `vocab` and, when kept, one layer's maps;
/// and, without the maps, heads the fused attention cannot take.
pub(super) fn check_bindings(
    heads: Heads,
    keep: Keep,
    vocab: usize,
    sizes: &[(&str, usize)],
    max_binding: u64,
) -> Result<(), GpuError> {
    let maps = keep.keeps(Field::Weights);
    if !maps && !attn_fused::takes(heads.dk) {
        return Err(GpuError::TooLarge(format!(
            "heads of {} values: without the maps the attention runs fused, which takes at most {}",
            heads.dk,
            attn_fused::MAX_DK
        )));
    }
    let own = [
        ("logits", prediction_rows(keep, heads.positions) * vocab),
        ("attention", if maps { heads.square_len() } else { 0 }),
    ];
    for &(what, n) in sizes.iter().chain(&own) {
        if (n * 4) as u64 > max_binding {
            return Err(GpuError::TooLarge(format!(
                "{what} needs {} bytes, the GPU binds at most {max_binding}",
                n * 4
            )));
        }
    }
    Ok(())
}

/// A weight matrix (or LayerNorm gain) and its bias.
pub(super) type Pair = (wgpu::Buffer, wgpu::Buffer);

/// One block's weights.
pub(super) struct BlockWeights {
    pub ln_1: Pair,
    pub c_attn: Pair,
    pub c_proj: Pair,
    pub ln_2: Pair,
    pub fc: Pair,
    pub fc_proj: Pair,
}

/// The model on the GPU.
pub(super) struct Weights {
    pub wte: wgpu::Buffer,
    pub wpe: wgpu::Buffer,
    /// Four zeros: the bias binding of the bias-free lm head.
    pub no_bias: wgpu::Buffer,
    pub blocks: Vec<BlockWeights>,
    pub ln_f: Option<Pair>,
}

impl Weights {
    pub fn upload(gpu: &Gpu, model: &Model) -> Weights {
        let up = |label: &str, data: &[f32]| gpu.storage_init(label, bytemuck::cast_slice(data));
        let w = &model.weights;
        let blocks = w
            .layers
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let pair = |name: &str, a: &[f32], ab: &str, b: &[f32]| {
                    (
                        up(&format!("h.{i}.{name}.{ab}"), a),
                        up(&format!("h.{i}.{name}.bias"), b),
                    )
                };
                BlockWeights {
                    ln_1: pair("ln_1", &l.ln_1_g, "weight", &l.ln_1_b),
                    c_attn: pair("attn.c_attn", &l.c_attn_w, "weight", &l.c_attn_b),
                    c_proj: pair("attn.c_proj", &l.c_proj_w, "weight", &l.c_proj_b),
                    ln_2: pair("ln_2", &l.ln_2_g, "weight", &l.ln_2_b),
                    fc: pair("mlp.c_fc", &l.fc_w, "weight", &l.fc_b),
                    fc_proj: pair("mlp.c_proj", &l.fc_proj_w, "weight", &l.fc_proj_b),
                }
            })
            .collect();
        Weights {
            wte: up("wte", &w.wte),
            wpe: up("wpe", &w.wpe),
            no_bias: up("no bias", &[0.0; 4]),
            blocks,
            ln_f: w
                .ln_f
                .as_ref()
                .map(|(g, b)| (up("ln_f.weight", g), up("ln_f.bias", b))),
        }
    }
}

/// A row-major (capacity, width) activation buffer.
pub(super) struct RowBuffer {
    pub buffer: wgpu::Buffer,
    pub width: usize,
}

/// The score matrices in the order `pack_scores` packs them (its sources, bound in this order)
/// and the readback finds them.
pub(super) const PACKED: [Field; pack_scores::MATRICES] =
    [Field::Scores, Field::Scaled, Field::Masked, Field::Weights];

/// One block's per-head buffers: one for each per-head field of the trace, (H, P, Dk) or
/// (H, P, P) by its shape, found by the field; the (H, P, P) ones only when the maps are kept.
pub(super) struct HeadBuffers {
    by_field: [Option<wgpu::Buffer>; Field::COUNT],
}

impl HeadBuffers {
    fn new(gpu: &Gpu, block: usize, heads: Heads, keep: Keep) -> HeadBuffers {
        HeadBuffers {
            by_field: Field::ALL.map(|f| {
                let len = match f.shape() {
                    Shape::Heads => heads.dk_len(),
                    Shape::Square if keep.keeps(f) => heads.square_len(),
                    Shape::Square | Shape::Rows(_) => return None,
                };
                Some(gpu.storage(&format!("h.{block}.{}", f.name()), len))
            }),
        }
    }

    /// The buffer of per-head field `f`. Panics for a row-major field (those are
    /// [`BlockBuffers::row`]'s) and for a map the engine does not keep.
    pub fn get(&self, f: Field) -> &wgpu::Buffer {
        self.by_field[f as usize]
            .as_ref()
            .unwrap_or_else(|| panic!("{} has no per-head buffer", f.name()))
    }
}

/// One block's buffers: a row buffer per Trace field (fields the [`TraceLayout`] calls shared
/// get their source's), the fused QKV projection (GPT-2's), and the heads.
pub(super) struct BlockBuffers {
    /// Per field: its row buffer (`usize::MAX` for a per-head field).
    fields: [usize; Field::COUNT],
    pub qkv: Option<usize>,
    pub heads: HeadBuffers,
}

impl BlockBuffers {
    /// The row buffer (an index into [`Activations::rows`]) holding row-major field `f`.
    pub fn row(&self, f: Field) -> usize {
        let i = self.fields[f as usize];
        assert!(i != usize::MAX, "{} is not a row-major field", f.name());
        i
    }
}

/// Every activation buffer of a forward, and the buffers around them.
pub(super) struct Activations {
    pub rows: Vec<RowBuffer>,
    pub embedding: usize,
    pub blocks: Vec<BlockBuffers>,
    /// The final LayerNorm's output, for a model with ln_f.
    pub ln_f: Option<usize>,
    pub logits: usize,
    pub probs: usize,
    /// Each layer's four score matrices, compacted for the readback (pack_scores); `None`
    /// when the maps are not kept.
    pub packed: Option<wgpu::Buffer>,
    /// Without the maps: one layer's rows pooled for the heads grid and the roles
    /// (`attn_pool`, (H, P, MAX_SIDE + 5)), copied out layer by layer.
    pub pool: Option<wgpu::Buffer>,
    pub tokens: wgpu::Buffer,
    /// One uniform slot per dispatch.
    pub params: wgpu::Buffer,
    pub slots: usize,
    /// Where a forward's readback lands: sized for the whole Trace when the maps are kept;
    /// without them, for a slim result, and grown when a readback needs more (`staging`).
    staging: RefCell<wgpu::Buffer>,
    /// The distinct row buffers a Trace reads, in the order of the forward pass (what the
    /// readback copies, worked out once).
    pub trace_rows: Vec<usize>,
    /// What the Trace of a forward keeps.
    pub keep: Keep,
}

impl Activations {
    /// The staging buffer, grown first where it holds fewer than `floats` (the old one is
    /// dropped: a readback over the whole of a long text, rarer than a keystroke's).
    pub fn staging(&self, gpu: &Gpu, floats: usize) -> wgpu::Buffer {
        let bytes = (floats * 4) as u64;
        if self.staging.borrow().size() < bytes {
            *self.staging.borrow_mut() = gpu.staging("trace readback", bytes);
        }
        self.staging.borrow().clone()
    }

    /// The buffers of a model of `dims` (`dims.t` = the positions they hold): a fused QKV
    /// buffer per block `qkv` wide when `qkv` is not 0 (GPT-2's), `slots` param slots; the
    /// maps, and the rows the readback copies, as `keep` says.
    pub fn new(
        gpu: &Gpu,
        dims: &Dims,
        heads: Heads,
        (has_ln_f, qkv, slots): (bool, usize, usize),
        keep: Keep,
    ) -> Activations {
        let p = heads.positions;
        let layout = TraceLayout {
            placement: dims.ln_placement,
        };
        let mut rows: Vec<RowBuffer> = Vec::new();
        let mut add = |label: String, width: usize| {
            rows.push(RowBuffer {
                buffer: gpu.storage(&label, p * width),
                width,
            });
            rows.len() - 1
        };
        let embedding = add("embedding".into(), dims.d_model);
        let mut blocks = Vec::new();
        let mut input = embedding;
        // a row field the Trace keeps (or one a kept field repeats) has a buffer per block;
        // the others, without the maps, one buffer for every block (no block reads another's,
        // and no forward reads their old rows)
        let own = |f: Field| {
            keep.keeps(f)
                || Field::ALL
                    .into_iter()
                    .any(|g| keep.keeps(g) && layout.same_as(g) == Some(f))
        };
        let mut shared = [usize::MAX; Field::COUNT];
        let mut shared_qkv = None;
        for i in 0..dims.n_layer {
            let mut fields = [usize::MAX; Field::COUNT];
            // a shared field's source comes before it in Field::ALL (layout's tests)
            for f in Field::ALL {
                let Some(width) = f.shape().width(dims) else {
                    continue;
                };
                fields[f as usize] = match (f, layout.same_as(f)) {
                    (Field::Input, _) => input,
                    (_, Some(src)) => fields[src as usize],
                    (_, None) if own(f) => add(format!("h.{i}.{}", f.name()), width),
                    (_, None) => {
                        if shared[f as usize] == usize::MAX {
                            shared[f as usize] = add(format!("every block's {}", f.name()), width);
                        }
                        shared[f as usize]
                    }
                };
            }
            let qkv = (qkv > 0).then(|| match shared_qkv {
                Some(b) if keep != Keep::All => b,
                _ => {
                    let b = add(format!("h.{i}.qkv"), qkv);
                    shared_qkv = Some(b);
                    b
                }
            });
            let block = BlockBuffers {
                fields,
                qkv,
                heads: HeadBuffers::new(gpu, i, heads, keep),
            };
            input = block.row(Field::Output);
            blocks.push(block);
        }
        let ln_f = has_ln_f.then(|| add("ln_f".into(), dims.d_model));
        // the next-token logits and probabilities: every position's, or one row
        let predictions = prediction_rows(keep, p);
        let mut prediction = |label: &str| {
            rows.push(RowBuffer {
                buffer: gpu.storage(label, predictions * dims.vocab),
                width: dims.vocab,
            });
            rows.len() - 1
        };
        let (logits, probs) = (prediction("logits"), prediction("probs"));
        let maps = keep.keeps(Field::Weights);
        let packed_len = if maps {
            dims.n_layer * pack_scores::packed_len(heads.count, p)
        } else {
            0
        };
        let packed = maps.then(|| gpu.storage("packed scores", packed_len));
        let pool = (!maps).then(|| {
            gpu.storage(
                "pooled rows",
                heads.count * p * attn_pool::row_len(attn_pool::MAX_SIDE),
            )
        });
        // the readback holds every row buffer the Trace keeps once, each layer's (H, T, Dk)
        // matrices and its packed score matrices, at T = capacity
        let read = trace_rows(embedding, &blocks, ln_f, logits, probs, keep);
        let per_dk = Field::ALL
            .iter()
            .filter(|f| f.shape() == Shape::Heads)
            .count();
        let floats = if maps {
            read.iter().map(|&i| rows[i].width * p).sum::<usize>()
                + dims.n_layer * per_dk * heads.dk_len()
                + packed_len
        } else {
            // a slim result of one head, its prediction and each layer's pooled rows
            2 * dims.vocab + 4 * p * heads.dk + SLIM_ROWS * dims.n_layer * heads.count * POOLED
        };
        Activations {
            rows,
            embedding,
            blocks,
            ln_f,
            logits,
            probs,
            packed,
            pool,
            tokens: gpu.storage("tokens", p),
            params: gpu.uniform_slots("params", slots),
            slots,
            staging: RefCell::new(gpu.staging("trace readback", (floats * 4) as u64)),
            trace_rows: read,
            keep,
        }
    }
}

fn trace_rows(
    embedding: usize,
    blocks: &[BlockBuffers],
    ln_f: Option<usize>,
    logits: usize,
    probs: usize,
    keep: Keep,
) -> Vec<usize> {
    let mut out = vec![embedding];
    for b in blocks {
        out.extend(
            Field::ALL
                .iter()
                .filter(|&&f| matches!(f.shape(), Shape::Rows(_)) && keep.keeps(f))
                .map(|&f| b.row(f)),
        );
    }
    out.extend(ln_f);
    out.extend([logits, probs]);
    let mut seen = std::collections::HashSet::new();
    out.retain(|i| seen.insert(*i));
    out
}
