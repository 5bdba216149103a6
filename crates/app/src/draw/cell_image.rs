//! An RGBA image of square matrices, one pixel per cell, that keeps the matrices it was
//! written from, so that drawing the next result writes only the rows that changed.
//!
//! Typing at the end of the text adds (or retokenizes) the last token or two: under the
//! causal mask every earlier row of every head keeps its weights, and the new column is
//! masked in every earlier row. So a keystroke changes a row or two of each matrix, and the
//! image writes and puts those instead of every cell. Each matrix has a square slot whose
//! side is rounded up (`slot_side`), so a text one token longer keeps every slot where it was.

use attnlab_model::cpu::MASKED;

use super::colour::{Scale, MASK_RGB};

/// The side a slot is given to hold a `need`-cell matrix: `need` rounded up to a multiple of
/// 64, unless the side it `have`s is at least that and at most twice that. A keystroke usually
/// adds a token, so an exact side would lay every slot out anew on almost every keystroke.
pub(super) fn slot_side(have: usize, need: usize) -> usize {
    let want = need.max(1).next_multiple_of(64);
    if have >= want && have <= 2 * want {
        have
    } else {
        want
    }
}

/// What one slot holds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Slot {
    /// The side of the matrix last written into it (0: nothing).
    t: usize,
    /// The scale it was written with.
    scale: Option<Scale>,
}

/// A rectangle of changed pixels inside a slot: x, y, width, height.
pub(super) type Rect = (usize, usize, usize, usize);

pub(super) struct CellImage {
    /// The side of every matrix's slot, in pixels.
    side: usize,
    slots: Vec<Slot>,
    /// The pixels, RGBA, `width()` × `height()`.
    px: Vec<u8>,
    /// The values each slot was written from (their bits) and which of its cells were masked
    /// (slot after slot, `side` × `side` each, in rows; only the top-left `Slot::t` × `Slot::t`
    /// counts).
    values: Vec<u32>,
    masked: Vec<bool>,
}

/// Whether `a` holds exactly the bits `b` does (the same length).
fn same(a: &[f32], b: &[u32]) -> bool {
    a.iter().zip(b).fold(0, |d, (x, y)| d | (x.to_bits() ^ y)) == 0
}

/// Whether the cells `masked` marks as `MASKED` are exactly those `kept` says (the same length).
fn same_mask(masked: &[f32], kept: &[bool]) -> bool {
    !masked
        .iter()
        .zip(kept)
        .fold(false, |d, (&m, &k)| d | ((m == MASKED) != k))
}

impl CellImage {
    pub(super) const fn new() -> CellImage {
        CellImage {
            side: 0,
            slots: Vec::new(),
            px: Vec::new(),
            values: Vec::new(),
            masked: Vec::new(),
        }
    }

    /// Lays the image out for `n` matrices of up to `t` × `t` cells. Returns whether it was
    /// laid out anew (a new size: every slot empty, to be written whole).
    pub(super) fn layout(&mut self, n: usize, t: usize) -> bool {
        let side = slot_side(self.side, t);
        if (side, n) == (self.side, self.slots.len()) {
            return false;
        }
        self.side = side;
        self.slots = vec![Slot::default(); n];
        self.px = vec![255; self.width() * self.height() * 4];
        self.values = vec![0; n * side * side];
        self.masked = vec![false; n * side * side];
        true
    }

    /// Slots per row of the image (a square of them, as near as their number allows).
    fn per(&self) -> usize {
        ((self.slots.len() as f64).sqrt().ceil() as usize).max(1)
    }

    pub(super) fn width(&self) -> usize {
        self.per() * self.side
    }

    pub(super) fn height(&self) -> usize {
        self.slots.len().div_ceil(self.per()) * self.side
    }

    /// The top-left pixel of slot `i`.
    pub(super) fn at(&self, i: usize) -> (usize, usize) {
        let per = self.per();
        ((i % per) * self.side, (i / per) * self.side)
    }

    pub(super) fn pixels(&self) -> &[u8] {
        &self.px
    }

    /// Writes a `t` × `t` matrix into slot `i`: `values`, coloured by `scale`, grey where
    /// `masked` holds `MASKED`. Returns the rectangles of the slot whose pixels it wrote
    /// (none when the matrix is the one the slot holds), or `None` when the matrix does not
    /// fit the layout or its arrays are short.
    ///
    /// The rows the slot already holds are compared from the top; from the first that
    /// differs (or is new) down, every row is written, and above it only the columns the
    /// matrix has gained (under the causal mask, grey).
    pub(super) fn write(
        &mut self,
        i: usize,
        t: usize,
        values: &[f32],
        masked: &[f32],
        scale: Scale,
    ) -> Option<Vec<Rect>> {
        let side = self.side;
        if i >= self.slots.len() || t > side || values.len() < t * t || masked.len() < t * t {
            return None;
        }
        let slot = self.slots[i];
        let base = i * side * side;
        // the columns and rows the slot holds as they are: none after a new scale
        let kept = if slot.scale == Some(scale) {
            slot.t.min(t)
        } else {
            0
        };
        let first = (0..kept)
            .find(|&r| {
                let at = base + r * side;
                !same(&values[r * t..][..kept], &self.values[at..][..kept])
                    || !same_mask(&masked[r * t..][..kept], &self.masked[at..][..kept])
            })
            .unwrap_or(kept);
        self.slots[i] = Slot {
            t,
            scale: Some(scale),
        };
        let mut rects = Vec::new();
        if first > 0 && t > kept {
            rects.push((kept, 0, t - kept, first));
        }
        if first < t {
            rects.push((0, first, t, t - first));
        }
        let (x0, y0) = self.at(i);
        let width = self.width();
        for &(x, y, w, h) in &rects {
            for r in y..y + h {
                let from = r * t + x;
                let (row, mask) = (&values[from..][..w], &masked[from..][..w]);
                let at = base + r * side + x;
                for (kept, new) in self.values[at..][..w].iter_mut().zip(row) {
                    *kept = new.to_bits();
                }
                for (kept, &new) in self.masked[at..][..w].iter_mut().zip(mask) {
                    *kept = new == MASKED;
                }
                let out = &mut self.px[((y0 + r) * width + x0 + x) * 4..][..w * 4];
                for ((&v, &m), px) in row.iter().zip(mask).zip(out.chunks_exact_mut(4)) {
                    let c = if m == MASKED { MASK_RGB } else { scale.rgb(v) };
                    px[..3].copy_from_slice(&c);
                }
            }
        }
        Some(rects)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use attnlab_model::colors::viridis;

    /// Causal weights for `t` tokens, row `i` spread over its `i + 1` keys by a seed.
    fn causal(t: usize, seed: u32) -> (Vec<f32>, Vec<f32>) {
        let mut w = vec![0.0; t * t];
        let mut m = vec![0.0; t * t];
        for i in 0..t {
            let mut sum = 0.0;
            for j in 0..=i {
                let x = ((i * 31 + j * 17 + seed as usize * 7) % 13 + 1) as f32;
                w[i * t + j] = x;
                sum += x;
            }
            for j in 0..t {
                if j <= i {
                    w[i * t + j] /= sum;
                } else {
                    m[i * t + j] = MASKED;
                }
            }
        }
        (w, m)
    }

    const ONE: Scale = Scale::Weights { max: 1.0 };

    /// Slot `i`'s top-left `t` × `t` pixels, as RGB.
    fn slot_rgb(img: &CellImage, i: usize, t: usize) -> Vec<[u8; 3]> {
        let (x0, y0) = img.at(i);
        let mut out = Vec::new();
        for r in 0..t {
            for c in 0..t {
                let p = &img.pixels()[((y0 + r) * img.width() + x0 + c) * 4..][..3];
                out.push([p[0], p[1], p[2]]);
            }
        }
        out
    }

    #[test]
    fn slots_keep_their_side_while_it_fits_and_is_not_far_too_big() {
        assert_eq!(slot_side(0, 120), 128);
        // typing on: 120 → 128 tokens keep the side, 129 grows it
        assert_eq!(slot_side(128, 121), 128);
        assert_eq!(slot_side(128, 128), 128);
        assert_eq!(slot_side(128, 129), 192);
        // deleting: kept while at most twice what is needed, then shrunk
        assert_eq!(slot_side(192, 70), 192);
        assert_eq!(slot_side(192, 64), 64);
        assert_eq!(slot_side(0, 0), 64);
    }

    #[test]
    fn a_token_typed_at_the_end_writes_only_the_new_row_and_column_of_each_slot() {
        let mut img = CellImage::new();
        assert!(img.layout(16, 119));
        let (w, m) = causal(119, 0);
        for i in 0..16 {
            assert_eq!(img.write(i, 119, &w, &m, ONE), Some(vec![(0, 0, 119, 119)]));
        }
        // the same text again: nothing to write
        assert!(!img.layout(16, 119));
        assert_eq!(img.write(3, 119, &w, &m, ONE), Some(vec![]));
        // one token more: the earlier rows are the same, their new column masked
        let (w2, m2) = causal(120, 0);
        assert_eq!(
            w2[118 * 120..][..119],
            w[118 * 119..][..119],
            "the rows agree"
        );
        assert!(!img.layout(16, 120));
        assert_eq!(
            img.write(3, 120, &w2, &m2, ONE),
            Some(vec![(119, 0, 1, 119), (0, 119, 120, 1)])
        );
        // one cell in the middle changed (the text edited there): from its row down
        let mut w3 = w2.clone();
        w3[60 * 120] += 0.25;
        assert_eq!(
            img.write(3, 120, &w3, &m2, ONE),
            Some(vec![(0, 60, 120, 60)])
        );
        // so did a mask alone
        let mut m3 = m2.clone();
        m3[100 * 120 + 119] = 0.0;
        assert_eq!(
            img.write(3, 120, &w3, &m3, ONE),
            Some(vec![(0, 100, 120, 20)])
        );
        // back, then a token fewer: nothing above the new last row changes
        assert_eq!(
            img.write(3, 120, &w2, &m2, ONE),
            Some(vec![(0, 60, 120, 60)])
        );
        let (w4, m4) = causal(119, 0);
        assert_eq!(img.write(3, 119, &w4, &m4, ONE), Some(vec![]));
        // a new scale recolours the slot whole
        let half = Scale::Weights { max: 0.5 };
        assert_eq!(
            img.write(3, 119, &w4, &m4, half),
            Some(vec![(0, 0, 119, 119)])
        );
        // a matrix larger than the slot, short arrays or a slot that is not there: refused
        assert_eq!(img.write(3, 129, &w3, &m2, ONE), None);
        assert_eq!(img.write(3, 120, &w3[1..], &m2, ONE), None);
        assert_eq!(img.write(16, 120, &w3, &m2, ONE), None);
    }

    #[test]
    fn after_any_sequence_of_writes_the_pixels_are_those_of_a_fresh_image() {
        // grow, shrink, regrow across a slot boundary, change a seed (every row), halve the
        // scale, unmask a cell: compare each step with an image written once from nothing
        let steps = [
            (5, 0, 1.0),
            (6, 0, 1.0),
            (7, 0, 1.0),
            (7, 1, 1.0),
            (7, 1, 0.5),
            (3, 1, 0.5),
            (64, 1, 1.0),
            (65, 1, 1.0),
            (60, 2, 1.0),
            (61, 2, 1.0),
        ];
        let mut img = CellImage::new();
        for (k, &(t, seed, max)) in steps.iter().enumerate() {
            let (w, mut m) = causal(t, seed);
            if k == 5 {
                m[1] = 0.0; // (0, 1) shown, with its weight 0
            }
            let scale = Scale::Weights { max };
            img.layout(4, t);
            let mut fresh = CellImage::new();
            fresh.layout(4, t);
            for i in 0..4 {
                assert!(img.write(i, t, &w, &m, scale).is_some());
                fresh.write(i, t, &w, &m, scale);
                assert_eq!(
                    slot_rgb(&img, i, t),
                    slot_rgb(&fresh, i, t),
                    "step {k}, slot {i}"
                );
            }
        }
        let (w, m) = causal(3, 0);
        let mut img = CellImage::new();
        img.layout(1, 3);
        img.write(0, 3, &w, &m, ONE);
        let rgb = slot_rgb(&img, 0, 3);
        assert_eq!(rgb[0], viridis(1.0));
        assert_eq!(rgb[1], MASK_RGB);
        assert_eq!(rgb[3], viridis(w[3]));
        // slot 1 of two sits one side to the right of slot 0
        let mut two = CellImage::new();
        two.layout(2, 3);
        two.write(1, 3, &w, &m, ONE);
        assert_eq!(two.at(1), (64, 0));
        assert_eq!(slot_rgb(&two, 1, 3), rgb);
        assert_eq!(two.pixels()[64 * 4..][..3], viridis(1.0));
    }
}
