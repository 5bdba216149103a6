//! What the page exports, built without the DOM (so it is unit-tested natively): the selected
//! head as an SVG document, every head as one image's pixels, and the files' names. The
//! JSON and CSV documents are `attnlab_model::export`'s, the CLI's own formats.

use attnlab_model::cpu::MASKED;
use attnlab_model::{Thumbnails, Trace};

use crate::draw::{Scale, MASK_RGB};

/// Escapes text for XML character data and attribute values.
pub fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // characters XML 1.0 does not allow at all
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => out.push('\u{FFFD}'),
            '\u{FFFE}' | '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

fn hex([r, g, b]: [u8; 3]) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// Cell size of the SVG heatmap in px.
pub const SVG_CELL: usize = 24;
/// Room for the token labels left of and above the cells.
pub const SVG_MARGIN: usize = 96;

/// One head's attention weights as a standalone SVG: a cell per (query, key) coloured as on
/// screen (viridis over the head's largest weight, masked cells grey), the weight in the
/// cell's `<title>`, token labels on both axes.
pub fn heatmap_svg(weights: &[f32], masked: &[f32], labels: &[String], title: &str) -> String {
    let t = labels.len();
    let size = SVG_MARGIN + SVG_CELL * t;
    let max = weights
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .fold(0.0f32, f32::max);
    let scale = Scale::Weights {
        max: max.max(1e-12),
    };
    let mut s = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" \
         width=\"{size}\" height=\"{size}\" viewBox=\"0 0 {size} {size}\" \
         font-family=\"'Noto Sans CJK KR', sans-serif\" font-size=\"11\">\n<title>{}</title>\n\
         <rect width=\"{size}\" height=\"{size}\" fill=\"#ffffff\"/>\n",
        xml_escape(title)
    );
    for (i, label) in labels.iter().enumerate() {
        let c = SVG_MARGIN + i * SVG_CELL + SVG_CELL / 2;
        let l = xml_escape(label);
        s.push_str(&format!(
            "<text x=\"{}\" y=\"{c}\" text-anchor=\"end\" dominant-baseline=\"middle\">{l}</text>\n\
             <text transform=\"translate({c} {}) rotate(-60)\" dominant-baseline=\"middle\">{l}</text>\n",
            SVG_MARGIN - 4,
            SVG_MARGIN - 4
        ));
    }
    for i in 0..t {
        for j in 0..t {
            let e = i * t + j;
            let (w, is_masked) = (weights[e], masked[e] == MASKED);
            let fill = if is_masked { MASK_RGB } else { scale.rgb(w) };
            s.push_str(&format!(
                "<rect x=\"{}\" y=\"{}\" width=\"{SVG_CELL}\" height=\"{SVG_CELL}\" fill=\"{}\" \
                 data-q=\"{i}\" data-k=\"{j}\" data-weight=\"{w}\"><title>{} → {}: {}</title></rect>\n",
                SVG_MARGIN + j * SVG_CELL,
                SVG_MARGIN + i * SVG_CELL,
                hex(fill),
                xml_escape(&labels[i]),
                xml_escape(&labels[j]),
                if is_masked { "masked".to_string() } else { format!("{w:.6}") }
            ));
        }
    }
    s.push_str("</svg>\n");
    s
}

/// Every head's weights in one RGBA image: layers as rows, heads as columns, each head a
/// square tile of `t·k` px (`k` = how many px per cell make a tile at least 64 px), 4 px of
/// white between tiles. Returns (width, height, pixels).
pub fn grid_pixels(tr: &Trace) -> (usize, usize, Vec<u8>) {
    let d = &tr.dims;
    grid(d.n_layer, d.n_head, d.t, |l, h| {
        let hv = tr.head(l, h);
        hv.weights
            .iter()
            .zip(hv.masked)
            .map(|(&w, &m)| (m != MASKED).then_some(w))
            .collect()
    })
}

/// `grid_pixels` for a text too long to hold every head's maps: each head's thumbnail
/// (`Thumbnails`, `span` × `span` positions a cell), a cell wholly after its rows under the
/// causal mask (`causal`) in the mask's grey. At a span of 1 it is `grid_pixels` exactly.
pub fn pooled_grid_pixels(th: &Thumbnails, causal: bool) -> (usize, usize, Vec<u8>) {
    let mask = pooled_mask(th.cells, causal);
    grid(th.n_layer, th.n_head, th.cells, |l, h| {
        th.head(l, h)
            .iter()
            .zip(&mask)
            .map(|(&w, &m)| (m != MASKED).then_some(w))
            .collect()
    })
}

/// The mask of `cells` × `cells` pooled cells, row by row: `MASKED` where a cell is wholly
/// after its rows under the causal mask (`causal`: column > row, whatever the span), else 0 —
/// what the heads grid and the all-heads PNG draw in the mask's grey.
pub fn pooled_mask(cells: usize, causal: bool) -> Vec<f32> {
    (0..cells * cells)
        .map(|k| {
            if causal && k % cells > k / cells {
                MASKED
            } else {
                0.0
            }
        })
        .collect()
}

/// The grid of `layers` × `heads` tiles of `n` × `n` cells, `head(l, h)` each head's cells
/// row by row (None: masked).
fn grid(
    layers: usize,
    heads: usize,
    n: usize,
    head: impl Fn(usize, usize) -> Vec<Option<f32>>,
) -> (usize, usize, Vec<u8>) {
    const GAP: usize = 4;
    let n = n.max(1);
    let k = 64usize.div_ceil(n).max(1);
    let tile = n * k;
    let (w, h) = (
        heads * tile + (heads + 1) * GAP,
        layers * tile + (layers + 1) * GAP,
    );
    let mut px = vec![255u8; w * h * 4];
    for l in 0..layers {
        for hd in 0..heads {
            let cells = head(l, hd);
            let max = cells.iter().flatten().copied().fold(0.0f32, f32::max);
            let scale = Scale::Weights {
                max: max.max(1e-12),
            };
            let (x0, y0) = (GAP + hd * (tile + GAP), GAP + l * (tile + GAP));
            for y in 0..tile {
                for x in 0..tile {
                    let c = match cells.get((y / k) * n + x / k).copied().flatten() {
                        None => MASK_RGB,
                        Some(v) => scale.rgb(v),
                    };
                    px[((y0 + y) * w + x0 + x) * 4..][..3].copy_from_slice(&c);
                }
            }
        }
    }
    (w, h, px)
}

/// A file name for an export of head (`layer`, `head`) — or of every head when `None`.
pub fn file_name(head: Option<(usize, usize)>, what: &str, ext: &str) -> String {
    match head {
        Some((l, h)) => format!("attnlab-L{l}H{h}-{what}.{ext}"),
        None => format!("attnlab-{what}.{ext}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use attnlab_model::testing::random_model;
    use attnlab_model::{forward, AttentionOptions, Config, LnPlacement};

    fn trace(t: usize) -> Trace {
        let config = Config {
            n_embd: 8,
            n_head: 2,
            n_layer: 3,
            n_positions: 32,
            vocab_size: 20,
            layer_norm_epsilon: 1e-5,
            n_inner: None,
            activation_function: Default::default(),
            ln_placement: LnPlacement::Post,
            scale_embedding: false,
        };
        let ids: Vec<u32> = (0..t as u32).collect();
        forward(
            &random_model(&config, 3, 1.0),
            &ids,
            &AttentionOptions::default(),
        )
        .unwrap()
    }

    #[test]
    fn svg_has_a_cell_per_pair_and_escapes_labels() {
        let tr = trace(3);
        let hv = tr.head(1, 1);
        let labels: Vec<String> = ["<img src=x>", "a&b", "\"q\"\u{1}"]
            .map(String::from)
            .into();
        let svg = heatmap_svg(hv.weights, hv.masked, &labels, "L1 <H1>");
        assert_eq!(svg.matches("<rect x=").count(), 9);
        assert!(!svg.contains("<img"));
        assert!(svg.contains("&lt;img src=x&gt;") && svg.contains("a&amp;b"));
        assert!(svg.contains("&quot;q&quot;\u{FFFD}"));
        assert!(svg.contains("<title>L1 &lt;H1&gt;</title>"));
        // the masked (upper) cells are grey, the first row's only visible weight is 1
        assert_eq!(
            svg.matches(&format!("fill=\"{}\"", hex(MASK_RGB))).count(),
            3
        );
        assert!(svg.contains("data-q=\"0\" data-k=\"0\" data-weight=\"1\""));
        // every tag opened is closed
        assert_eq!(
            svg.matches("<rect").count(),
            svg.matches("</rect>").count() + 1
        );
        assert_eq!(svg.matches("<text").count(), svg.matches("</text>").count());
    }

    #[test]
    fn the_pooled_grid_is_the_whole_grid_at_span_1_and_greys_the_future() {
        let tr = trace(5);
        // at most 8 cells a side: 5 tokens are exact, one weight a cell
        let exact = tr.thumbnails(8).unwrap();
        assert_eq!(exact.span, 1);
        assert_eq!(pooled_grid_pixels(&exact, true), grid_pixels(&tr));
        // two positions a cell: 3 × 3 cells, tiles of 3 · 22 px
        let th = tr.thumbnails(3).unwrap();
        assert_eq!((th.span, th.cells), (2, 3));
        let (w, h, px) = pooled_grid_pixels(&th, true);
        let tile = 3 * 22;
        assert_eq!((w, h), (2 * tile + 3 * 4, 3 * tile + 4 * 4));
        let at = |x: usize, y: usize| {
            let i = (y * w + x) * 4;
            [px[i], px[i + 1], px[i + 2]]
        };
        // layer 0, head 0: cell (0, 1) is wholly in the future, (1, 0) and the diagonal not
        let cell = |r: usize, c: usize| at(4 + c * 22 + 11, 4 + r * 22 + 11);
        assert_eq!(cell(0, 1), MASK_RGB);
        assert_eq!(cell(0, 2), MASK_RGB);
        for (r, c) in [(0, 0), (1, 0), (1, 1), (2, 2)] {
            assert_ne!(cell(r, c), MASK_RGB, "cell ({r}, {c})");
        }
        // without the mask nothing is grey
        let (_, _, open) = pooled_grid_pixels(&th, false);
        assert!(open.chunks(4).all(|p| p[..3] != MASK_RGB));
    }

    #[test]
    fn the_grid_image_places_every_head() {
        let tr = trace(4);
        let (w, h, px) = grid_pixels(&tr);
        // 4 tokens → 16 px per cell, tiles of 64 px; 2 heads × 3 layers with 4 px gaps
        assert_eq!((w, h), (2 * 64 + 3 * 4, 3 * 64 + 4 * 4));
        assert_eq!(px.len(), w * h * 4);
        let at = |x: usize, y: usize| {
            [
                px[(y * w + x) * 4],
                px[(y * w + x) * 4 + 1],
                px[(y * w + x) * 4 + 2],
            ]
        };
        assert_eq!(at(0, 0), [255, 255, 255], "gap");
        // each tile's top-right cell is masked, its top-left cell is the largest weight (1)
        for l in 0..3 {
            for hd in 0..2 {
                let (x0, y0) = (4 + hd * 68, 4 + l * 68);
                assert_eq!(at(x0 + 63, y0), MASK_RGB);
                assert_eq!(at(x0, y0), attnlab_model::colors::viridis(1.0));
            }
        }
    }

    #[test]
    fn file_names_say_what_they_hold() {
        assert_eq!(
            file_name(Some((1, 2)), "weights", "svg"),
            "attnlab-L1H2-weights.svg"
        );
        assert_eq!(file_name(None, "trace", "json"), "attnlab-trace.json");
    }
}
