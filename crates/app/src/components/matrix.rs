//! A matrix as a small crisp canvas, or as a table of numbers.

use web_sys::HtmlCanvasElement;
use yew::prelude::*;

use super::{Floats, Labels};
use crate::compare::fmt_num;
use crate::draw::{grown, ink, Scale};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub values: Floats,
    pub rows: usize,
    pub cols: usize,
    pub scale: Scale,
    #[prop_or_default]
    pub label: AttrValue,
    #[prop_or_default]
    pub id: Option<AttrValue>,
}

#[function_component]
pub fn MatrixCanvas(props: &Props) -> Html {
    let node = use_node_ref();
    // what the canvas shows: a longer text's matrix colours only what it added
    let shown = use_mut_ref(|| None);
    {
        let node = node.clone();
        use_effect_with(
            (props.values.clone(), props.rows, props.cols, props.scale),
            move |(v, rows, cols, scale)| {
                if let Some(c) = node.cast::<HtmlCanvasElement>() {
                    crate::dom::count_draw("matrix");
                    let cells =
                        grown::paint(&c, &mut shown.borrow_mut(), &v.0, (*rows, *cols), *scale);
                    crate::dom::count("matrix cells", cells as f64);
                }
            },
        );
    }
    let aspect = format!(
        "aspect-ratio: {} / {}",
        props.cols.max(1),
        props.rows.max(1)
    );
    html! {
        <canvas ref={node} class="matrix" style={aspect} role="img" aria-label={props.label.clone()}
            id={props.id.clone()} />
    }
}

#[derive(Properties, PartialEq)]
pub struct TableProps {
    pub values: Floats,
    pub rows: usize,
    pub cols: usize,
    pub scale: Scale,
    pub row_labels: Labels,
    /// Column headers; when None the column index is used.
    #[prop_or_default]
    pub col_labels: Option<Labels>,
    #[prop_or_default]
    pub caption: AttrValue,
    /// What the rows and columns are, for screen readers (the empty corner cell).
    #[prop_or_default]
    pub corner: AttrValue,
    /// A pinned row, highlighted.
    #[prop_or_default]
    pub pinned: Option<usize>,
}

/// The numbers themselves, each cell tinted with its colour.
#[function_component]
pub fn MatrixTable(props: &TableProps) -> Html {
    let v = &props.values.0;
    let head = (0..props.cols).map(|j| {
        let label = match &props.col_labels {
            Some(l) => l.get(j).to_string(),
            None => j.to_string(),
        };
        html! { <th key={j} scope="col">{ label }</th> }
    });
    let rows = (0..props.rows).map(|i| {
        let cells = (0..props.cols).map(|j| {
            let x = v[i * props.cols + j];
            let rgb = props.scale.rgb(x);
            // black or white, whichever contrasts more (WCAG AA on every colour)
            let style = format!(
                "background:{};color:{}",
                attnlab_model::colors::css(rgb),
                ink(rgb)
            );
            html! { <td key={j} {style}>{ fmt_num(x) }</td> }
        });
        html! {
            <tr key={i} class={classes!((props.pinned == Some(i)).then_some("pinned"))}>
                <th scope="row">{ props.row_labels.get(i).to_string() }</th><>{ for cells }</>
            </tr>
        }
    });
    html! {
        <table class="numbers">
            <caption>{ props.caption.clone() }</caption>
            <thead><tr><th scope="col"><span class="sr">{ props.corner.clone() }</span></th><>{ for head }</></tr></thead>
            <tbody>{ for rows }</tbody>
        </table>
    }
}
