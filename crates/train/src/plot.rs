//! A small loss-curve PNG (train and validation loss against step).

use ab_glyph::{point, Font, FontVec, PxScale, ScaleFont};
use image::{Rgba, RgbaImage};

const FONTS: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
];

fn text(img: &mut RgbaImage, font: &FontVec, x: f32, y: f32, s: &str) {
    let scale = PxScale::from(14.0);
    let sf = font.as_scaled(scale);
    let mut cx = x;
    for c in s.chars() {
        let g = font
            .glyph_id(c)
            .with_scale_and_position(scale, point(cx, y + sf.ascent()));
        cx += sf.h_advance(font.glyph_id(c));
        if let Some(og) = font.outline_glyph(g) {
            let b = og.px_bounds();
            og.draw(|gx, gy, cov| {
                let (px, py) = (b.min.x as i64 + gx as i64, b.min.y as i64 + gy as i64);
                if px >= 0 && py >= 0 && (px as u32) < img.width() && (py as u32) < img.height() {
                    let p = img.get_pixel_mut(px as u32, py as u32);
                    for k in 0..3 {
                        p.0[k] = (p.0[k] as f32 * (1.0 - cov)) as u8;
                    }
                }
            });
        }
    }
}

/// `train` and `valid` are (step, loss) series.
pub fn loss_curve(train: &[(usize, f32)], valid: &[(usize, f32)], baseline: f32) -> RgbaImage {
    let (w, h, l, r, t, b) = (800u32, 480u32, 60f32, 20f32, 30f32, 40f32);
    let mut img = RgbaImage::from_pixel(w, h, Rgba([255, 255, 255, 255]));
    let max_step = train
        .iter()
        .chain(valid)
        .map(|p| p.0)
        .max()
        .unwrap_or(1)
        .max(1) as f32;
    let all: Vec<f32> = train
        .iter()
        .chain(valid)
        .map(|p| p.1)
        .chain([baseline])
        .collect();
    let (lo, hi) = (
        all.iter().copied().fold(f32::MAX, f32::min).floor(),
        all.iter().copied().fold(0.0, f32::max).ceil(),
    );
    let sx = |s: usize| l + (w as f32 - l - r) * s as f32 / max_step;
    let sy = |v: f32| t + (h as f32 - t - b) * (1.0 - (v - lo) / (hi - lo).max(1e-6));
    let line = |pts: &[(usize, f32)], c: Rgba<u8>, img: &mut RgbaImage| {
        for p in pts.windows(2) {
            let n = 200;
            for k in 0..=n {
                let f = k as f32 / n as f32;
                let x = sx(p[0].0) + (sx(p[1].0) - sx(p[0].0)) * f;
                let y = sy(p[0].1) + (sy(p[1].1) - sy(p[0].1)) * f;
                for (dx, dy) in [(0, 0), (1, 0), (0, 1)] {
                    let (xx, yy) = (x as u32 + dx, y as u32 + dy);
                    if xx < img.width() && yy < img.height() {
                        img.put_pixel(xx, yy, c);
                    }
                }
            }
        }
    };
    // axes
    for x in l as u32..w - r as u32 {
        img.put_pixel(x, h - b as u32, Rgba([0, 0, 0, 255]));
    }
    for y in t as u32..h - b as u32 {
        img.put_pixel(l as u32, y, Rgba([0, 0, 0, 255]));
    }
    let base = [(0usize, baseline), (max_step as usize, baseline)];
    line(&base, Rgba([150, 150, 150, 255]), &mut img);
    line(train, Rgba([0, 114, 178, 255]), &mut img); // blue (Okabe–Ito)
    line(valid, Rgba([213, 94, 0, 255]), &mut img); // vermillion
    if let Some(font) = FONTS
        .iter()
        .find_map(|p| FontVec::try_from_vec_and_index(std::fs::read(p).ok()?, 0).ok())
    {
        text(
            &mut img,
            &font,
            l + 10.0,
            6.0,
            "loss (nats/token): train (blue), validation (orange), unigram baseline (grey)",
        );
        text(&mut img, &font, 4.0, sy(hi) - 7.0, &format!("{hi:.1}"));
        text(&mut img, &font, 4.0, sy(lo) - 7.0, &format!("{lo:.1}"));
        text(&mut img, &font, l, h as f32 - b + 6.0, "0");
        text(
            &mut img,
            &font,
            w as f32 - r - 60.0,
            h as f32 - b + 6.0,
            &format!("step {}", max_step as usize),
        );
    }
    img
}
