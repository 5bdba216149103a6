//! Colour maps shared by every renderer of a Trace (the CLI's PNGs, the app's canvases).
//! Both are perceptually ordered and colour-blind safe.

/// Viridis sampled at nine stops: the sequential map for weights in [0, 1].
const VIRIDIS: [[f32; 3]; 9] = [
    [68.0, 1.0, 84.0],
    [71.0, 44.0, 122.0],
    [59.0, 81.0, 139.0],
    [44.0, 113.0, 142.0],
    [33.0, 144.0, 141.0],
    [39.0, 173.0, 129.0],
    [92.0, 200.0, 99.0],
    [170.0, 220.0, 50.0],
    [253.0, 231.0, 37.0],
];

/// ColorBrewer PuOr (purple ↔ orange through near-white): the diverging map for signed
/// scores in [−1, 1].
const PUOR: [[f32; 3]; 9] = [
    [45.0, 0.0, 75.0],
    [84.0, 39.0, 136.0],
    [128.0, 115.0, 172.0],
    [178.0, 171.0, 210.0],
    [247.0, 247.0, 247.0],
    [254.0, 184.0, 99.0],
    [224.0, 130.0, 20.0],
    [179.0, 88.0, 6.0],
    [127.0, 59.0, 8.0],
];

/// The map at `x` ∈ [0, 1], each channel rounded half up: linear between the stops. `x` and
/// the channels are never negative, so truncation is the floor and `+ 0.5` then truncation
/// rounds (wasm runs `floor` and `round` as library calls). Const, so that the tables below
/// are made at compile time.
const fn sample(stops: &[[f32; 3]; 9], x: f32) -> [u8; 3] {
    let x = x * 8.0;
    let mut i = x as usize;
    if i > 7 {
        i = 7;
    }
    let f = x - i as f32;
    let (a, b) = (stops[i], stops[i + 1]);
    [
        (a[0] + (b[0] - a[0]) * f + 0.5) as u8,
        (a[1] + (b[1] - a[1]) * f + 0.5) as u8,
        (a[2] + (b[2] - a[2]) * f + 0.5) as u8,
    ]
}

/// Entries per unit of the tables: every pixel of every heatmap is looked up here (a quarter of
/// a million per keystroke at 120 tokens), so a map is one multiply and one load, not an
/// interpolation. An entry is the map at its own `x`, and the nearest entry is at most half an
/// entry away, over which no channel moves by a whole unit (the steepest, PuOr's blue, 148 × 8
/// per unit, moves 0.58): a lookup is within 1 of the map, and exact at the ends and the stops
/// (tested).
const STEPS: usize = 1024;

const fn table(stops: &[[f32; 3]; 9]) -> [[u8; 3]; STEPS + 1] {
    let mut t = [[0u8; 3]; STEPS + 1];
    let mut k = 0;
    while k <= STEPS {
        t[k] = sample(stops, k as f32 / STEPS as f32);
        k += 1;
    }
    t
}

static VIRIDIS_TABLE: [[u8; 3]; STEPS + 1] = table(&VIRIDIS);
static PUOR_TABLE: [[u8; 3]; STEPS + 1] = table(&PUOR);

/// The table's entry nearest `x` ∈ [0, 1] (already clamped).
fn lookup(t: &[[u8; 3]; STEPS + 1], x: f32) -> [u8; 3] {
    t[((x * STEPS as f32 + 0.5) as usize).min(STEPS)]
}

/// Viridis at `x` ∈ [0, 1] (clamped; NaN maps to 0).
pub fn viridis(x: f32) -> [u8; 3] {
    lookup(
        &VIRIDIS_TABLE,
        if x.is_finite() {
            x.clamp(0.0, 1.0)
        } else {
            0.0
        },
    )
}

/// PuOr at `x` ∈ [−1, 1] (clamped; NaN maps to the neutral middle): negative purple,
/// positive orange.
pub fn diverging(x: f32) -> [u8; 3] {
    let x = if x.is_finite() {
        x.clamp(-1.0, 1.0)
    } else {
        0.0
    };
    lookup(&PUOR_TABLE, (x + 1.0) / 2.0)
}

/// `[r, g, b]` as a CSS hex colour.
pub fn css(c: [u8; 3]) -> String {
    format!("#{:02x}{:02x}{:02x}", c[0], c[1], c[2])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn viridis_ends_and_middle() {
        assert_eq!(viridis(0.0), [68, 1, 84]);
        assert_eq!(viridis(1.0), [253, 231, 37]);
        assert_eq!(viridis(0.5), [33, 144, 141]);
        assert_eq!(viridis(f32::NAN), viridis(0.0));
        assert_eq!(viridis(7.0), viridis(1.0));
    }

    #[test]
    fn the_fast_sample_rounds_as_f32_round_does() {
        // the straightforward formula, with floor and round
        let slow = |stops: &[[f32; 3]; 9], x: f32| -> [u8; 3] {
            let x = x * 8.0;
            let i = (x.floor() as usize).min(7);
            let f = x - i as f32;
            let c = |k: usize| (stops[i][k] + (stops[i + 1][k] - stops[i][k]) * f).round() as u8;
            [c(0), c(1), c(2)]
        };
        for n in 0..=100_000 {
            let x = n as f32 / 100_000.0;
            assert_eq!(sample(&VIRIDIS, x), slow(&VIRIDIS, x), "viridis at {x}");
            assert_eq!(sample(&PUOR, x), slow(&PUOR, x), "PuOr at {x}");
        }
    }

    #[test]
    fn a_lookup_is_within_one_of_the_map_and_exact_at_the_stops() {
        let near = |a: [u8; 3], b: [u8; 3]| a.iter().zip(b).all(|(&p, q)| p.abs_diff(q) <= 1);
        let mut differ = 0;
        for n in 0..=100_000 {
            let x = n as f32 / 100_000.0;
            let (v, p) = (viridis(x), diverging(2.0 * x - 1.0));
            assert!(near(v, sample(&VIRIDIS, x)), "viridis at {x}");
            assert!(near(p, sample(&PUOR, x)), "PuOr at {x}");
            differ += (v != sample(&VIRIDIS, x)) as usize;
        }
        // a rounding flips at about 15 % of the points (by the channels' slopes), never by more
        // than 1; a floor instead of the nearest entry would flip about twice as many
        assert!(differ > 0 && differ < 20_000, "{differ}");
        for k in 0..=8 {
            let x = k as f32 / 8.0;
            assert_eq!(viridis(x), VIRIDIS[k].map(|c| c as u8), "stop {k}");
            assert_eq!(
                diverging(2.0 * x - 1.0),
                PUOR[k].map(|c| c as u8),
                "stop {k}"
            );
        }
    }

    #[test]
    fn diverging_is_neutral_at_zero_and_darkens_outwards() {
        assert_eq!(diverging(0.0), [247, 247, 247]);
        assert_eq!(diverging(-1.0), [45, 0, 75]);
        assert_eq!(diverging(1.0), [127, 59, 8]);
        let lum = |c: [u8; 3]| c.iter().map(|&v| v as u32).sum::<u32>();
        for x in [0.25f32, 0.5, 0.75] {
            assert!(lum(diverging(x + 0.25)) < lum(diverging(x)), "{x}");
            assert!(lum(diverging(-x - 0.25)) < lum(diverging(-x)), "{x}");
        }
        assert_eq!(css(diverging(0.0)), "#f7f7f7");
    }
}
