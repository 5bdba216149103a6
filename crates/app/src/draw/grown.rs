//! A matrix canvas that grows with the text: when the new matrix starts with the rows the
//! canvas shows (as typing at the end does: under the causal mask an earlier query's row of
//! QKᵀ, the scaled and masked scores and the weights stay as they were), only its new columns
//! and rows are coloured; the rows kept are copied from the canvas itself. Otherwise it is
//! painted whole, as `put_matrix` does.

use std::rc::Rc;

use wasm_bindgen::{Clamped, JsCast};
use web_sys::{HtmlCanvasElement, ImageData};

use super::canvas::{context, put_matrix, write_matrix};
use super::colour::Scale;

/// What a canvas last showed: the canvas (a view drawn anew may have another), the values
/// (the caller's array, shared, not copied), its shape and its scale.
pub struct Shown {
    canvas: HtmlCanvasElement,
    values: Rc<Vec<f32>>,
    rows: usize,
    cols: usize,
    scale: Scale,
}

/// How many rows from the top of the new matrix hold, in their first `cols` columns, what the
/// old one holds there (bit for bit). Each is (values, rows, columns).
fn rows_same(old: (&[f32], usize, usize), new: (&[f32], usize, usize), cols: usize) -> usize {
    let ((a, a_rows, a_cols), (b, b_rows, b_cols)) = (old, new);
    let same = |x: &[f32], y: &[f32]| {
        x.iter()
            .zip(y)
            .fold(0, |d, (p, q)| d | (p.to_bits() ^ q.to_bits()))
            == 0
    };
    (0..a_rows.min(b_rows))
        .find(|&r| !same(&a[r * a_cols..][..cols], &b[r * b_cols..][..cols]))
        .unwrap_or(a_rows.min(b_rows))
}

/// The top-left block (rows, columns) of the new matrix that holds what the old one holds
/// there (bit for bit): the cells the canvas need not colour again. Of the blocks as wide as
/// the narrower matrix and one column narrower than that (the last token's column changed),
/// the larger: the narrower block's rows are found in one pass, the wider one's among them
/// from its last column alone.
pub fn kept_block(old: (&[f32], usize, usize), new: (&[f32], usize, usize)) -> (usize, usize) {
    let ((a, a_rows, a_cols), (b, b_rows, b_cols)) = (old, new);
    let cols = a_cols.min(b_cols);
    if cols == 0 || a.len() < a_rows * a_cols || b.len() < b_rows * b_cols {
        return (0, 0);
    }
    let narrower = rows_same(old, new, cols - 1);
    let last = cols - 1;
    let rows = (0..narrower)
        .find(|&r| a[r * a_cols + last].to_bits() != b[r * b_cols + last].to_bits())
        .unwrap_or(narrower);
    if narrower * (cols - 1) > rows * cols {
        (narrower, cols - 1)
    } else {
        (rows, cols)
    }
}

/// The rectangles (x, y, width, height) of a `rows` × `cols` matrix to colour when its top
/// `kept` rows hold, in their first `kept_cols` columns, what the canvas shows.
pub fn to_colour(
    (kept, kept_cols): (usize, usize),
    rows: usize,
    cols: usize,
) -> Vec<(usize, usize, usize, usize)> {
    let mut rects = Vec::new();
    if kept > 0 && cols > kept_cols {
        rects.push((kept_cols, 0, cols - kept_cols, kept));
    }
    if kept < rows {
        rects.push((0, kept, cols, rows - kept));
    }
    rects
}

thread_local! {
    /// A canvas the kept rows wait on while the shown one is resized (which clears it).
    static SCRATCH: Option<HtmlCanvasElement> = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.create_element("canvas").ok())
        .and_then(|e| e.dyn_into().ok());
}

/// Paints `values` (`rows` × `cols`, one pixel per cell, coloured by `scale`) on `canvas`,
/// which shows `last` (updated to this matrix). Returns how many cells it coloured.
pub fn paint(
    canvas: &HtmlCanvasElement,
    last: &mut Option<Shown>,
    values: &Rc<Vec<f32>>,
    (rows, cols): (usize, usize),
    scale: Scale,
) -> usize {
    if rows == 0 || cols == 0 || values.len() < rows * cols {
        *last = None;
        return 0;
    }
    let sized = canvas.width() as usize == cols && canvas.height() as usize == rows;
    let kept = match last.as_ref().filter(|s| s.canvas == *canvas) {
        Some(s)
            if Rc::ptr_eq(&s.values, values)
                && (s.rows, s.cols, s.scale) == (rows, cols, scale)
                && sized =>
        {
            return 0
        }
        Some(s)
            if s.scale == scale
                && canvas.width() as usize == s.cols
                && canvas.height() as usize == s.rows =>
        {
            kept_block((&s.values, s.rows, s.cols), (values, rows, cols))
        }
        _ => (0, 0),
    };
    let rects = to_colour(kept, rows, cols);
    // the kept block waits on a scratch canvas while this one is resized
    let painted = kept.0 > 0
        && keep_top(canvas, (kept.1, kept.0), (cols, rows)).is_some()
        && rects
            .iter()
            .all(|&rect| put_rect(canvas, values, cols, rect, scale).is_some());
    let cells = if painted {
        rects.iter().map(|&(_, _, w, h)| w * h).sum()
    } else {
        put_matrix(canvas, rows, cols, values, scale, |_, _| false);
        rows * cols
    };
    *last = Some(Shown {
        canvas: canvas.clone(),
        values: values.clone(),
        rows,
        cols,
        scale,
    });
    cells
}

/// Resizes `canvas` to `size` (width, height) keeping its top-left `kept` (width, height)
/// pixels, which a resize would clear.
fn keep_top(canvas: &HtmlCanvasElement, kept: (usize, usize), size: (usize, usize)) -> Option<()> {
    if (canvas.width() as usize, canvas.height() as usize) == size {
        return Some(());
    }
    let (w, h) = (kept.0 as f64, kept.1 as f64);
    SCRATCH.with(|scratch| {
        let scratch = scratch.as_ref()?;
        scratch.set_width(kept.0 as u32);
        scratch.set_height(kept.1 as u32);
        let sctx = context(scratch)?;
        sctx.draw_image_with_html_canvas_element_and_sw_and_sh_and_dx_and_dy_and_dw_and_dh(
            canvas, 0.0, 0.0, w, h, 0.0, 0.0, w, h,
        )
        .ok()?;
        canvas.set_width(size.0 as u32);
        canvas.set_height(size.1 as u32);
        context(canvas)?
            .draw_image_with_html_canvas_element(scratch, 0.0, 0.0)
            .ok()?;
        // (the scratch canvas gives its memory back)
        scratch.set_width(0);
        scratch.set_height(0);
        Some(())
    })
}

/// Colours the rectangle (x, y, width, height) of a matrix `cols` wide onto `canvas`.
fn put_rect(
    canvas: &HtmlCanvasElement,
    values: &[f32],
    cols: usize,
    (x, y, w, h): (usize, usize, usize, usize),
    scale: Scale,
) -> Option<()> {
    let mut px = vec![255u8; w * h * 4];
    for (r, out) in px.chunks_exact_mut(w * 4).enumerate() {
        write_matrix(out, w, &values[(y + r) * cols + x..][..w], scale, |_, _| {
            false
        });
    }
    let img = ImageData::new_with_u8_clamped_array_and_sh(Clamped(&px), w as u32, h as u32).ok()?;
    context(canvas)?
        .put_image_data(&img, x as f64, y as f64)
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_block_kept_is_what_both_hold_bit_for_bit() {
        // 2 × 2, then 3 × 3 with the old top-left kept and row 1 changed in an old column
        let old = [1.0, 2.0, 3.0, 4.0];
        let grown = [1.0, 2.0, 9.0, 3.0, 4.0, 9.0, 5.0, 6.0, 7.0];
        assert_eq!(kept_block((&old, 2, 2), (&grown, 3, 3)), (2, 2));
        let changed = [1.0, 2.0, 9.0, 3.0, 4.5, 9.0, 5.0, 6.0, 7.0];
        assert_eq!(kept_block((&old, 2, 2), (&changed, 3, 3)), (1, 2));
        // bit for bit: −0 is not 0 (and one column narrower keeps nothing more)
        let signed = [-0.0, 2.0, 9.0, 3.0, 4.0, 9.0, 5.0, 6.0, 7.0];
        let zero = [0.0, 2.0, 3.0, 4.0];
        assert_eq!(kept_block((&zero, 2, 2), (&signed, 3, 3)), (0, 2));
        // a shorter text: the top-left of what it has
        assert_eq!(kept_block((&grown, 3, 3), (&old, 2, 2)), (2, 2));
        assert_eq!(kept_block((&old, 2, 2), (&[1.0, 2.0], 1, 2)), (1, 2));
        // the last token changed: its row, and its column in every row (QKᵀ is not masked)
        let last = [1.0, 2.0, 8.0, 3.0, 4.0, 8.0, 5.5, 6.0, 8.0];
        assert_eq!(kept_block((&grown, 3, 3), (&last, 3, 3)), (2, 2));
        // short arrays keep nothing
        assert_eq!(kept_block((&old[..3], 2, 2), (&grown, 3, 3)), (0, 0));
    }

    #[test]
    fn what_is_coloured_is_the_new_columns_above_and_every_row_below() {
        // 2 rows kept of 2 columns, now 3 × 3: the third column of rows 0–1, then row 2
        assert_eq!(to_colour((2, 2), 3, 3), vec![(2, 0, 1, 2), (0, 2, 3, 1)]);
        // nothing kept: the whole matrix
        assert_eq!(to_colour((0, 2), 3, 3), vec![(0, 0, 3, 3)]);
        // the same shape, every row kept: nothing
        assert!(to_colour((3, 3), 3, 3).is_empty());
        // every cell is coloured once: kept ones never, the rest exactly once
        let (kept, old_cols, rows, cols) = (4, 5, 9, 7);
        let mut hits = vec![0; rows * cols];
        for (x, y, w, h) in to_colour((kept, old_cols), rows, cols) {
            for r in y..y + h {
                for c in x..x + w {
                    hits[r * cols + c] += 1;
                }
            }
        }
        for r in 0..rows {
            for c in 0..cols {
                let want = usize::from(!(r < kept && c < old_cols));
                assert_eq!(hits[r * cols + c], want, "({r}, {c})");
            }
        }
    }
}
