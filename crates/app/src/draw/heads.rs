//! The all-heads grid: every head's weights on one canvas.

use web_sys::HtmlCanvasElement;

use super::canvas::{context, device_pixel_ratio};
use super::colour::Scale;
use super::kept::{draw_kept, Kept};

/// One tile of the all-heads canvas: where (CSS px, relative to the canvas) and how opaque.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tile {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
    pub alpha: f64,
}

/// Draws every head's weights on one canvas of `width`×`height` CSS px, head `i` (`layer *
/// n_head + head`) into `tiles[i]`: one canvas for the whole grid, not one per head (each
/// canvas costs the compositor a resource per frame — with 144 heads, ≈ 50 ms). `weights(i)`
/// gives head `i`'s (t, t) weights and mask.
pub fn heads_canvas<'a>(
    canvas: &HtmlCanvasElement,
    (width, height): (f64, f64),
    t: usize,
    tiles: &[Tile],
    weights: impl Fn(usize) -> (&'a [f32], &'a [f32]),
) {
    crate::dom::count_draw("heads-grid");
    let Some(ctx) = context(canvas) else {
        return;
    };
    let dpr = device_pixel_ratio();
    let (w, h) = ((width * dpr).round() as u32, (height * dpr).round() as u32);
    if canvas.width() != w || canvas.height() != h {
        canvas.set_width(w);
        canvas.set_height(h);
    }
    let _ = ctx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0);
    ctx.clear_rect(0.0, 0.0, width, height);
    let n = tiles.len();
    if t == 0 || n == 0 {
        return;
    }
    // every head one pixel per cell in one kept image, of which only the rows that changed
    // are written; then each head scaled up crisp into its tile
    let Some(drawn) = draw_kept(Kept::Heads, n, t, |i| {
        let (values, masked) = weights(i);
        let max = values.iter().copied().fold(0.0f32, f32::max);
        (values, masked, Scale::Weights { max })
    }) else {
        return;
    };
    ctx.set_image_smoothing_enabled(false);
    for (tile, at) in tiles.iter().zip(&drawn.at) {
        let Some((sx, sy)) = *at else { continue };
        ctx.set_global_alpha(tile.alpha);
        let _ = ctx.draw_image_with_html_canvas_element_and_sw_and_sh_and_dx_and_dy_and_dw_and_dh(
            &drawn.canvas,
            sx,
            sy,
            t as f64,
            t as f64,
            tile.x,
            tile.y,
            tile.w,
            tile.h,
        );
    }
    ctx.set_global_alpha(1.0);
}
