//! The loaded model: its block diagram drawn as the model really is (post-LN or pre-LN),
//! sizes, the backend and the last timings (a view of its own that reads them from
//! `telemetry`, so a new timing re-renders only it).

use attnlab_model::LnPlacement;
use yew::prelude::*;

use crate::engine::Backend;
use crate::i18n::{Key, Lang};
use crate::state::{Arch, ModelInfo};
use crate::telemetry::use_timings;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub lang: Lang,
    pub info: ModelInfo,
    pub backend: Backend,
}

#[derive(Properties, PartialEq)]
struct TimingProps {
    lang: Lang,
}

/// The last forward and paint times.
#[function_component]
fn TimingRows(props: &TimingProps) -> Html {
    let t = |k: Key| k.text(props.lang);
    let timings = use_timings();
    html! {
        <>
            <div><dt>{ t(Key::ForwardMs) }</dt><dd id="forward-ms">{
                timings.forward_ms.map(|ms| format!("{ms:.1} ms ({})",
                    t(if timings.incremental { Key::Incremental } else { Key::Full }))).unwrap_or_default()
            }</dd></div>
            <div><dt>{ t(Key::PaintMs) }</dt><dd id="paint-ms">{
                timings.paint_ms.map(|ms| format!("{ms:.1} ms")).unwrap_or_default()
            }</dd></div>
        </>
    }
}

/// The boxes of the diagram, bottom (input) to top, and which of them repeat per block.
pub fn blocks(placement: LnPlacement, has_ln_f: bool) -> (Vec<Key>, std::ops::Range<usize>) {
    let mut b = vec![Key::Embedding];
    let start = b.len();
    match placement {
        LnPlacement::Post => b.extend([Key::Attention, Key::AddNorm, Key::Ffn, Key::AddNorm]),
        LnPlacement::Pre => b.extend([
            Key::FinalNorm, // drawn as "LayerNorm" below
            Key::Attention,
            Key::Add,
            Key::FinalNorm,
            Key::Ffn,
            Key::Add,
        ]),
    }
    let end = b.len();
    if has_ln_f {
        b.push(Key::FinalNorm);
    }
    b.push(Key::Unembed);
    (b, start..end)
}

/// The Llama family's boxes, as `blocks`: pre-norm blocks with RMSNorm, a final RMSNorm.
pub fn llama_blocks() -> (Vec<Key>, std::ops::Range<usize>) {
    let b = vec![
        Key::TokenEmbedding,
        Key::FinalRmsNorm, // drawn as "RMSNorm" inside the block
        Key::GqaAttention,
        Key::Add,
        Key::FinalRmsNorm,
        Key::SwigluFfn,
        Key::Add,
        Key::FinalRmsNorm,
        Key::Unembed,
    ];
    (b, 1..7)
}

#[function_component]
pub fn ModelCard(props: &Props) -> Html {
    let lang = props.lang;
    let t = |k: Key| k.text(lang);
    let row = |k: Key, v: String| html! { <div><dt>{ t(k) }</dt><dd>{ v }</dd></div> };
    let plain = |k: &str, v: String| html! { <div><dt>{ k.to_string() }</dt><dd>{ v }</dd></div> };
    let (n_layer, _) = props.info.heads();
    // the diagram's boxes, the block that repeats, its label and the sizes' rows
    let (boxes, repeat, placement, scale_embedding, sizes) = match &props.info.arch {
        Arch::Gpt2 {
            config: c,
            has_ln_f,
        } => {
            let (b, r) = blocks(c.ln_placement, *has_ln_f);
            let placement = match c.ln_placement {
                LnPlacement::Post => "post-LN",
                LnPlacement::Pre => "pre-LN",
            };
            let sizes = html! { <>
                { row(Key::Layers, c.n_layer.to_string()) }
                { row(Key::Heads, c.n_head.to_string()) }
                { row(Key::Context, c.n_positions.to_string()) }
                { plain("d_model", c.n_embd.to_string()) }
                { plain("d_k", c.d_k().to_string()) }
                { plain("d_ff", c.d_ff().to_string()) }
                { row(Key::Vocab, c.vocab_size.to_string()) }
                { row(Key::Parameters, fmt_params(props.info.n_params)) }
                { plain("LayerNorm", placement.to_string()) }
            </> };
            (b, r, placement, c.scale_embedding, sizes)
        }
        Arch::Llama { config: c, name } => {
            let (b, r) = llama_blocks();
            let sizes = html! { <>
                { plain("architecture", name.clone()) }
                { row(Key::Layers, c.n_layer.to_string()) }
                { row(Key::Heads, c.n_head.to_string()) }
                { row(Key::KvHeads, c.n_kv_head.to_string()) }
                { row(Key::Context, c.context.to_string()) }
                { plain("d_model", c.n_embd.to_string()) }
                { plain("d_k", c.head_dim.to_string()) }
                { plain("d_ff", c.n_ff.to_string()) }
                { row(Key::Vocab, c.vocab_size.to_string()) }
                { row(Key::Parameters, fmt_params(props.info.n_params)) }
                { plain("RoPE θ", format!("{}", c.rope_theta)) }
            </> };
            (b, r, "pre-RMSNorm", false, sizes)
        }
    };
    let (bh, gap, w) = (26.0, 8.0, 300.0);
    let height = boxes.len() as f64 * (bh + gap) + 8.0;
    // drawn top to bottom as data flows: input at the top
    let rects = boxes.iter().enumerate().map(|(i, &k)| {
        let y = 4.0 + i as f64 * (bh + gap);
        let in_block = repeat.contains(&i);
        let text = match k {
            Key::FinalNorm if in_block => "LayerNorm",
            Key::FinalRmsNorm if in_block => "RMSNorm",
            // the original Transformer's factor on the token embedding (config scale_embedding)
            Key::Embedding if scale_embedding => t(Key::EmbeddingScaled),
            _ => t(k),
        };
        let class = match k {
            Key::Attention | Key::GqaAttention => "blk attn",
            Key::Ffn | Key::SwigluFfn => "blk ffn",
            Key::AddNorm | Key::Add | Key::FinalNorm | Key::FinalRmsNorm => "blk norm",
            _ => "blk io",
        };
        html! {
            <g class={class}>
                <rect x="40" y={y.to_string()} width={(w - 60.0).to_string()} height={bh.to_string()} rx="5" />
                <text x={(w / 2.0 + 10.0).to_string()} y={(y + bh / 2.0 + 4.5).to_string()} text-anchor="middle">{ text }</text>
                if i + 1 < boxes.len() {
                    <line x1={(w / 2.0 + 10.0).to_string()} x2={(w / 2.0 + 10.0).to_string()}
                        y1={(y + bh).to_string()} y2={(y + bh + gap).to_string()} class="flow" />
                }
            </g>
        }
    });
    let y0 = 4.0 + repeat.start as f64 * (bh + gap) - 3.0;
    let y1 = 4.0 + repeat.end as f64 * (bh + gap) - gap + 3.0;
    let backend = match &props.backend {
        Backend::Gpu { .. } | Backend::Comparing { .. } => {
            format!("WebGPU ({})", props.backend.adapter_label(lang))
        }
        Backend::Cpu { .. } => "CPU (wasm, Web Worker)".to_string(),
        Backend::Starting => t(Key::BackendStarting).to_string(),
    };
    html! {
        <section class="card model-card" aria-labelledby="model-h">
            <h2 id="model-h">{ t(Key::ModelCard) }</h2>
            <div class="model-body">
                <svg class="diagram" viewBox={format!("0 0 {w} {height}")} role="img"
                    aria-label={format!("{placement} Transformer")} data-placement={placement}>
                    { for rects }
                    <path class="repeat" d={format!("M34 {y0} h-10 V{y1} h10")} />
                    <text class="repeat-label" x="4" y={((y0 + y1) / 2.0).to_string()}
                        transform={format!("rotate(-90 12 {})", (y0 + y1) / 2.0)}>{ format!("× {n_layer}") }</text>
                </svg>
                <div class="model-lists">
                <dl class="sizes" id="model-sizes">
                    { sizes }
                    { row(Key::Backend, backend) }
                </dl>
                <dl class="sizes" id="timings" aria-label={t(Key::Timings)}>
                    <TimingRows {lang} />
                </dl>
                </div>
            </div>
        </section>
    }
}

/// "8.74 M" for millions, the exact count below 100 000.
pub fn fmt_params(n: usize) -> String {
    if n >= 100_000 {
        format!("{:.2} M", n as f64 / 1e6)
    } else {
        n.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameter_counts_stay_readable() {
        assert_eq!(fmt_params(8_740_000), "8.74 M");
        assert_eq!(fmt_params(4_535), "4535");
    }

    #[test]
    fn the_diagram_follows_the_layernorm_placement() {
        let (post, rep) = blocks(LnPlacement::Post, false);
        assert_eq!(
            post[rep.clone()],
            [Key::Attention, Key::AddNorm, Key::Ffn, Key::AddNorm]
        );
        assert_eq!(post.last(), Some(&Key::Unembed));
        let (pre, rep) = blocks(LnPlacement::Pre, true);
        assert_eq!(
            pre[rep.start],
            Key::FinalNorm,
            "pre-LN normalises before attention"
        );
        assert_eq!(pre[rep.start + 2], Key::Add);
        assert_eq!(
            pre[pre.len() - 2],
            Key::FinalNorm,
            "ln_f before the unembedding"
        );
    }
}
