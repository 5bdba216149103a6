//! The page's views. Each takes what it shows as props; heavy values are shared `Rc`s
//! compared by pointer so a view redraws only when its data changed.

use std::rc::Rc;

use attnlab_model::Trace;

pub mod deferred;
pub mod drill;
pub mod exports;
pub mod flow_strip;
pub mod forward_progress;
pub mod generate;
pub mod head_map;
pub mod head_roles;
pub mod header;
pub mod heads_grid;
pub mod legend;
pub mod lens;
pub mod lesson;
pub mod lesson_widgets;
pub mod model_card;
pub mod model_loader;
pub mod next_token;
pub mod notices;
pub mod present_bar;
pub mod softmax_compare;
pub mod steps;
pub mod text_compare;
pub mod text_input;
pub mod token_strip;
pub mod weighted_sum;

/// A browser observer (resize, intersection) of one element.
trait Observer {
    fn observe(&self, el: &web_sys::Element);
    fn disconnect(&self);
}

impl Observer for web_sys::ResizeObserver {
    fn observe(&self, el: &web_sys::Element) {
        web_sys::ResizeObserver::observe(self, el)
    }
    fn disconnect(&self) {
        web_sys::ResizeObserver::disconnect(self)
    }
}

impl Observer for web_sys::IntersectionObserver {
    fn observe(&self, el: &web_sys::Element) {
        web_sys::IntersectionObserver::observe(self, el)
    }
    fn disconnect(&self) {
        web_sys::IntersectionObserver::disconnect(self)
    }
}

/// Starts `observer` on the element behind `node`; returns the effect's cleanup, which stops
/// it and frees its callback `cb`.
fn watch<O: Observer, C: ?Sized>(
    observer: Option<O>,
    node: &yew::NodeRef,
    cb: wasm_bindgen::closure::Closure<C>,
) -> impl FnOnce() {
    if let (Some(o), Some(el)) = (&observer, node.cast::<web_sys::Element>()) {
        o.observe(&el);
    }
    move || {
        if let Some(o) = observer {
            o.disconnect();
        }
        drop(cb);
    }
}

/// What `measure` reads from the element behind `node`, re-read each time the element's size
/// changes (a ResizeObserver). Its callback runs after the browser's own layout, so the
/// reading forces none — unlike reading sizes while drawing a result, which forced a layout
/// per keystroke. `None` until first observed; a new value re-renders only the component
/// using it.
#[yew::hook]
pub fn use_measured<T>(node: yew::NodeRef, measure: fn(&web_sys::Element) -> T) -> Option<T>
where
    T: Clone + PartialEq + 'static,
{
    use wasm_bindgen::{closure::Closure, JsCast};
    let value = yew::use_state_eq(|| None::<T>);
    {
        let value = value.clone();
        yew::use_effect_with((), move |_| {
            let n = node.clone();
            let cb = Closure::<dyn Fn(js_sys::Array)>::new(move |_: js_sys::Array| {
                if let Some(el) = n.cast::<web_sys::Element>() {
                    value.set(Some(measure(&el)));
                }
            });
            let observer = web_sys::ResizeObserver::new(cb.as_ref().unchecked_ref()).ok();
            watch(observer, &node, cb)
        });
    }
    (*value).clone()
}

/// What the CPU worker computed for the card behind `node` about result `generation` at
/// `at`, from `asked` (the state's latest of its kind, maybe of another result or place).
/// When there is none and `wanted`, it is asked for with `need(generation, at)` — once per
/// (result, place), and only while the card is near the screen: off screen it would cost
/// the worker, and the next keystroke, for nothing.
#[yew::hook]
pub fn use_asked<At>(
    node: yew::NodeRef,
    asked: Option<Rc<crate::state::Asked<At>>>,
    generation: u64,
    at: At,
    wanted: bool,
    need: impl Fn(u64, At) + 'static,
) -> Option<Rc<crate::state::Asked<At>>>
where
    At: PartialEq + Clone + 'static,
{
    let near = use_near(node, "200px 0px");
    let current = asked.filter(|a| a.of == generation && a.at == at);
    let have = current.is_some();
    yew::use_effect_with((generation, at, near), move |(generation, at, near)| {
        if *near && !have && wanted {
            need(*generation, at.clone());
        }
    });
    current
}

/// Whether the element behind `node` is on the screen or within `margin` (a CSS margin,
/// e.g. "200px 0px") of it, as an IntersectionObserver reports it; true until first observed.
#[yew::hook]
pub fn use_near(node: yew::NodeRef, margin: &'static str) -> bool {
    use wasm_bindgen::{closure::Closure, JsCast};
    let near = yew::use_state_eq(|| true);
    {
        let near = near.clone();
        yew::use_effect_with((), move |_| {
            let cb = Closure::<dyn Fn(js_sys::Array)>::new(move |entries: js_sys::Array| {
                if let Some(e) = entries
                    .iter()
                    .last()
                    .and_then(|e| e.dyn_into::<web_sys::IntersectionObserverEntry>().ok())
                {
                    near.set(e.is_intersecting());
                }
            });
            let init = web_sys::IntersectionObserverInit::new();
            init.set_root_margin(margin);
            let observer =
                web_sys::IntersectionObserver::new_with_options(cb.as_ref().unchecked_ref(), &init)
                    .ok();
            watch(observer, &node, cb)
        });
    }
    *near
}

/// The element an event was fired at, as the element type the handler expects.
pub fn target_as<T: wasm_bindgen::JsCast>(e: &web_sys::Event) -> Option<T> {
    use wasm_bindgen::JsCast;
    e.target().and_then(|t| t.dyn_into::<T>().ok())
}

/// An `onchange` for a `<select>` that reports its value as `parse` reads it (a value it
/// cannot read reports nothing).
pub fn on_select<T: 'static>(
    cb: &yew::Callback<T>,
    parse: fn(&str) -> Option<T>,
) -> yew::Callback<web_sys::Event> {
    let cb = cb.clone();
    yew::Callback::from(move |e: web_sys::Event| {
        if let Some(v) = target_as::<web_sys::HtmlSelectElement>(&e).and_then(|s| parse(&s.value()))
        {
            cb.emit(v);
        }
    })
}

/// An `onchange` for a checkbox that reports whether it is now checked.
pub fn on_checked(cb: &yew::Callback<bool>) -> yew::Callback<web_sys::Event> {
    let cb = cb.clone();
    yew::Callback::from(move |e: web_sys::Event| {
        if let Some(i) = target_as::<web_sys::HtmlInputElement>(&e) {
            cb.emit(i.checked());
        }
    })
}

/// `n` of `t` positions around `center`, inside the text: what a view of a long text shows
/// at once (the table view, the token strip, the steps' rows).
pub fn window(center: usize, t: usize, n: usize) -> std::ops::Range<usize> {
    let start = center.saturating_sub(n / 2).min(t.saturating_sub(n));
    start..(start + n).min(t)
}

/// A shared Trace, equal only to itself, with its attention rollout computed the first time
/// a view asks (the head map and the flow strip both show it: T² per layer, once).
#[derive(Clone, Debug)]
pub struct TraceRef(pub Rc<Trace>, Rc<std::cell::OnceCell<Rc<Vec<Vec<f32>>>>>);

impl TraceRef {
    pub fn new(trace: Rc<Trace>) -> TraceRef {
        TraceRef(trace, Rc::default())
    }

    /// Whether the trace holds every head's maps (a slim one, of a long text, a few).
    pub fn every_head(&self) -> bool {
        self.0.kept() == attnlab_model::Keep::All
    }

    /// Every layer's attention rollout (`attnlab_model::flow::rollout`). Panics on a trace
    /// without every head's maps (`every_head`).
    pub fn rollout(&self) -> Rc<Vec<Vec<f32>>> {
        self.1
            .get_or_init(|| Rc::new(attnlab_model::flow::rollout(&self.0)))
            .clone()
    }
}

impl PartialEq for TraceRef {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

/// Shared strings (token labels, the vocabulary's display forms), equal only to themselves.
#[derive(Clone, Debug)]
pub struct Labels(pub Rc<Vec<String>>);

impl PartialEq for Labels {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

impl Labels {
    pub fn get(&self, i: usize) -> &str {
        self.0.get(i).map(String::as_str).unwrap_or("?")
    }
}

/// The head the detail views look at, in the trace on screen, with the run's token labels.
#[derive(Clone, Debug, PartialEq)]
pub struct HeadSel {
    pub trace: TraceRef,
    /// Display strings of the tokens run (T).
    pub labels: Labels,
    pub layer: usize,
    pub head: usize,
}

impl HeadSel {
    pub fn view(&self) -> attnlab_model::HeadView<'_> {
        self.trace.0.head(self.layer, self.head)
    }
}

/// A shared matrix of numbers, equal only to itself.
#[derive(Clone, Debug)]
pub struct Floats(pub Rc<Vec<f32>>);

impl PartialEq for Floats {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

pub mod matrix;

#[cfg(test)]
mod tests {
    use super::*;
    use attnlab_model::testing::{random_model, tiny_config};
    use attnlab_model::{forward, AttentionOptions, LnPlacement};

    #[test]
    fn a_window_stays_inside_the_text_around_its_centre() {
        assert_eq!(window(0, 10, 64), 0..10, "a short text whole");
        assert_eq!(window(5, 1000, 64), 0..64);
        assert_eq!(window(500, 1000, 64), 468..532);
        assert_eq!(window(999, 1000, 64), 936..1000);
        assert_eq!(window(3, 0, 64), 0..0);
    }

    #[test]
    fn the_rollout_is_computed_once_per_trace() {
        let model = random_model(&tiny_config(LnPlacement::Post), 2, 0.5);
        let run = |ids: &[u32]| {
            TraceRef::new(Rc::new(
                forward(&model, ids, &AttentionOptions::default()).unwrap(),
            ))
        };
        let a = run(&[1, 2, 3]);
        let first = a.rollout();
        assert!(
            Rc::ptr_eq(&first, &a.clone().rollout()),
            "the second view gets the same numbers"
        );
        assert_eq!(*first, attnlab_model::flow::rollout(&a.0));
        let b = run(&[1, 2, 3, 4]);
        let other = b.rollout();
        assert!(
            !Rc::ptr_eq(&first, &other),
            "another trace, its own rollout"
        );
        assert_eq!(other[0].len(), 16);
    }
}
