//! The off-screen images the heatmap and the heads grid keep between results: one pixel per
//! cell, of which only the rows that changed are written again.

use wasm_bindgen::{Clamped, JsCast};
use web_sys::{HtmlCanvasElement, ImageData};

use super::canvas::context;
use super::cell_image::CellImage;
use super::colour::Scale;

/// The off-screen images the drawings keep: one for the large heatmap's cells, one for the
/// all-heads grid (kept apart so that neither lays the other out anew every keystroke). The
/// page has one of each, held in this module's `KEPT` and reached by `draw_kept`.
#[derive(Clone, Copy)]
pub enum Kept {
    Heatmap = 0,
    Heads = 1,
}

impl Kept {
    /// The test hooks' counter of the cells this image has written (`window.__attnlab.draws`).
    fn cells_counter(self) -> &'static str {
        match self {
            Kept::Heatmap => "head-map cells",
            Kept::Heads => "heads-grid cells",
        }
    }
}

/// An off-screen canvas and the image it holds (with the matrices it was written from).
struct KeptImage {
    canvas: HtmlCanvasElement,
    image: CellImage,
}

thread_local! {
    /// The kept images, by [`Kept`].
    static KEPT: std::cell::RefCell<[Option<KeptImage>; 2]> =
        const { std::cell::RefCell::new([None, None]) };
}

/// A kept image once drawn: its canvas, and where slot `i` is (`None`: it does not hold its
/// matrix, whose arrays were short).
pub struct Drawn {
    pub canvas: HtmlCanvasElement,
    pub at: Vec<Option<(f64, f64)>>,
}

/// Brings the kept image `which` up to date with `n` matrices of `t` × `t` cells (`matrix(i)`:
/// the values, the mask and the scale) and puts on its canvas only the rows that changed.
pub fn draw_kept<'a>(
    which: Kept,
    n: usize,
    t: usize,
    matrix: impl Fn(usize) -> (&'a [f32], &'a [f32], Scale),
) -> Option<Drawn> {
    KEPT.with(|kept| {
        let mut kept = kept.borrow_mut();
        let slot = &mut kept[which as usize];
        if slot.is_none() {
            let canvas = web_sys::window()
                .and_then(|w| w.document())
                .and_then(|d| d.create_element("canvas").ok())
                .and_then(|e| e.dyn_into::<HtmlCanvasElement>().ok())?;
            *slot = Some(KeptImage {
                canvas,
                image: CellImage::new(),
            });
        }
        let KeptImage { canvas, image } = slot.as_mut()?;
        let ctx = context(canvas)?;
        if image.layout(n, t) {
            // resizing clears the canvas; every slot is written whole below
            canvas.set_width(image.width() as u32);
            canvas.set_height(image.height() as u32);
        }
        let mut changed = Vec::new();
        let at = (0..n)
            .map(|i| {
                let (values, masked, scale) = matrix(i);
                let rects = image.write(i, t, values, masked, scale)?;
                let (x, y) = image.at(i);
                changed.extend(
                    rects
                        .into_iter()
                        .map(|(rx, ry, w, h)| (x + rx, y + ry, w, h)),
                );
                Some((x as f64, y as f64))
            })
            .collect();
        // for tests: how many cells each drawing wrote
        let cells = changed.iter().map(|&(_, _, w, h)| w * h).sum::<usize>();
        crate::dom::count(which.cells_counter(), cells as f64);
        // one ImageData over the whole image (a view of its pixels, not a copy), put rectangle
        // by rectangle
        let put = changed.is_empty()
            || ImageData::new_with_u8_clamped_array_and_sh(
                Clamped(image.pixels()),
                image.width() as u32,
                image.height() as u32,
            )
            .is_ok_and(|img| {
                changed.iter().all(|&(x, y, w, h)| {
                    ctx.put_image_data_with_dirty_x_and_dirty_y_and_dirty_width_and_dirty_height(
                        &img, 0.0, 0.0, x as f64, y as f64, w as f64, h as f64,
                    )
                    .is_ok()
                })
            });
        if !put {
            // the canvas does not hold what the image says it does: start over next time
            *slot = None;
            return None;
        }
        Some(Drawn {
            canvas: canvas.clone(),
            at,
        })
    })
}
