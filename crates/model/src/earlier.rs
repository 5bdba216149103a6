//! The rows an incremental run takes from an earlier trace: the first `s` positions of each
//! field, laid out for the new length. A borrowed earlier trace is copied from; an owned one
//! (`Earlier::Owned`, the page's CPU worker passes its cache) gives its vectors up block by
//! block and they grow in place, so that the old and the new trace of a long text are never
//! held at once.

use crate::trace::{Field, LayerTrace, Trace};

/// An earlier trace whose first rows a run reuses.
pub enum Earlier<'a> {
    /// Read only: its rows are copied.
    Borrowed(&'a Trace),
    /// Given up: its vectors move into the new trace, grown in place.
    Owned(Box<Trace>),
}

impl<'a> Earlier<'a> {
    pub fn trace(&self) -> &Trace {
        match self {
            Earlier::Borrowed(t) => t,
            Earlier::Owned(t) => t,
        }
    }

    /// Block `l` of it: borrowed, or moved out of an owned trace.
    pub(crate) fn layer(&mut self, l: usize) -> Option<Held<'a, LayerTrace>> {
        match self {
            Earlier::Borrowed(t) => {
                let t: &'a Trace = t;
                t.layers.get(l).map(Held::Borrowed)
            }
            Earlier::Owned(t) => t.layers.get_mut(l).map(|x| Held::Owned(std::mem::take(x))),
        }
    }

    /// Its embedding's, final norm's or predictions' rows (when it has them): borrowed, or
    /// moved out.
    pub(crate) fn rows(&mut self, which: Stream) -> Option<Held<'a, Vec<f32>>> {
        match self {
            Earlier::Borrowed(t) => {
                let t: &'a Trace = t;
                match which {
                    Stream::Embedding => Some(&t.embedding),
                    Stream::FinalNorm => t.ln_f.as_ref(),
                    Stream::Logits => Some(&t.logits),
                    Stream::Probs => Some(&t.probs),
                }
                .map(Held::Borrowed)
            }
            Earlier::Owned(t) => match which {
                Stream::Embedding => Some(&mut t.embedding),
                Stream::FinalNorm => t.ln_f.as_mut(),
                Stream::Logits => Some(&mut t.logits),
                Stream::Probs => Some(&mut t.probs),
            }
            .map(|x| Held::Owned(std::mem::take(x))),
        }
    }
}

/// The trace's rows outside the blocks.
pub(crate) enum Stream {
    Embedding,
    FinalNorm,
    /// The next-token logits after each position (every position's, `Keep::every_prediction`).
    Logits,
    /// Their softmax.
    Probs,
}

/// A value of an earlier trace: borrowed, or owned and free to grow in place.
pub(crate) enum Held<'a, T> {
    Borrowed(&'a T),
    Owned(T),
}

impl<'a> Held<'a, LayerTrace> {
    /// Field `f` of the block: borrowed, or moved out of it.
    pub(crate) fn field(&mut self, f: Field) -> Held<'a, Vec<f32>> {
        match self {
            Held::Borrowed(l) => {
                let l: &'a LayerTrace = l;
                Held::Borrowed(f.of(l))
            }
            Held::Owned(l) => Held::Owned(std::mem::take(f.of_mut(l))),
        }
    }
}

impl Held<'_, Vec<f32>> {
    pub(crate) fn is_empty(&self) -> bool {
        match self {
            Held::Borrowed(v) => v.is_empty(),
            Held::Owned(v) => v.is_empty(),
        }
    }
}

/// Rows an owned vector makes room for beyond the length asked when it has to move, so that
/// typing at the end does not move it every keystroke: a quarter of its rows, at least 8 and
/// at most 64 (a short text's trace does not grow to several times its size, nor a long
/// one's by more than it needs). A (T, T) map's rows are each T wide: a quarter more rows
/// holds about an eighth more tokens.
const ROOM_ROWS: std::ops::RangeInclusive<usize> = 8..=64;

/// `v` made `len` long, with room for more rows of `width` (`ROOM_ROWS`) when it has to move.
fn grow_to(v: &mut Vec<f32>, len: usize, width: usize, fill: f32) {
    if v.capacity() < len {
        let room = (len / width.max(1) / 4).clamp(*ROOM_ROWS.start(), *ROOM_ROWS.end());
        v.reserve_exact(len + room * width - v.len());
    }
    v.resize(len, fill);
}

/// A row-major (T, W) buffer keeping the first `keep` rows of `old`, the rest 0.
pub(crate) fn reuse_rows(old: &[f32], keep: usize, t: usize, width: usize) -> Vec<f32> {
    let mut out = vec![0.0; t * width];
    out[..keep * width].copy_from_slice(&old[..keep * width]);
    out
}

/// `reuse_rows` of a held vector: an owned one is cut and grown in place.
pub(crate) fn grow_rows(old: Held<'_, Vec<f32>>, keep: usize, t: usize, width: usize) -> Vec<f32> {
    match old {
        Held::Borrowed(x) => reuse_rows(x, keep, t, width),
        Held::Owned(mut v) => {
            v.truncate(keep * width);
            grow_to(&mut v, t * width, width, 0.0);
            v
        }
    }
}

/// (H, T, width) per-head rows re-laid-out from `old` (H, old_t, width) for `t` positions,
/// keeping each head's first `keep` rows, the rest 0.
pub(crate) fn reuse_heads(
    old: &[f32],
    h: usize,
    old_t: usize,
    keep: usize,
    t: usize,
    width: usize,
) -> Vec<f32> {
    let mut out = vec![0.0; h * t * width];
    for hh in 0..h {
        out[hh * t * width..][..keep * width]
            .copy_from_slice(&old[hh * old_t * width..][..keep * width]);
    }
    out
}

/// `reuse_heads` of a held vector: an owned one's heads move within it (back to front when
/// it grows, front to back when it shrinks, so that no head is written over before it moved).
pub(crate) fn grow_heads(
    old: Held<'_, Vec<f32>>,
    (h, old_t): (usize, usize),
    keep: usize,
    t: usize,
    width: usize,
) -> Vec<f32> {
    let mut v = match old {
        Held::Borrowed(x) => return reuse_heads(x, h, old_t, keep, t, width),
        Held::Owned(v) => v,
    };
    let (from, to, kept) = (old_t * width, t * width, keep * width);
    if to >= from {
        grow_to(&mut v, h * to, h * width, 0.0);
    }
    move_blocks(&mut v, h, (from, to), kept);
    v.truncate(h * to);
    for hh in 0..h {
        v[hh * to + kept..(hh + 1) * to].fill(0.0);
    }
    v
}

/// `n` blocks of `len` values (`len` ≤ `from` and `to`), one every `from` values, moved to one
/// every `to` values within `v` (long enough for both): back to front when they move apart,
/// front to back when they move together, so that no block is written over before it moved.
pub(crate) fn move_blocks(v: &mut [f32], n: usize, (from, to): (usize, usize), len: usize) {
    if to >= from {
        for b in (0..n).rev() {
            v.copy_within(b * from..b * from + len, b * to);
        }
    } else {
        for b in 0..n {
            v.copy_within(b * from..b * from + len, b * to);
        }
    }
}

/// (H, T, T) matrices: the top-left `keep`×`keep` corner of each old (H, old_t, old_t)
/// matrix, the rest `fill`. An owned vector's rows move within it (back to front when it
/// grows, front to back when it shrinks, as `move_blocks`), so that a keystroke does not make
/// every map again.
pub(crate) fn grow_square(
    old: Held<'_, Vec<f32>>,
    (h, old_t): (usize, usize),
    keep: usize,
    t: usize,
    fill: f32,
) -> Vec<f32> {
    let mut v = match old {
        Held::Borrowed(old) => {
            let mut out = vec![fill; h * t * t];
            for hh in 0..h {
                for i in 0..keep {
                    out[(hh * t + i) * t..][..keep]
                        .copy_from_slice(&old[(hh * old_t + i) * old_t..][..keep]);
                }
            }
            return out;
        }
        Held::Owned(v) => v,
    };
    let at = |t: usize, hh: usize, i: usize| (hh * t + i) * t;
    if t >= old_t {
        grow_to(&mut v, h * t * t, h * t, fill);
        for hh in (0..h).rev() {
            for i in (0..keep).rev() {
                v.copy_within(at(old_t, hh, i)..at(old_t, hh, i) + keep, at(t, hh, i));
            }
        }
    } else {
        for hh in 0..h {
            for i in 0..keep {
                v.copy_within(at(old_t, hh, i)..at(old_t, hh, i) + keep, at(t, hh, i));
            }
        }
        v.truncate(h * t * t);
    }
    for hh in 0..h {
        for i in 0..keep {
            v[at(t, hh, i) + keep..at(t, hh, i) + t].fill(fill);
        }
        v[at(t, hh, keep)..at(t, hh, t)].fill(fill);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_grown_in_place_equal_heads_copied() {
        let (h, w) = (3, 2);
        for (old_t, keep, t) in [(5, 4, 6), (5, 5, 9), (6, 2, 3), (4, 3, 4), (7, 1, 2)] {
            let old: Vec<f32> = (0..h * old_t * w).map(|x| x as f32 + 1.0).collect();
            let copied = reuse_heads(&old, h, old_t, keep, t, w);
            let grown = grow_heads(Held::Owned(old.clone()), (h, old_t), keep, t, w);
            assert_eq!(grown, copied, "{old_t} → {t}, {keep} kept");
            let rows = grow_rows(Held::Owned(old.clone()), keep, t, w);
            assert_eq!(rows, reuse_rows(&old, keep, t, w));
        }
    }

    #[test]
    fn square_maps_grown_in_place_equal_maps_copied() {
        let h = 3;
        for (old_t, keep, t) in [
            (5, 4, 6),
            (5, 5, 9),
            (6, 2, 3),
            (4, 3, 4),
            (7, 1, 2),
            (6, 0, 4),
        ] {
            let old: Vec<f32> = (0..h * old_t * old_t).map(|x| x as f32 + 1.0).collect();
            let copied = grow_square(Held::Borrowed(&old), (h, old_t), keep, t, -1.0);
            // with and without room to grow into
            let mut roomy = Vec::with_capacity(h * 10 * 10);
            roomy.extend_from_slice(&old);
            for held in [old.clone(), roomy] {
                let grown = grow_square(Held::Owned(held), (h, old_t), keep, t, -1.0);
                assert_eq!(grown, copied, "{old_t} → {t}, {keep} kept");
            }
            // the corner kept, the rest filled
            assert_eq!(
                copied[(t + keep.saturating_sub(1)) * t],
                if keep > 0 {
                    old[(old_t + keep - 1) * old_t]
                } else {
                    -1.0
                }
            );
            assert_eq!(
                copied.iter().filter(|&&x| x == -1.0).count(),
                h * (t * t - keep * keep)
            );
        }
    }
}
