//! The part of a long map on screen when it is zoomed: a square of `span` × `span` cells from
//! row `r0` and column `c0`, kept inside the map whatever the zoom, pan or focus asks.

/// The fewest cells a side shows when zoomed all the way in.
pub const MIN_SPAN: usize = 8;

/// How much one step of zoom changes the side (in: ÷ this, out: × this).
pub const ZOOM_STEP: f64 = 1.5;

/// A square window on a `t` × `t` map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub r0: usize,
    pub c0: usize,
    pub span: usize,
}

impl Window {
    /// The whole map.
    pub fn whole(t: usize) -> Window {
        Window {
            r0: 0,
            c0: 0,
            span: t.max(1),
        }
    }

    pub fn is_whole(&self, t: usize) -> bool {
        self.span >= t
    }

    /// The same window moved and shrunk to fit a `t` × `t` map (a text that got shorter).
    pub fn clamp(self, t: usize) -> Window {
        let t = t.max(1);
        let span = self.span.clamp(MIN_SPAN.min(t), t);
        Window {
            r0: self.r0.min(t - span),
            c0: self.c0.min(t - span),
            span,
        }
    }

    /// Zoomed by `factor` (< 1 in, > 1 out) about the point `at` (row, column, in cells,
    /// fractional): the cell under it stays under it.
    pub fn zoom(self, t: usize, factor: f64, at: (f64, f64)) -> Window {
        let span = ((self.span as f64 * factor).round() as usize).clamp(MIN_SPAN.min(t), t);
        let ratio = span as f64 / self.span as f64;
        let origin = |o: usize, a: f64| {
            let o = a - (a - o as f64) * ratio;
            o.round().clamp(0.0, (t - span) as f64) as usize
        };
        Window {
            r0: origin(self.r0, at.0),
            c0: origin(self.c0, at.1),
            span,
        }
    }

    /// Moved by `dr` rows and `dc` columns, stopping at the map's edges.
    pub fn pan(self, t: usize, dr: isize, dc: isize) -> Window {
        let max = t.saturating_sub(self.span) as isize;
        let to = |o: usize, d: isize| (o as isize + d).clamp(0, max) as usize;
        Window {
            r0: to(self.r0, dr),
            c0: to(self.c0, dc),
            span: self.span,
        }
    }

    /// Centred on the cell (row, column) as far as the edges allow.
    pub fn centre_on(self, t: usize, (r, c): (usize, usize)) -> Window {
        let half = self.span / 2;
        Window {
            r0: r.saturating_sub(half),
            c0: c.saturating_sub(half),
            span: self.span,
        }
        .clamp(t)
    }

    /// Moved the least that shows the cell (row, column); unmoved when it shows it already.
    pub fn follow(self, t: usize, (r, c): (usize, usize)) -> Window {
        let to = |o: usize, x: usize| {
            if x < o {
                x
            } else if x >= o + self.span {
                x + 1 - self.span
            } else {
                o
            }
        };
        Window {
            r0: to(self.r0, r),
            c0: to(self.c0, c),
            span: self.span,
        }
        .clamp(t)
    }

    pub fn shows(&self, (r, c): (usize, usize)) -> bool {
        (self.r0..self.r0 + self.span).contains(&r) && (self.c0..self.c0 + self.span).contains(&c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(r0: usize, c0: usize, span: usize) -> Window {
        Window { r0, c0, span }
    }

    #[test]
    fn zoom_keeps_the_cell_under_the_pointer() {
        let t = 1024;
        let z = Window::whole(t).zoom(t, 1.0 / 4.0, (512.0, 256.0));
        assert_eq!(z.span, 256);
        // the point was at 1/2 and 1/4 of the window: it still is
        assert_eq!((z.r0, z.c0), (384, 192));
        // and back out again
        assert_eq!(z.zoom(t, 4.0, (512.0, 256.0)), Window::whole(t));
    }

    #[test]
    fn zoom_stops_at_the_smallest_and_the_whole_map() {
        let t = 100;
        let mut z = Window::whole(t);
        for _ in 0..40 {
            z = z.zoom(t, 1.0 / ZOOM_STEP, (99.0, 99.0));
        }
        assert_eq!(z, w(92, 92, MIN_SPAN));
        for _ in 0..40 {
            z = z.zoom(t, ZOOM_STEP, (0.0, 0.0));
        }
        assert_eq!(z, Window::whole(t));
        // a map smaller than the smallest window shows whole
        assert_eq!(Window::whole(5).zoom(5, 0.1, (2.0, 2.0)), Window::whole(5));
    }

    #[test]
    fn pan_and_follow_stay_inside_the_map() {
        let t = 50;
        let z = w(10, 10, 20);
        assert_eq!(z.pan(t, -100, 5), w(0, 15, 20));
        assert_eq!(z.pan(t, 100, 100), w(30, 30, 20));
        assert_eq!(z.follow(t, (15, 12)), z);
        assert_eq!(z.follow(t, (49, 3)), w(30, 3, 20));
        assert_eq!(z.follow(t, (30, 29)), w(11, 10, 20));
        assert_eq!(z.centre_on(t, (0, 49)), w(0, 30, 20));
        assert!(w(30, 3, 20).shows((49, 3)) && !w(30, 3, 20).shows((29, 3)));
    }

    #[test]
    fn a_shorter_text_pulls_the_window_in() {
        assert_eq!(w(90, 40, 20).clamp(100), w(80, 40, 20));
        assert_eq!(w(90, 40, 20).clamp(15), w(0, 0, 15));
        assert_eq!(w(0, 0, 20).clamp(0), w(0, 0, 1));
    }
}
