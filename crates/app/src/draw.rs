//! Canvas drawing: matrices as images (one pixel per cell, scaled up without smoothing so they
//! stay crisp at any device pixel ratio) and the large labelled heatmap.

use attnlab_model::colors::{diverging, viridis};
use attnlab_model::cpu::MASKED;
use wasm_bindgen::{Clamped, JsCast};
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement, ImageData};

/// The colour of a masked (future) cell: a light grey no viridis colour comes near.
pub const MASK_RGB: [u8; 3] = [214, 214, 214];

/// How a matrix is coloured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scale {
    /// Sequential viridis over [0, max].
    Weights { max: f32 },
    /// Diverging PuOr over [−r, r].
    Signed { r: f32 },
}

impl Scale {
    /// A diverging scale spanning the largest finite |value| (masked cells ignored).
    pub fn signed_for(values: &[f32]) -> Scale {
        let r = values
            .iter()
            .filter(|v| v.is_finite() && **v != MASKED)
            .fold(0.0f32, |m, v| m.max(v.abs()));
        Scale::Signed {
            r: if r > 0.0 { r } else { 1.0 },
        }
    }

    pub fn rgb(self, v: f32) -> [u8; 3] {
        if v == MASKED {
            return MASK_RGB;
        }
        match self {
            Scale::Weights { max } => viridis(v / if max > 0.0 { max } else { 1.0 }),
            Scale::Signed { r } => diverging(v / r),
        }
    }
}

/// WCAG relative luminance of an sRGB colour.
fn luminance(c: [u8; 3]) -> f64 {
    let lin = |v: u8| {
        let v = v as f64 / 255.0;
        if v <= 0.03928 {
            v / 12.92
        } else {
            ((v + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * lin(c[0]) + 0.7152 * lin(c[1]) + 0.0722 * lin(c[2])
}

/// WCAG contrast ratio of two colours (1 … 21).
pub fn contrast(a: [u8; 3], b: [u8; 3]) -> f64 {
    let (x, y) = (luminance(a), luminance(b));
    (x.max(y) + 0.05) / (x.min(y) + 0.05)
}

/// Black or white, whichever reads better on `bg` (always ≥ 4.5:1, WCAG AA).
pub fn ink(bg: [u8; 3]) -> &'static str {
    if contrast(bg, [0, 0, 0]) >= contrast(bg, [255, 255, 255]) {
        "#000000"
    } else {
        "#ffffff"
    }
}

/// The labels' colour on the light theme's cards, and on the dark theme's.
pub const INK_LIGHT: &str = "#1d1d1f";
pub const INK_DARK: &str = "#e8e6e1";

mod cell_image;

use cell_image::CellImage;

/// The off-screen images the drawings keep: one for the large heatmap's cells, one for the
/// all-heads grid (kept apart so that neither lays the other out anew every keystroke).
#[derive(Clone, Copy)]
enum Kept {
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
    static KEPT: std::cell::RefCell<[Option<KeptImage>; 2]> =
        const { std::cell::RefCell::new([None, None]) };
    /// The 2D context options, made once (`willReadFrequently`: a canvas in memory, not on
    /// the GPU — the canvases here are drawn per result mostly by putImageData, which a GPU
    /// canvas has to upload each time).
    static CONTEXT_OPTIONS: js_sys::Object =
        crate::dom::object(&[("willReadFrequently", true.into())]);
}

/// A kept image once drawn: its canvas, and where slot `i` is (`None`: it does not hold its
/// matrix, whose arrays were short).
struct Drawn {
    canvas: HtmlCanvasElement,
    at: Vec<Option<(f64, f64)>>,
}

/// Brings the kept image `which` up to date with `n` matrices of `t` × `t` cells (`matrix(i)`:
/// the values, the mask and the scale) and puts on its canvas only the rows that changed.
fn draw_kept<'a>(
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
fn write_matrix(
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

/// Geometry of the large heatmap in CSS pixels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Layout {
    pub margin: f64,
    pub cell: f64,
    pub n: usize,
}

impl Layout {
    /// Fits `n`×`n` cells into a square of `width` CSS px, leaving a label margin when the
    /// cells are big enough to carry labels.
    pub fn new(width: f64, n: usize) -> Layout {
        let n = n.max(1);
        let with_labels = (width - 84.0) / n as f64;
        let margin = if with_labels >= 9.0 { 84.0 } else { 4.0 };
        Layout {
            margin,
            cell: ((width - margin) / n as f64).max(1.0),
            n,
        }
    }

    pub fn labels(&self) -> bool {
        self.margin > 8.0
    }

    /// The cell (row, col) under a point, if any.
    pub fn hit(&self, x: f64, y: f64) -> Option<(usize, usize)> {
        let (c, r) = ((x - self.margin) / self.cell, (y - self.margin) / self.cell);
        (c >= 0.0 && r >= 0.0 && (c as usize) < self.n && (r as usize) < self.n)
            .then_some((r as usize, c as usize))
    }

    pub fn size(&self) -> f64 {
        self.margin + self.cell * self.n as f64
    }

    /// The query row whose label (in the left margin) is under a point, if any.
    pub fn row_label(&self, x: f64, y: f64) -> Option<usize> {
        let r = (y - self.margin) / self.cell;
        (self.labels() && (0.0..self.margin).contains(&x) && r >= 0.0 && (r as usize) < self.n)
            .then_some(r as usize)
    }
}

/// Sizes `canvas` for `layout` at the screen's pixel density and returns its context, cleared.
fn sized(canvas: &HtmlCanvasElement, layout: Layout) -> Option<CanvasRenderingContext2d> {
    let ctx = context(canvas)?;
    let dpr = device_pixel_ratio();
    let size = layout.size();
    let (w, h) = ((size * dpr).round() as u32, (size * dpr).round() as u32);
    if canvas.width() != w || canvas.height() != h {
        canvas.set_width(w);
        canvas.set_height(h);
        let style = canvas.style();
        let _ = style.set_property("width", &format!("{size}px"));
        let _ = style.set_property("height", &format!("{size}px"));
    }
    let _ = ctx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0);
    ctx.clear_rect(0.0, 0.0, size, size);
    Some(ctx)
}

/// The runs of masked cells in one row of a mask, as half-open column ranges, in order
/// (an iterator: the heatmap walks them for every row on every draw).
fn masked_runs(row: &[f32]) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut from = 0;
    std::iter::from_fn(move || {
        let j0 = from + row[from..].iter().position(|&v| v == MASKED)?;
        let j1 = j0
            + row[j0..]
                .iter()
                .position(|&v| v != MASKED)
                .unwrap_or(row.len() - j0);
        from = j1;
        Some((j0, j1))
    })
}

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

/// Draws the large heatmap of one head's weights: cells, the masked triangle hatched and
/// token labels on both axes (when they fit). The focused cell is outlined on a canvas of its
/// own laid over this one (`highlight`), so moving the focus never redraws the heatmap.
pub fn heatmap(
    canvas: &HtmlCanvasElement,
    layout: Layout,
    weights: &[f32],
    masked: &[f32],
    labels: &[String],
    ink: &str,
) {
    crate::dom::count_draw("head-map");
    let Some(ctx) = sized(canvas, layout) else {
        return;
    };
    let (n, m, c) = (layout.n, layout.margin, layout.cell);
    if weights.len() < n * n || masked.len() < n * n {
        return;
    }
    let max = weights.iter().copied().fold(0.0f32, f32::max);
    let scale = Scale::Weights {
        max: max.max(1e-12),
    };
    // the cells: one pixel each on a kept image, scaled up without smoothing
    if let Some(drawn) = draw_kept(Kept::Heatmap, 1, n, |_| (weights, masked, scale)) {
        if let Some((sx, sy)) = drawn.at[0] {
            ctx.set_image_smoothing_enabled(false);
            let (k, side) = (n as f64, c * n as f64);
            let _ = ctx
                .draw_image_with_html_canvas_element_and_sw_and_sh_and_dx_and_dy_and_dw_and_dh(
                    &drawn.canvas,
                    sx,
                    sy,
                    k,
                    k,
                    m,
                    m,
                    side,
                    side,
                );
        }
    }
    // hatch the masked cells: diagonal strokes clipped to them, one rectangle per run of
    // masked cells in a row (under the causal mask one per row, not n²/2 cells: the clip is
    // built and rasterised per keystroke)
    ctx.save();
    ctx.begin_path();
    let mut any = false;
    for i in 0..n {
        for (j0, j1) in masked_runs(&masked[i * n..(i + 1) * n]) {
            ctx.rect(m + j0 as f64 * c, m + i as f64 * c, (j1 - j0) as f64 * c, c);
            any = true;
        }
    }
    if any {
        ctx.clip();
        ctx.set_stroke_style_str("rgba(90, 90, 90, 0.55)");
        ctx.set_line_width(1.0);
        ctx.begin_path();
        let span = c * n as f64;
        let step = 6.0;
        let mut d = -span;
        while d < span {
            ctx.move_to(m + d, m + span);
            ctx.line_to(m + d + span, m);
            d += step;
        }
        ctx.stroke();
    }
    ctx.restore();
    if layout.labels() {
        ctx.set_fill_style_str(ink);
        let px = (c * 0.8).clamp(9.0, 14.0);
        ctx.set_font(&format!(
            "{px}px 'Noto Sans CJK KR', 'Noto Sans KR', sans-serif"
        ));
        ctx.set_text_baseline("middle");
        ctx.set_text_align("right");
        for (i, label) in labels.iter().enumerate().take(n) {
            let text = fit(&ctx, label, m - 6.0);
            let _ = ctx.fill_text(&text, m - 4.0, m + (i as f64 + 0.5) * c);
        }
        for (j, label) in labels.iter().enumerate().take(n) {
            ctx.save();
            let _ = ctx.translate(m + (j as f64 + 0.5) * c, m - 4.0);
            let _ = ctx.rotate(-std::f64::consts::FRAC_PI_4);
            ctx.set_text_align("left");
            let text = fit(&ctx, label, m * 1.3);
            let _ = ctx.fill_text(&text, 0.0, 0.0);
            ctx.restore();
        }
    }
}

/// Outlines the focused cell of the large heatmap on its overlay canvas (cleared when there
/// is none).
pub fn highlight(
    overlay: &HtmlCanvasElement,
    layout: Layout,
    focus: Option<(usize, usize)>,
    pinned: Option<usize>,
) {
    crate::dom::count_draw("highlight");
    let Some(ctx) = sized(overlay, layout) else {
        return;
    };
    let (n, m, c) = (layout.n, layout.margin, layout.cell);
    if let Some(i) = pinned.filter(|&i| i < n) {
        // the pinned row: a band across it and a mark in its label
        ctx.set_fill_style_str("rgba(59, 82, 139, 0.18)");
        ctx.fill_rect(0.0, m + i as f64 * c, m + n as f64 * c, c);
        ctx.set_line_width(2.0);
        ctx.set_stroke_style_str("#3b528b");
        ctx.stroke_rect(m, m + i as f64 * c + 1.0, n as f64 * c, (c - 2.0).max(1.0));
    }
    if let Some((i, j)) = focus.filter(|&(i, j)| i < n && j < n) {
        ctx.set_line_width(2.0);
        ctx.set_stroke_style_str("#ffffff");
        ctx.stroke_rect(m + j as f64 * c, m + i as f64 * c, c, c);
        ctx.set_line_width(1.0);
        ctx.set_stroke_style_str("#000000");
        ctx.stroke_rect(
            m + j as f64 * c - 1.5,
            m + i as f64 * c - 1.5,
            c + 3.0,
            c + 3.0,
        );
    }
}

/// `label`, shortened with "…" to fit `width` px.
fn fit(ctx: &CanvasRenderingContext2d, label: &str, width: f64) -> String {
    let w = |s: &str| ctx.measure_text(s).map(|m| m.width()).unwrap_or(0.0);
    if w(label) <= width {
        return label.to_string();
    }
    let mut chars: Vec<char> = label.chars().collect();
    while !chars.is_empty() {
        chars.pop();
        let s: String = chars.iter().collect::<String>() + "…";
        if w(&s) <= width {
            return s;
        }
    }
    "…".into()
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn masked_runs_cover_exactly_the_masked_cells() {
        let (x, o) = (MASKED, 0.5f32);
        let runs = |row: &[f32]| masked_runs(row).collect::<Vec<_>>();
        assert_eq!(runs(&[o, o, x, x, x]), vec![(2, 5)]);
        assert_eq!(runs(&[x, o, x, x, o, x]), vec![(0, 1), (2, 4), (5, 6)]);
        assert_eq!(runs(&[o, o]), vec![]);
        assert_eq!(runs(&[x, x]), vec![(0, 2)]);
        assert_eq!(runs(&[]), vec![]);
    }

    #[test]
    fn the_layout_maps_points_to_cells() {
        let l = Layout::new(564.0, 6);
        assert!(l.labels());
        assert_eq!(l.cell, 80.0);
        assert_eq!(l.hit(84.0 + 1.0, 84.0 + 1.0), Some((0, 0)));
        assert_eq!(l.hit(84.0 + 81.0, 84.0 + 5.0 * 80.0 + 3.0), Some((5, 1)));
        assert_eq!(l.hit(10.0, 100.0), None);
        assert_eq!(l.hit(84.0 + 6.0 * 80.0 + 1.0, 100.0), None);
        let tight = Layout::new(300.0, 128);
        assert!(!tight.labels() && tight.cell > 2.0);
    }

    #[test]
    fn numbers_on_any_colour_of_either_map_meet_wcag_aa() {
        for k in 0..=200 {
            let x = k as f32 / 200.0;
            for bg in [viridis(x), diverging(2.0 * x - 1.0), MASK_RGB] {
                let fg = if ink(bg) == "#000000" {
                    [0, 0, 0]
                } else {
                    [255, 255, 255]
                };
                assert!(contrast(bg, fg) >= 4.5, "{bg:?}: {}", contrast(bg, fg));
            }
        }
        assert!((contrast([0, 0, 0], [255, 255, 255]) - 21.0).abs() < 1e-9);
    }

    #[test]
    fn masked_cells_are_grey_and_scales_span_the_values() {
        assert_eq!(
            Scale::signed_for(&[MASKED, -3.0, 2.0]),
            Scale::Signed { r: 3.0 }
        );
        assert_eq!(Scale::signed_for(&[0.0]), Scale::Signed { r: 1.0 });
        assert_eq!(Scale::Weights { max: 1.0 }.rgb(MASKED), MASK_RGB);
        assert_eq!(Scale::Weights { max: 0.5 }.rgb(0.5), viridis(1.0));
        for x in 0..=20 {
            assert_ne!(viridis(x as f32 / 20.0), MASK_RGB);
        }
    }
}
