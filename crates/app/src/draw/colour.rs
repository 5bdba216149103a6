//! The colours of the maps: the scales (viridis for weights, a diverging one for signed
//! values), the masked cells' grey, and the ink that reads on each.

use attnlab_model::colors::{diverging, viridis};
use attnlab_model::cpu::MASKED;

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

#[cfg(test)]
mod tests {
    use super::*;

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
