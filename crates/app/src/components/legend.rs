//! Colour legends: viridis for weights, PuOr for signed scores, grey hatch for masked cells.

use attnlab_model::colors::{css, diverging, viridis};
use yew::prelude::*;

use crate::draw::MASK_RGB;
use crate::i18n::{Key, Lang};

fn gradient(f: impl Fn(f32) -> [u8; 3], from: f32, to: f32) -> String {
    let stops: Vec<String> = (0..=8)
        .map(|k| css(f(from + (to - from) * k as f32 / 8.0)))
        .collect();
    format!(
        "background: linear-gradient(to right, {})",
        stops.join(", ")
    )
}

#[derive(Properties, PartialEq)]
pub struct Props {
    pub lang: Lang,
}

#[function_component]
pub fn Legend(props: &Props) -> Html {
    let t = |k: Key| k.text(props.lang);
    html! {
        <div class="legend" aria-label={t(Key::Legend)}>
            <span class="swatch-row"><span class="ramp" style={gradient(viridis, 0.0, 1.0)}></span>
                { t(Key::LegendWeights) }</span>
            <span class="swatch-row"><span class="ramp" style={gradient(diverging, -1.0, 1.0)}></span>
                { t(Key::LegendScores) }</span>
            <span class="swatch-row"><span class="ramp masked" style={format!("background-color:{}", css(MASK_RGB))}></span>
                { t(Key::MaskedCell) }</span>
        </div>
    }
}
