//! Which fields of a block's [`LayerTrace`] are the same tensor under two names, for each
//! LayerNorm placement — said once, here, and used by both engines: the CPU forward copies
//! a shared field from the one it repeats, the GPU engine gives both one buffer and reads it
//! back once.
//!
//! | field | post-LN (the lesson's) | pre-LN (GPT-2) |
//! |---|---|---|
//! | attn_in | = input (attention reads the stream itself) | LN(input) |
//! | ln_1 | LN(resid_attn) | = attn_in |
//! | ffn_in | = ln_1 | LN(resid_attn) |
//! | ln_2 | LN(resid_ffn) | = ffn_in |
//! | output | = ln_2 | = resid_ffn |
//!
//! A block's `input` is the previous block's `output` (the embedding for block 0) under
//! both placements.

use crate::config::{Config, LnPlacement};
use crate::trace::{Field, LayerTrace};

/// Which of a block's fields share storage, for one LayerNorm placement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceLayout {
    pub placement: LnPlacement,
}

impl TraceLayout {
    pub fn new(c: &Config) -> Self {
        TraceLayout {
            placement: c.ln_placement,
        }
    }

    /// The field whose values `f` repeats, or `None` when `f` is computed on its own. The
    /// answer is never itself shared (one step resolves it).
    pub fn same_as(self, f: Field) -> Option<Field> {
        use Field::*;
        match (self.placement, f) {
            (LnPlacement::Post, AttnIn) => Some(Input),
            (LnPlacement::Post, FfnIn) => Some(Ln1),
            (LnPlacement::Post, Output) => Some(Ln2),
            (LnPlacement::Pre, Ln1) => Some(AttnIn),
            (LnPlacement::Pre, Ln2) => Some(FfnIn),
            (LnPlacement::Pre, Output) => Some(ResidFfn),
            _ => None,
        }
    }

    /// The field that holds `f`'s values: `f` itself, or the one it repeats.
    pub fn stored(self, f: Field) -> Field {
        self.same_as(f).unwrap_or(f)
    }

    /// The shared fields and what each repeats, in the order of the forward pass.
    pub fn shared(self) -> impl Iterator<Item = (Field, Field)> {
        Field::ALL
            .into_iter()
            .filter_map(move |f| self.same_as(f).map(|src| (f, src)))
    }

    /// Fills rows `from..` of every shared field of `l` from the field it repeats.
    pub fn fill_shared(self, l: &mut LayerTrace, from: usize, c: &Config) {
        for (f, src) in self.shared() {
            let w = f
                .shape()
                .row_width(c)
                .expect("only row-major fields are shared");
            // two fields of one struct: take the source out for the copy (no allocation)
            let values = std::mem::take(src.of_mut(l));
            f.of_mut(l)[from * w..].copy_from_slice(&values[from * w..]);
            *src.of_mut(l) = values;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field::Shape;

    #[test]
    fn a_shared_field_repeats_one_that_is_stored_and_comes_before_it_or_is_the_input() {
        for placement in [LnPlacement::Post, LnPlacement::Pre] {
            let l = TraceLayout { placement };
            let shared: Vec<_> = l.shared().collect();
            assert_eq!(shared.len(), 3, "{placement:?}");
            for (f, src) in shared {
                assert!(
                    matches!((f.shape(), src.shape()), (Shape::Rows(_), Shape::Rows(_))),
                    "{placement:?}: {f:?} → {src:?} is not row-major"
                );
                assert_eq!(
                    l.same_as(src),
                    None,
                    "{placement:?}: {f:?} → {src:?} is shared too"
                );
                let pos = |x| Field::ALL.iter().position(|&y| y == x).unwrap();
                assert!(
                    pos(src) < pos(f),
                    "{placement:?}: {f:?} repeats a later field"
                );
            }
            // every placement computes the attention, the FFN and both residual sums itself
            for f in [
                Field::Input,
                Field::Concat,
                Field::AttnOut,
                Field::ResidAttn,
                Field::FfnHidden,
                Field::FfnOut,
                Field::ResidFfn,
            ] {
                assert_eq!(l.stored(f), f);
            }
        }
        let post = TraceLayout {
            placement: LnPlacement::Post,
        };
        assert_eq!(post.stored(Field::Output), Field::Ln2);
        let pre = TraceLayout {
            placement: LnPlacement::Pre,
        };
        assert_eq!(pre.stored(Field::Output), Field::ResidFfn);
    }
}
