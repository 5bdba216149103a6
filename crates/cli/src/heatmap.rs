//! One head's attention weights as a PNG: viridis colours, masked cells hatched,
//! token labels on both axes (Hangul included), a legend bar.

use std::path::PathBuf;

use ab_glyph::{point, Font, FontVec, PxScale, ScaleFont};
use attnlab_model::{HeadRows, TokenInfo, Trace};
use image::{imageops, Rgba, RgbaImage};

/// Fonts tried, in order, when neither --font nor $ATTNLAB_FONT is given.
const SYSTEM_FONTS: &[&str] = &[
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/opentype/noto/NotoSansCJKkr-Regular.otf",
    "/usr/share/fonts/truetype/nanum/NanumGothic.ttf",
    "/usr/share/fonts/truetype/noto/NotoSansKR-Regular.ttf",
];

/// Loads the given font, or the first system font that has Hangul. `Ok(None)` when none.
pub fn load_font(arg: Option<PathBuf>) -> Result<Option<FontVec>, String> {
    let explicit = arg.or_else(|| std::env::var_os("ATTNLAB_FONT").map(PathBuf::from));
    if let Some(path) = explicit {
        let data =
            std::fs::read(&path).map_err(|e| format!("reading font {}: {e}", path.display()))?;
        let font = FontVec::try_from_vec_and_index(data, 0)
            .map_err(|e| format!("font {}: {e}", path.display()))?;
        return Ok(Some(font));
    }
    Ok(SYSTEM_FONTS.iter().find_map(|p| {
        let font = FontVec::try_from_vec_and_index(std::fs::read(p).ok()?, 0).ok()?;
        (font.glyph_id('가').0 != 0).then_some(font)
    }))
}

pub fn viridis(x: f32) -> Rgba<u8> {
    let [r, g, b] = attnlab_model::colors::viridis(x);
    Rgba([r, g, b, 255])
}

const BG: Rgba<u8> = Rgba([255, 255, 255, 255]);
const INK: Rgba<u8> = Rgba([20, 20, 20, 255]);

fn fill(img: &mut RgbaImage, x: u32, y: u32, w: u32, h: u32, c: Rgba<u8>) {
    for yy in y..(y + h).min(img.height()) {
        for xx in x..(x + w).min(img.width()) {
            img.put_pixel(xx, yy, c);
        }
    }
}

fn text_width(font: &FontVec, px: f32, s: &str) -> f32 {
    let sf = font.as_scaled(PxScale::from(px));
    s.chars().map(|c| sf.h_advance(font.glyph_id(c))).sum()
}

/// Draws `s` with its top-left at (x, y).
fn draw_text(
    img: &mut RgbaImage,
    font: &FontVec,
    px: f32,
    x: f32,
    y: f32,
    s: &str,
    color: Rgba<u8>,
) {
    let scale = PxScale::from(px);
    let sf = font.as_scaled(scale);
    let mut cx = x;
    for c in s.chars() {
        let id = font.glyph_id(c);
        let glyph = id.with_scale_and_position(scale, point(cx, y + sf.ascent()));
        cx += sf.h_advance(id);
        if let Some(og) = font.outline_glyph(glyph) {
            let b = og.px_bounds();
            og.draw(|gx, gy, cov| {
                let (px_, py_) = (b.min.x as i64 + gx as i64, b.min.y as i64 + gy as i64);
                if px_ >= 0 && py_ >= 0 && (px_ as u32) < img.width() && (py_ as u32) < img.height()
                {
                    let p = img.get_pixel_mut(px_ as u32, py_ as u32);
                    for k in 0..3 {
                        p.0[k] =
                            (p.0[k] as f32 * (1.0 - cov) + color.0[k] as f32 * cov).round() as u8;
                    }
                }
            });
        }
    }
}

/// Renders the weights of (layer, head).
pub fn render(
    tokens: &[TokenInfo],
    tr: &Trace,
    hv: &HeadRows,
    font: Option<&FontVec>,
) -> RgbaImage {
    let t = tr.dims.t;
    let labels: Vec<String> = match font {
        Some(_) => tokens[tr.dropped..]
            .iter()
            .map(|tok| format!("{} {}", tok.display, ""))
            .map(|s| s.trim_end().to_string())
            .collect(),
        None => (0..t).map(|i| i.to_string()).collect(),
    };
    let px = 15.0;
    let cell = if t <= 16 { 40 } else { (720 / t as u32).max(4) };
    let label_w = match font {
        Some(f) => {
            labels
                .iter()
                .map(|l| text_width(f, px, l))
                .fold(0.0, f32::max)
                .ceil() as u32
                + 10
        }
        None => 10,
    };
    let (left, top) = (label_w + 8, label_w + 34);
    let grid = cell * t as u32;
    let (width, height) = (left + grid + 90, top + grid + 16);
    let mut img = RgbaImage::from_pixel(width, height, BG);
    let max = hv.weights.iter().copied().fold(0.0f32, f32::max).max(1e-12);

    for i in 0..t {
        for j in 0..t {
            let (x, y) = (left + j as u32 * cell, top + i as u32 * cell);
            let e = i * t + j;
            if hv.masked[e] == attnlab_model::cpu::MASKED {
                // masked future: light grey with diagonal hatching
                fill(&mut img, x, y, cell, cell, Rgba([232, 232, 232, 255]));
                for d in 0..cell {
                    for k in (0..cell).filter(|k| (d + k) % 6 == 0) {
                        img.put_pixel(x + d, y + k, Rgba([190, 190, 190, 255]));
                    }
                }
            } else {
                fill(&mut img, x, y, cell, cell, viridis(hv.weights[e] / max));
                if let (Some(f), true) = (font, cell >= 36) {
                    let s = format!("{:.2}", hv.weights[e]);
                    let ink = if hv.weights[e] / max > 0.6 { INK } else { BG };
                    let tw = text_width(f, 11.0, &s);
                    draw_text(
                        &mut img,
                        f,
                        11.0,
                        x as f32 + (cell as f32 - tw) / 2.0,
                        y as f32 + cell as f32 / 2.0 - 7.0,
                        &s,
                        ink,
                    );
                }
            }
        }
    }
    if let Some(f) = font {
        let title = format!(
            "layer {} · head {} · attention weights (max {max:.3})",
            hv.layer, hv.head
        );
        draw_text(&mut img, f, 16.0, 8.0, 6.0, &title, INK);
        for (i, lab) in labels.iter().enumerate() {
            // query labels, right-aligned left of their row
            let w = text_width(f, px, lab);
            let y = top as f32 + i as f32 * cell as f32 + (cell as f32 - px * 1.2) / 2.0;
            draw_text(&mut img, f, px, left as f32 - 6.0 - w, y, lab, INK);
            // key labels, rotated to read bottom to top above their column
            let (lw, lh) = (w.ceil() as u32 + 2, (px * 1.4) as u32);
            let mut tmp = RgbaImage::from_pixel(lw.max(1), lh, BG);
            draw_text(&mut tmp, f, px, 1.0, 0.0, lab, INK);
            let rot = imageops::rotate270(&tmp);
            let x = left as i64 + i as i64 * cell as i64 + (cell as i64 - rot.width() as i64) / 2;
            let y = top as i64 - 6 - rot.height() as i64;
            imageops::overlay(&mut img, &rot, x, y);
        }
    }
    // legend: 0 … max
    let (lx, lh) = (left + grid + 24, grid.max(60));
    for k in 0..lh {
        fill(
            &mut img,
            lx,
            top + k,
            16,
            1,
            viridis(1.0 - k as f32 / (lh - 1).max(1) as f32),
        );
    }
    if let Some(f) = font {
        draw_text(
            &mut img,
            f,
            12.0,
            (lx + 20) as f32,
            top as f32 - 2.0,
            &format!("{max:.2}"),
            INK,
        );
        draw_text(
            &mut img,
            f,
            12.0,
            (lx + 20) as f32,
            (top + lh) as f32 - 14.0,
            "0",
            INK,
        );
    }
    img
}
