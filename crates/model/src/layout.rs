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
use crate::trace::LayerTrace;

/// A row-major (T, width) field of a block's trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BlockRow {
    Input,
    AttnIn,
    Concat,
    AttnOut,
    ResidAttn,
    Ln1,
    FfnIn,
    FfnHidden,
    FfnOut,
    ResidFfn,
    Ln2,
    Output,
}

impl BlockRow {
    /// Every row-major field, in the order of the forward pass.
    pub const ALL: [BlockRow; 12] = [
        BlockRow::Input,
        BlockRow::AttnIn,
        BlockRow::Concat,
        BlockRow::AttnOut,
        BlockRow::ResidAttn,
        BlockRow::Ln1,
        BlockRow::FfnIn,
        BlockRow::FfnHidden,
        BlockRow::FfnOut,
        BlockRow::ResidFfn,
        BlockRow::Ln2,
        BlockRow::Output,
    ];

    /// The field's name in the Trace.
    pub fn name(self) -> &'static str {
        match self {
            BlockRow::Input => "input",
            BlockRow::AttnIn => "attn_in",
            BlockRow::Concat => "concat",
            BlockRow::AttnOut => "attn_out",
            BlockRow::ResidAttn => "resid_attn",
            BlockRow::Ln1 => "ln_1",
            BlockRow::FfnIn => "ffn_in",
            BlockRow::FfnHidden => "ffn_hidden",
            BlockRow::FfnOut => "ffn_out",
            BlockRow::ResidFfn => "resid_ffn",
            BlockRow::Ln2 => "ln_2",
            BlockRow::Output => "output",
        }
    }

    /// Values per row: the FFN's hidden width for `ffn_hidden`, d_model otherwise.
    pub fn width(self, c: &Config) -> usize {
        match self {
            BlockRow::FfnHidden => c.d_ff(),
            _ => c.n_embd,
        }
    }

    /// The field in a trace.
    pub fn of(self, l: &LayerTrace) -> &Vec<f32> {
        match self {
            BlockRow::Input => &l.input,
            BlockRow::AttnIn => &l.attn_in,
            BlockRow::Concat => &l.concat,
            BlockRow::AttnOut => &l.attn_out,
            BlockRow::ResidAttn => &l.resid_attn,
            BlockRow::Ln1 => &l.ln_1,
            BlockRow::FfnIn => &l.ffn_in,
            BlockRow::FfnHidden => &l.ffn_hidden,
            BlockRow::FfnOut => &l.ffn_out,
            BlockRow::ResidFfn => &l.resid_ffn,
            BlockRow::Ln2 => &l.ln_2,
            BlockRow::Output => &l.output,
        }
    }

    /// The field in a trace, to write.
    pub fn of_mut(self, l: &mut LayerTrace) -> &mut Vec<f32> {
        match self {
            BlockRow::Input => &mut l.input,
            BlockRow::AttnIn => &mut l.attn_in,
            BlockRow::Concat => &mut l.concat,
            BlockRow::AttnOut => &mut l.attn_out,
            BlockRow::ResidAttn => &mut l.resid_attn,
            BlockRow::Ln1 => &mut l.ln_1,
            BlockRow::FfnIn => &mut l.ffn_in,
            BlockRow::FfnHidden => &mut l.ffn_hidden,
            BlockRow::FfnOut => &mut l.ffn_out,
            BlockRow::ResidFfn => &mut l.resid_ffn,
            BlockRow::Ln2 => &mut l.ln_2,
            BlockRow::Output => &mut l.output,
        }
    }
}

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
    pub fn same_as(self, f: BlockRow) -> Option<BlockRow> {
        use BlockRow::*;
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
    pub fn stored(self, f: BlockRow) -> BlockRow {
        self.same_as(f).unwrap_or(f)
    }

    /// The shared fields and what each repeats, in the order of the forward pass.
    pub fn shared(self) -> impl Iterator<Item = (BlockRow, BlockRow)> {
        BlockRow::ALL
            .into_iter()
            .filter_map(move |f| self.same_as(f).map(|src| (f, src)))
    }

    /// Fills rows `from..` of every shared field of `l` from the field it repeats.
    pub fn fill_shared(self, l: &mut LayerTrace, from: usize, c: &Config) {
        for (f, src) in self.shared() {
            let w = f.width(c);
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

    #[test]
    fn a_shared_field_repeats_one_that_is_stored_and_comes_before_it_or_is_the_input() {
        for placement in [LnPlacement::Post, LnPlacement::Pre] {
            let l = TraceLayout { placement };
            let shared: Vec<_> = l.shared().collect();
            assert_eq!(shared.len(), 3, "{placement:?}");
            for (f, src) in shared {
                assert_eq!(
                    l.same_as(src),
                    None,
                    "{placement:?}: {f:?} → {src:?} is shared too"
                );
                let pos = |x| BlockRow::ALL.iter().position(|&y| y == x).unwrap();
                assert!(
                    pos(src) < pos(f),
                    "{placement:?}: {f:?} repeats a later field"
                );
            }
            // every placement computes the attention, the FFN and both residual sums itself
            for f in [
                BlockRow::Input,
                BlockRow::Concat,
                BlockRow::AttnOut,
                BlockRow::ResidAttn,
                BlockRow::FfnHidden,
                BlockRow::FfnOut,
                BlockRow::ResidFfn,
            ] {
                assert_eq!(l.stored(f), f);
            }
        }
        let post = TraceLayout {
            placement: LnPlacement::Post,
        };
        assert_eq!(post.stored(BlockRow::Output), BlockRow::Ln2);
        let pre = TraceLayout {
            placement: LnPlacement::Pre,
        };
        assert_eq!(pre.stored(BlockRow::Output), BlockRow::ResidFfn);
    }
}
