//! Canvases: their 2D context, the screen's pixel density, and a matrix painted one pixel
//! per cell (CSS scales it up pixelated, so it stays crisp at any device pixel ratio).

use wasm_bindgen::{Clamped, JsCast};
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement, ImageData};

use super::colour::{Scale, MASK_RGB};

thread_local! {
    /// The 2D context options, made once (`willReadFrequently`: a canvas in memory, not on
    /// the GPU — the canvases here are drawn per result mostly by putImageData, which a GPU
    /// canvas has to upload each time).
    static CONTEXT_OPTIONS: js_sys::Object =
        crate::dom::object(&[("willReadFrequently", true.into())]);
}

pub fn context(canvas: &HtmlCanvasElement) -> Option<CanvasRenderingContext2d> {
    CONTEXT_OPTIONS
        .with(|opts| canvas.get_context_with_context_options("2d", opts))
        .ok()??
        .dyn_into()
        .ok()
}

pub fn device_pixel_ratio() -> f64 {
    web_sys::window()
        .map(|w| w.device_pixel_ratio())
        .unwrap_or(1.0)
        .clamp(1.0, 4.0)
}

/// Paints a (rows, cols) matrix one pixel per cell; CSS scales it up pixelated.
/// `masked(i, j)` cells get the mask colour whatever their value.
pub fn put_matrix(
    canvas: &HtmlCanvasElement,
    rows: usize,
    cols: usize,
    values: &[f32],
    scale: Scale,
    masked: impl Fn(usize, usize) -> bool,
) {
    if rows == 0 || cols == 0 || values.len() < rows * cols {
        return;
    }
    // resizing a canvas reallocates and clears it even to the same size; every pixel is
    // overwritten below anyway
    if canvas.width() != cols as u32 || canvas.height() != rows as u32 {
        canvas.set_width(cols as u32);
        canvas.set_height(rows as u32);
    }
    let mut px = vec![255u8; rows * cols * 4];
    write_matrix(&mut px, cols, values, scale, masked);
    if let (Some(ctx), Ok(img)) = (
        context(canvas),
        ImageData::new_with_u8_clamped_array_and_sh(Clamped(&px), cols as u32, rows as u32),
    ) {
        let _ = ctx.put_image_data(&img, 0.0, 0.0);
    }
}

/// Writes the colours of a matrix `cols` cells wide into `px`, an RGBA image of the same
/// width, as many rows as both hold.
pub(super) fn write_matrix(
    px: &mut [u8],
    cols: usize,
    values: &[f32],
    scale: Scale,
    masked: impl Fn(usize, usize) -> bool,
) {
    if cols == 0 {
        return;
    }
    // row by row over slices, so that the loop over a row's cells checks no bounds
    for (i, (row, out)) in values
        .chunks_exact(cols)
        .zip(px.chunks_exact_mut(cols * 4))
        .enumerate()
    {
        for (j, (&v, cell)) in row.iter().zip(out.chunks_exact_mut(4)).enumerate() {
            let c = if masked(i, j) { MASK_RGB } else { scale.rgb(v) };
            cell[..3].copy_from_slice(&c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use attnlab_model::colors::viridis;

    #[test]
    fn a_matrix_is_written_row_by_row_with_its_mask() {
        // a 2 × 2 matrix into a 2 × 2 image: (1, 1) masked by the closure whatever its
        // value, the alpha left as it was
        let mut px = vec![7u8; 2 * 2 * 4];
        let values = [0.0, 1.0, 0.5, 0.25];
        let scale = Scale::Weights { max: 1.0 };
        write_matrix(&mut px, 2, &values, scale, |i, j| (i, j) == (1, 1));
        let at = |x: usize, y: usize| <[u8; 4]>::try_from(&px[(y * 2 + x) * 4..][..4]).unwrap();
        let rgb = |c: [u8; 3]| [c[0], c[1], c[2], 7];
        assert_eq!(at(0, 0), rgb(viridis(0.0)));
        assert_eq!(at(1, 0), rgb(viridis(1.0)));
        assert_eq!(at(0, 1), rgb(viridis(0.5)));
        assert_eq!(at(1, 1), rgb(MASK_RGB));
        // no columns: nothing written, no panic
        write_matrix(&mut px, 0, &values, scale, |_, _| false);
    }
}
