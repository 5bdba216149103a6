//! The large heatmap of one head's weights: its layout (cells, label margin, hit-testing),
//! the cells with the masked triangle hatched, token labels, and the focused cell's outline.

use attnlab_model::cpu::MASKED;
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

use super::canvas::{context, device_pixel_ratio};
use super::colour::Scale;
use super::kept::{draw_kept, Kept};
use super::window::Window;

/// Geometry of the large heatmap in CSS pixels: `n` × `n` cells shown, from row `r0` and
/// column `c0` of a `t` × `t` map (the whole map unless it is zoomed).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Layout {
    pub margin: f64,
    pub cell: f64,
    pub n: usize,
    pub r0: usize,
    pub c0: usize,
    pub t: usize,
}

impl Layout {
    /// Fits `n`×`n` cells into a square of `width` CSS px, leaving a label margin when the
    /// cells are big enough to carry labels.
    pub fn new(width: f64, n: usize) -> Layout {
        Layout::windowed(width, n, Window::whole(n))
    }

    /// Fits the window `win` of a `t` × `t` map into a square of `width` CSS px: zoomed in,
    /// its cells grow big enough to carry their tokens' labels.
    pub fn windowed(width: f64, t: usize, win: Window) -> Layout {
        let win = win.clamp(t);
        let n = win.span;
        let with_labels = (width - 84.0) / n as f64;
        let margin = if with_labels >= 9.0 { 84.0 } else { 4.0 };
        Layout {
            margin,
            cell: ((width - margin) / n as f64).max(1.0),
            n,
            r0: win.r0,
            c0: win.c0,
            t: t.max(1),
        }
    }

    /// The window of the map this layout shows.
    pub fn window(&self) -> Window {
        Window {
            r0: self.r0,
            c0: self.c0,
            span: self.n,
        }
    }

    /// The point (x, y) in cells of the whole map (fractional), for zooming about it.
    pub fn at(&self, x: f64, y: f64) -> (f64, f64) {
        let n = self.n as f64;
        (
            self.r0 as f64 + ((y - self.margin) / self.cell).clamp(0.0, n),
            self.c0 as f64 + ((x - self.margin) / self.cell).clamp(0.0, n),
        )
    }

    pub fn labels(&self) -> bool {
        self.margin > 8.0
    }

    /// The cell (row, col) of the map under a point, if any.
    pub fn hit(&self, x: f64, y: f64) -> Option<(usize, usize)> {
        let (c, r) = ((x - self.margin) / self.cell, (y - self.margin) / self.cell);
        (c >= 0.0 && r >= 0.0 && (c as usize) < self.n && (r as usize) < self.n)
            .then_some((self.r0 + r as usize, self.c0 + c as usize))
    }

    pub fn size(&self) -> f64 {
        self.margin + self.cell * self.n as f64
    }

    /// The query row whose label (in the left margin) is under a point, if any.
    pub fn row_label(&self, x: f64, y: f64) -> Option<usize> {
        let r = (y - self.margin) / self.cell;
        (self.labels() && (0.0..self.margin).contains(&x) && r >= 0.0 && (r as usize) < self.n)
            .then_some(self.r0 + r as usize)
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

/// Draws the large heatmap of one head's weights: cells, the masked triangle hatched and
/// token labels on both axes (when they fit) — of the layout's window of the map, and the
/// whole map on `minimap` with that window outlined. The focused cell is outlined on a canvas
/// of its own laid over this one (`highlight`), so moving the focus never redraws the heatmap.
pub fn heatmap(
    canvas: &HtmlCanvasElement,
    layout: Layout,
    (weights, masked): (&[f32], &[f32]),
    labels: &[String],
    ink: &str,
    minimap: Option<&HtmlCanvasElement>,
) {
    crate::dom::count_draw("head-map");
    let Some(ctx) = sized(canvas, layout) else {
        return;
    };
    let (n, m, c, t) = (layout.n, layout.margin, layout.cell, layout.t);
    let (r0, c0) = (layout.r0, layout.c0);
    if weights.len() < t * t || masked.len() < t * t || r0 + n > t || c0 + n > t {
        return;
    }
    // one colour scale for the whole map, so that panning does not recolour it
    let max = weights.iter().copied().fold(0.0f32, f32::max);
    let scale = Scale::Weights {
        max: max.max(1e-12),
    };
    // the cells: one pixel each on a kept image, the window's scaled up without smoothing
    if let Some(drawn) = draw_kept(Kept::Heatmap, 1, t, |_| (weights, masked, scale)) {
        if let Some((sx, sy)) = drawn.at[0] {
            ctx.set_image_smoothing_enabled(false);
            let (k, side) = (n as f64, c * n as f64);
            let _ = ctx
                .draw_image_with_html_canvas_element_and_sw_and_sh_and_dx_and_dy_and_dw_and_dh(
                    &drawn.canvas,
                    sx + c0 as f64,
                    sy + r0 as f64,
                    k,
                    k,
                    m,
                    m,
                    side,
                    side,
                );
            if let Some(mini) = minimap {
                draw_minimap(mini, &drawn.canvas, (sx, sy), layout);
            }
        }
    }
    // hatch the masked cells: diagonal strokes clipped to them, one rectangle per run of
    // masked cells in a row (under the causal mask one per row, not n²/2 cells: the clip is
    // built and rasterised per keystroke)
    ctx.save();
    ctx.begin_path();
    let mut any = false;
    for i in 0..n {
        let row = (r0 + i) * t + c0;
        for (j0, j1) in masked_runs(&masked[row..row + n]) {
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
        for (i, label) in labels.iter().skip(r0).enumerate().take(n) {
            let text = fit(&ctx, label, m - 6.0);
            let _ = ctx.fill_text(&text, m - 4.0, m + (i as f64 + 0.5) * c);
        }
        for (j, label) in labels.iter().skip(c0).enumerate().take(n) {
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

/// The whole map on the minimap's canvas (each pixel the average of the cells under it), the
/// part outside the layout's window dimmed and the window outlined.
fn draw_minimap(
    mini: &HtmlCanvasElement,
    cells: &HtmlCanvasElement,
    (sx, sy): (f64, f64),
    layout: Layout,
) {
    let Some(ctx) = context(mini) else {
        return;
    };
    let dpr = device_pixel_ratio();
    let side = mini.client_width().max(1) as f64;
    let px = (side * dpr).round() as u32;
    if mini.width() != px || mini.height() != px {
        mini.set_width(px);
        mini.set_height(px);
    }
    let _ = ctx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0);
    ctx.clear_rect(0.0, 0.0, side, side);
    ctx.set_image_smoothing_enabled(true);
    let t = layout.t as f64;
    let _ = ctx.draw_image_with_html_canvas_element_and_sw_and_sh_and_dx_and_dy_and_dw_and_dh(
        cells, sx, sy, t, t, 0.0, 0.0, side, side,
    );
    let k = side / t;
    let (x, y, w) = (
        layout.c0 as f64 * k,
        layout.r0 as f64 * k,
        (layout.n as f64 * k).max(2.0),
    );
    // dim what the map does not show: four bands around the window
    ctx.set_fill_style_str("rgba(0, 0, 0, 0.35)");
    ctx.fill_rect(0.0, 0.0, side, y);
    ctx.fill_rect(0.0, y + w, side, side - y - w);
    ctx.fill_rect(0.0, y, x, w);
    ctx.fill_rect(x + w, y, side - x - w, w);
    ctx.set_line_width(1.5);
    ctx.set_stroke_style_str("#ffcc00");
    ctx.stroke_rect(x, y, w, w);
}

/// Outlines the focused cell of the large heatmap on its overlay canvas (cleared when there
/// is none); a cell or row outside the layout's window is not drawn.
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
    let (focus, pinned) = (
        focus.and_then(|(i, j)| Some((i.checked_sub(layout.r0)?, j.checked_sub(layout.c0)?))),
        pinned.and_then(|i| i.checked_sub(layout.r0)),
    );
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
}
