//! Timings as state of their own: the last forward, whether it was incremental, and how long
//! the page took to paint its result. They sit in a context above the page, so recording a
//! paint re-renders only the views that show timings, never the page's root. Each painted
//! result is also logged on `window.__attnlab` for the tests and benchmarks.

use std::rc::Rc;

use wasm_bindgen::JsValue;
use yew::prelude::*;

use crate::dom;
use crate::state::Shown;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timings {
    pub forward_ms: Option<f64>,
    pub incremental: bool,
    pub paint_ms: Option<f64>,
}

pub enum TimingAction {
    /// A result was painted: its forward, and how long painting it took.
    Painted {
        forward_ms: f64,
        incremental: bool,
        paint_ms: f64,
    },
}

impl Reducible for Timings {
    type Action = TimingAction;
    fn reduce(self: Rc<Self>, a: TimingAction) -> Rc<Self> {
        Rc::new(match a {
            TimingAction::Painted {
                forward_ms,
                incremental,
                paint_ms,
            } => Timings {
                forward_ms: Some(forward_ms),
                incremental,
                paint_ms: Some(paint_ms),
            },
        })
    }
}

/// What the page holds to record timings (stable across renders, so holding it never
/// re-renders the page).
#[derive(Clone, PartialEq)]
pub struct Recorder(UseReducerDispatcher<Timings>);

impl Recorder {
    /// After `shown` is on screen: logs it for tests and benchmarks and records the timings.
    pub fn painted(&self, shown: &Shown) {
        let d = self.0.clone();
        let s = shown.clone();
        let rendered = dom::now() - s.result_at;
        dom::after_paint(move || {
            let painted = dom::now();
            let paint_ms = painted - s.result_at;
            dom::record_paint(&[
                ("generation", (s.generation as f64).into()),
                ("text", s.text.as_str().into()),
                ("tokens", (s.run.trace.dims.t as f64).into()),
                ("latencyMs", (painted - s.input_at).into()),
                ("forwardMs", s.run.forward_ms.into()),
                (
                    "engineMs",
                    s.run.engine_ms.map(JsValue::from).unwrap_or(JsValue::NULL),
                ),
                ("paintMs", paint_ms.into()),
                ("renderMs", rendered.into()),
                ("incremental", s.run.incremental.into()),
                // parts of the page still to catch up once this frame is painted (off screen)
                ("stale", dom::stale_count().into()),
                (
                    "backend",
                    if s.run.ran_on_gpu { "webgpu" } else { "cpu" }.into(),
                ),
                ("at", painted.into()),
            ]);
            d.dispatch(TimingAction::Painted {
                forward_ms: s.run.forward_ms,
                incremental: s.run.incremental,
                paint_ms,
            });
        });
    }
}

#[derive(Properties, PartialEq)]
pub struct ProviderProps {
    pub children: Html,
}

/// Holds the timings; its children re-render only where they read them.
#[function_component]
pub fn TimingsProvider(props: &ProviderProps) -> Html {
    let timings = use_reducer(Timings::default);
    let recorder = Recorder(timings.dispatcher());
    html! {
        <ContextProvider<Recorder> context={recorder}>
            <ContextProvider<Rc<Timings>> context={Rc::new((*timings).clone())}>
                { props.children.clone() }
            </ContextProvider<Rc<Timings>>>
        </ContextProvider<Recorder>>
    }
}

/// The recorder, for the page.
#[hook]
pub fn use_recorder() -> Recorder {
    use_context::<Recorder>().expect("inside TimingsProvider")
}

/// The timings, for the views that show them.
#[hook]
pub fn use_timings() -> Rc<Timings> {
    use_context::<Rc<Timings>>().unwrap_or_default()
}
