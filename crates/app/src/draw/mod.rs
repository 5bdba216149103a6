//! Canvas drawing: matrices as images (one pixel per cell, scaled up without smoothing so they
//! stay crisp at any device pixel ratio), the all-heads grid and the large labelled heatmap.
//!
//! - `colour`: the scales, the mask's grey, readable ink;
//! - `canvas`: contexts, pixel density, a matrix put as pixels; `grown`: a matrix canvas
//!   that colours only what a longer text added;
//! - `cell_image` and `kept`: the off-screen images kept between results, rewritten row by row;
//! - `heads`: the all-heads grid; `heatmap`: one head's large map, `window` the part of it
//!   shown when zoomed.

mod canvas;
mod cell_image;
mod colour;
pub mod grown;
mod heads;
mod heatmap;
mod kept;
mod window;

pub use canvas::{context, device_pixel_ratio, put_matrix};
pub use colour::{contrast, ink, Scale, INK_DARK, INK_LIGHT, MASK_RGB};
pub use heads::{heads_canvas, Tile};
pub use heatmap::{heatmap, highlight, Layout};
pub use window::{Window, MIN_SPAN, ZOOM_STEP};
