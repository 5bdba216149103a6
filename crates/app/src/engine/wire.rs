//! How a `Trace` crosses from the CPU worker to the page: a small JSON header (sizes, tokens,
//! options) and every array of the trace one after another in one `Float32Array`, whose
//! buffer is transferred, not copied. The order is `Trace::fields`' order; each array's length
//! follows from the sizes, so the header carries no offsets.
//!
//! A result for the views is **lite**: only the layer fields a view shows (`SHOWN`) travel,
//! the others arrive empty, and of the logits only the last position's row — about half the
//! numbers. A full trace (the whole-Trace export) is asked for when needed.
//!
//! A **slim** result (a text too long for every head's maps, `Trace::slim`) carries no
//! block fields at all: the last position's prediction and the maps and vectors of the heads
//! the page asked for (`Header::heads`), after the rest.

use attnlab_model::{AttentionOptions, Dims, Field, HeadMaps, LayerTrace, Thumbnails, Trace};
use serde::{Deserialize, Serialize};

/// Everything of a trace but its arrays.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub dims: Dims,
    pub tokens: Vec<u32>,
    pub dropped: usize,
    pub options: AttentionOptions,
    pub has_ln_f: bool,
    /// Only the `SHOWN` layer fields (the rest empty), and no `ln_f`.
    #[serde(default)]
    pub lite: bool,
    /// A slim trace: no block fields, one prediction, and these heads' `HeadMaps`.
    #[serde(default)]
    pub slim: bool,
    #[serde(default)]
    pub heads: Vec<(usize, usize)>,
    /// A slim trace's thumbnails: their span and cells (every head's, after the heads').
    #[serde(default)]
    pub thumbnails: Option<(usize, usize)>,
    /// The thumbnails' text roles of every head (`Thumbnails::roles`), few enough for the
    /// header.
    #[serde(default)]
    pub roles: Vec<Option<f32>>,
}

/// The layer fields a lite trace carries: what the views read (q, k, v, the four score
/// stages, head outputs, concat; the block output for the logit lens). The rest (the residual
/// stream's inner steps, the FFN) only the whole-Trace export uses.
pub const SHOWN: [Field; 10] = [
    Field::Q,
    Field::K,
    Field::V,
    Field::Scores,
    Field::Scaled,
    Field::Masked,
    Field::Weights,
    Field::HeadOut,
    Field::Concat,
    Field::Output,
];

/// Whether a layer's field `f` travels: every field of a full trace, the `SHOWN` ones of a
/// lite one.
pub fn carried(lite: bool, f: Field) -> bool {
    !lite || SHOWN.contains(&f)
}

impl Header {
    pub fn of(trace: &Trace, lite: bool) -> Header {
        let slim = trace.layers.iter().all(|l| l.q.is_empty());
        Header {
            dims: trace.dims,
            tokens: trace.tokens.clone(),
            dropped: trace.dropped,
            options: trace.options.clone(),
            has_ln_f: trace.ln_f.is_some(),
            lite: lite && !slim,
            slim,
            heads: trace.heads.iter().map(|m| (m.layer, m.head)).collect(),
            thumbnails: trace.thumbnails.as_ref().map(|t| (t.span, t.cells)),
            roles: trace
                .thumbnails
                .as_ref()
                .map(|t| t.roles.clone())
                .unwrap_or_default(),
        }
    }

    /// The length of every array, in order: embedding, each layer's fields (`Field::ALL`),
    /// ln_f (if any), logits, probs.
    pub fn lengths(&self) -> Vec<usize> {
        let Dims {
            t,
            d_model: d,
            n_layer,
            vocab: v,
            ..
        } = self.dims;
        if self.slim {
            let (head, map) = (t * self.dims.d_k, t * t);
            let mut out = vec![0; 1 + n_layer * Field::ALL.len()];
            out.extend(self.has_ln_f.then_some(0));
            out.extend([v, v]);
            for _ in &self.heads {
                out.extend([head, head, head, head, map, map, map, map]);
            }
            out.extend(
                self.thumbnails
                    .map(|(_, cells)| n_layer * self.dims.n_head * cells * cells),
            );
            return out;
        }
        let layer = Field::ALL.map(|f| {
            if carried(self.lite, f) {
                f.shape().len(&self.dims)
            } else {
                0
            }
        });
        let lite = self.lite;
        let mut out = vec![t * d];
        for _ in 0..n_layer {
            out.extend(layer);
        }
        if self.has_ln_f {
            out.push(if lite { 0 } else { t * d });
        }
        out.extend([if lite { v.min(t * v) } else { t * v }, t * v]);
        out
    }

    /// How many floats the arrays take together.
    pub fn total(&self) -> usize {
        self.lengths().iter().sum()
    }
}

/// The trace's arrays in wire order (what the worker copies out, one after another); in a
/// lite trace the fields not `SHOWN` are empty.
pub fn arrays(trace: &Trace, lite: bool) -> Vec<&[f32]> {
    let mut out: Vec<&[f32]> = vec![&trace.embedding];
    for l in &trace.layers {
        out.extend(Field::ALL.map(|f| {
            if carried(lite, f) {
                &f.of(l)[..]
            } else {
                &[][..]
            }
        }));
    }
    if let Some(x) = &trace.ln_f {
        out.push(if lite { &[][..] } else { x });
    }
    // a lite trace's logits: the last position's only (what generation samples from)
    let last = trace.last_logits();
    out.extend([
        if lite { last } else { &trace.logits[..] },
        &trace.probs[..],
    ]);
    for m in &trace.heads {
        out.extend(m.arrays().map(|a| &a[..]));
    }
    out.extend(trace.thumbnails.as_ref().map(|t| &t.weights[..]));
    out
}

/// Rebuilds a trace from its header and arrays: `take(offset, len)` gives the `len` floats
/// starting at `offset` of the flat buffer (one copy per array, straight from the transferred
/// buffer into a new vector, nothing zeroed first). `available` is the buffer's length; a
/// buffer that does not match the header is an error, never a panic later in a view.
pub fn rebuild(
    header: Header,
    available: usize,
    mut take: impl FnMut(usize, usize) -> Vec<f32>,
) -> Result<Trace, String> {
    let lengths = header.lengths();
    let total: usize = lengths.iter().sum();
    if total != available {
        return Err(format!(
            "the worker sent {available} numbers for a trace of {total}"
        ));
    }
    if header.tokens.len() != header.dims.t {
        return Err(format!(
            "the worker sent {} tokens for a trace of {}",
            header.tokens.len(),
            header.dims.t
        ));
    }
    let mut trace = Trace {
        dims: header.dims,
        tokens: header.tokens,
        dropped: header.dropped,
        options: header.options,
        embedding: Vec::new(),
        layers: vec![LayerTrace::default(); header.dims.n_layer],
        ln_f: header.has_ln_f.then(Vec::new),
        logits: Vec::new(),
        probs: Vec::new(),
        heads: header
            .heads
            .iter()
            .map(|&(layer, head)| HeadMaps {
                layer,
                head,
                ..HeadMaps::default()
            })
            .collect(),
        thumbnails: header.thumbnails.map(|(span, cells)| Thumbnails {
            n_layer: header.dims.n_layer,
            n_head: header.dims.n_head,
            span,
            cells,
            weights: Vec::new(),
            roles: header.roles.clone(),
        }),
    };
    let mut slots: Vec<&mut Vec<f32>> = vec![&mut trace.embedding];
    for l in trace.layers.iter_mut() {
        slots.extend(l.fields_mut());
    }
    if let Some(x) = trace.ln_f.as_mut() {
        slots.push(x);
    }
    slots.push(&mut trace.logits);
    slots.push(&mut trace.probs);
    for m in trace.heads.iter_mut() {
        slots.extend(m.arrays_mut());
    }
    if let Some(t) = trace.thumbnails.as_mut() {
        slots.push(&mut t.weights);
    }
    let mut offset = 0;
    for (slot, &len) in slots.into_iter().zip(&lengths) {
        *slot = take(offset, len);
        if slot.len() != len {
            return Err(format!(
                "the worker's array at {offset} has {} numbers, not {len}",
                slot.len()
            ));
        }
        offset += len;
    }
    Ok(trace)
}

#[cfg(test)]
mod tests {
    use super::*;
    use attnlab_model::testing::{random_model, tiny_config as config};
    use attnlab_model::{forward, LnPlacement};

    #[test]
    fn a_trace_survives_the_wire_exactly_for_both_layernorm_placements() {
        for (seed, ln) in [(1, LnPlacement::Post), (2, LnPlacement::Pre)] {
            let model = random_model(&config(ln), seed, 0.5);
            let opts = AttentionOptions {
                temperature: 0.5,
                ablate: [(1, 0)].into(),
                ..AttentionOptions::default()
            };
            let trace = forward(&model, &[3, 1, 4, 1, 5], &opts).unwrap();
            let header = Header::of(&trace, false);
            let flat: Vec<f32> = arrays(&trace, false).concat();
            assert_eq!(
                flat.len(),
                header.total(),
                "{ln:?}: the sizes say every length"
            );
            let back = rebuild(header.clone(), flat.len(), |at, len| {
                flat[at..at + len].to_vec()
            })
            .unwrap();
            assert_eq!(back, trace, "{ln:?}");
            // lite: what the views read arrives exactly, the rest empty, in about half
            let lite = Header::of(&trace, true);
            let flat: Vec<f32> = arrays(&trace, true).concat();
            assert_eq!(flat.len(), lite.total());
            assert!(
                lite.total() * 10 < header.total() * 7,
                "{} of {}",
                lite.total(),
                header.total()
            );
            let back = rebuild(lite, flat.len(), |at, len| flat[at..at + len].to_vec()).unwrap();
            for (l, (a, b)) in back.layers.iter().zip(&trace.layers).enumerate() {
                for ((name, x), (_, y)) in a.fields().into_iter().zip(b.fields()) {
                    if SHOWN.iter().any(|f| f.name() == name) {
                        assert_eq!(x, y, "{ln:?} layer {l} {name}");
                    } else {
                        assert!(x.is_empty(), "{ln:?} layer {l} {name}");
                    }
                }
            }
            assert_eq!(
                (&back.embedding, &back.probs, back.last_logits()),
                (&trace.embedding, &trace.probs, trace.last_logits())
            );
            assert_eq!(
                back.logits.len(),
                trace.dims.vocab,
                "only the last row of logits"
            );
            for l in 0..trace.dims.n_layer {
                for h in 0..trace.dims.n_head {
                    let (a, b) = (back.head(l, h), trace.head(l, h));
                    assert_eq!(
                        (a.q, a.k, a.v, a.weights, a.masked),
                        (b.q, b.k, b.v, b.weights, b.masked)
                    );
                }
            }
            assert_eq!(
                attnlab_model::lens::stage_rows(&back, 4).unwrap(),
                attnlab_model::lens::stage_rows(&trace, 4).unwrap(),
                "the logit lens reads a lite trace"
            );
        }
    }

    /// A slim trace (a long text's: no block fields) carries its heads and the last
    /// prediction exactly, and nothing else: far fewer numbers than even a lite trace.
    #[test]
    fn a_slim_trace_survives_the_wire_with_its_heads() {
        let model = random_model(&config(LnPlacement::Pre), 5, 0.5);
        let ids = [3, 1, 4, 1, 5, 9, 2, 6];
        let opts = AttentionOptions {
            temperature: 0.7,
            ..AttentionOptions::default()
        };
        let (lean, _) =
            attnlab_model::forward_kept(&model, None, &ids, &opts, attnlab_model::Keep::Streams)
                .unwrap();
        let whole = forward(&model, &ids, &opts).unwrap();
        let mut slim = lean.slim(&[(1, 1), (0, 1)]).unwrap();
        slim.thumbnails = Some(lean.thumbnails(4).unwrap());
        let header = Header::of(&slim, true);
        assert!(header.slim && !header.lite);
        assert_eq!(header.heads, vec![(1, 1), (0, 1)]);
        let flat: Vec<f32> = arrays(&slim, true).concat();
        assert_eq!(flat.len(), header.total());
        assert!(header.total() < Header::of(&whole, true).total());
        let json = serde_json::to_string(&header).unwrap();
        let header: Header = serde_json::from_str(&json).unwrap();
        let back = rebuild(header, flat.len(), |at, len| flat[at..at + len].to_vec()).unwrap();
        assert_eq!(back, slim);
        for (l, h) in [(1, 1), (0, 1)] {
            let (a, b) = (back.head(l, h), whole.head(l, h));
            assert_eq!(
                (a.q, a.k, a.v, a.head_out, a.scores, a.scaled, a.masked, a.weights),
                (b.q, b.k, b.v, b.head_out, b.scores, b.scaled, b.masked, b.weights),
                "head {l}.{h}"
            );
        }
        assert!(!back.has_head(0, 0));
        assert_eq!(back.last_logits(), lean.last_logits());
        // one number short is refused, not read past
        let header = Header::of(&slim, true);
        assert!(rebuild(header, flat.len() - 1, |at, len| flat[at..at + len]
            .to_vec())
        .is_err());
    }

    /// Every field of every layer filled with its own tag, (layer + 1) × 100 + its place in a
    /// list of names written here: after the wire each field, read by its serde name, holds
    /// its own tag (a lite trace: the views' fields, the others empty). Two fields swapped
    /// between the sending and the receiving side, or a wrong field in `SHOWN`, fail here.
    #[test]
    fn each_field_arrives_under_its_own_name() {
        const NAMES: [&str; 20] = attnlab_model::testing::LAYER_FIELD_NAMES;
        const VIEWS_READ: [&str; 10] = [
            "q", "k", "v", "scores", "scaled", "masked", "weights", "head_out", "concat", "output",
        ];
        let model = random_model(&config(LnPlacement::Pre), 4, 0.5);
        let mut trace = forward(&model, &[2, 7, 1, 8], &AttentionOptions::default()).unwrap();
        let tag = |l: usize, name: &str| {
            ((l + 1) * 100 + NAMES.iter().position(|&n| n == name).unwrap()) as f32
        };
        for (l, layer) in trace.layers.iter_mut().enumerate() {
            let mut json = serde_json::to_value(&*layer).unwrap();
            for (name, xs) in json.as_object_mut().unwrap() {
                for x in xs.as_array_mut().unwrap() {
                    *x = serde_json::json!(tag(l, name));
                }
            }
            *layer = serde_json::from_value(json).unwrap();
        }
        for lite in [false, true] {
            let header = Header::of(&trace, lite);
            let flat: Vec<f32> = arrays(&trace, lite).concat();
            let back = rebuild(header, flat.len(), |at, len| flat[at..at + len].to_vec()).unwrap();
            for (l, (a, b)) in back.layers.iter().zip(&trace.layers).enumerate() {
                let (got, sent) = (
                    serde_json::to_value(a).unwrap(),
                    serde_json::to_value(b).unwrap(),
                );
                for name in NAMES {
                    let (got, sent) = (
                        got[name].as_array().unwrap(),
                        sent[name].as_array().unwrap(),
                    );
                    if !lite || VIEWS_READ.contains(&name) {
                        assert_eq!(got.len(), sent.len(), "layer {l} {name}, lite {lite}");
                        assert!(
                            got.iter().all(|x| x.as_f64() == Some(tag(l, name) as f64)),
                            "layer {l} {name} (lite {lite}) holds another field's numbers"
                        );
                    } else {
                        assert!(got.is_empty(), "layer {l} {name} travels in a lite trace");
                    }
                }
            }
        }
    }

    #[test]
    fn a_buffer_that_does_not_match_its_header_is_refused() {
        let model = random_model(&config(LnPlacement::Post), 3, 0.5);
        let trace = forward(&model, &[1, 2], &AttentionOptions::default()).unwrap();
        let header = Header::of(&trace, false);
        let n = header.total();
        let err = rebuild(header.clone(), n - 1, |_, len| vec![0.0; len]).unwrap_err();
        assert!(
            err.contains(&format!("{} numbers for a trace of {n}", n - 1)),
            "{err}"
        );
        // an array cut short on the way
        let err =
            rebuild(header.clone(), n, |_, len| vec![0.0; len.saturating_sub(1)]).unwrap_err();
        assert!(err.contains("numbers, not"), "{err}");
        let mut bad = header;
        bad.tokens.pop();
        assert!(rebuild(bad, n, |_, len| vec![0.0; len])
            .unwrap_err()
            .contains("1 tokens"));
    }
}
