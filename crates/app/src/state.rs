//! The app's state as a reducer: what the user chose, what was loaded, and the last result
//! shown. Everything heavy (the Trace) is behind an `Rc` and compared by pointer.

use std::collections::BTreeSet;
use std::rc::Rc;

use attnlab_model::{AttentionOptions, Config, TokenInfo, Trace};
use yew::Reducible;

use crate::compare::Variant;
use crate::i18n::{Key, Lang};

/// The lesson's example sentence, the text box's starting value.
pub const LESSON_SENTENCE: &str = "나는 어제 산 커피를 오늘 마셨다";

/// Progress of fetching the model files.
#[derive(Clone, Debug, PartialEq)]
pub enum Load {
    Fetching { loaded: u64, total: Option<u64> },
    Failed(String),
    Ready,
}

/// Loading a model the user dropped or picked.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum OwnLoad {
    #[default]
    Idle,
    Reading {
        loaded: u64,
        total: u64,
    },
    /// Validating: tensors checked so far of all.
    Checking {
        done: usize,
        total: usize,
    },
    /// The files given do not hold all three model files.
    Missing {
        missing: Vec<String>,
        got: Vec<String>,
    },
    /// Validation failed; the current model stays.
    Failed(String),
    /// The user's model replaced the previous one (its files' names).
    Loaded(String),
}

/// Which engine computes the Trace.
#[derive(Clone, Debug, PartialEq)]
pub enum Backend {
    Starting,
    /// `adapter` is the browser's description (often empty); `fallback` marks a software
    /// adapter such as SwiftShader.
    Gpu {
        adapter: String,
        fallback: bool,
    },
    Cpu {
        reason: String,
    },
}

impl Backend {
    /// The adapter as the badge names it: the browser's description, else what kind it is.
    pub fn adapter_label(&self, lang: Lang) -> String {
        match self {
            Backend::Gpu { adapter, .. } if !adapter.is_empty() => adapter.clone(),
            Backend::Gpu { fallback: true, .. } => Key::SoftwareAdapter.text(lang).into(),
            Backend::Gpu { .. } => Key::GpuAdapter.text(lang).into(),
            _ => String::new(),
        }
    }
}

/// One forward pass's result as shown on the page.
#[derive(Clone, Debug)]
pub struct Shown {
    /// The runner's request number (increases with every request).
    pub generation: u64,
    pub text: String,
    pub tokens: Rc<Vec<TokenInfo>>,
    pub trace: Rc<Trace>,
    /// Why this result was computed on the CPU although the GPU engine runs (a text longer
    /// than a big model's GPU buffers hold).
    pub cpu_because: Option<String>,
    /// The unmodified model's trace for the same tokens, when an intervention is on.
    pub baseline: Option<Rc<Trace>>,
    pub forward_ms: f64,
    pub incremental: bool,
    /// `performance.now()` of the input event this answers, for the latency measurement.
    pub input_at: f64,
}

impl PartialEq for Shown {
    fn eq(&self, other: &Self) -> bool {
        self.generation == other.generation && Rc::ptr_eq(&self.trace, &other.trace)
    }
}

/// What the loaded model is.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelInfo {
    pub config: Config,
    pub has_ln_f: bool,
    pub n_params: usize,
}

#[derive(Clone, Debug, PartialEq)]
pub struct State {
    pub lang: Lang,
    pub load: Load,
    pub model: Option<ModelInfo>,
    pub backend: Backend,
    /// A message that stays until dismissed by the next change (e.g. GPU → CPU fallback).
    pub notice: Option<String>,
    pub text: String,
    pub shown: Option<Shown>,
    /// Why the current text produced no result (empty input, tokenizer error).
    pub error: Option<String>,
    pub layer: usize,
    pub head: usize,
    /// The token picked for the weighted-sum and next-token views (None: the last one).
    pub query: Option<usize>,
    /// The cell under the mouse or keyboard focus in the selected head, (query, key).
    pub cell: Option<(usize, usize)>,
    /// The variant applied to the model (when `apply` is on) and highlighted in the comparison.
    pub variant: Variant,
    pub tau: f32,
    pub apply: bool,
    pub mask: bool,
    /// Heads switched off, as (layer, head).
    pub ablate: BTreeSet<(usize, usize)>,
    /// URL parameters that were ignored (shown as plain text).
    pub url_notices: Vec<String>,
    pub paint_ms: f64,
    pub own: OwnLoad,
    /// The open lesson section (0-based), or None when lesson mode is off.
    pub lesson: Option<usize>,
    /// Counts the texts the page put in the text box (lesson presets).
    pub preset_n: u32,
    /// Counts the models loaded: a new one re-runs the text.
    pub model_id: u32,
}

impl State {
    pub fn new(lang: Lang) -> State {
        State {
            lang,
            load: Load::Fetching {
                loaded: 0,
                total: None,
            },
            model: None,
            backend: Backend::Starting,
            notice: None,
            text: LESSON_SENTENCE.into(),
            shown: None,
            error: None,
            layer: 0,
            head: 0,
            query: None,
            cell: None,
            variant: Variant::Scaled,
            tau: 1.0,
            apply: false,
            mask: true,
            ablate: BTreeSet::new(),
            url_notices: Vec::new(),
            paint_ms: 0.0,
            own: OwnLoad::Idle,
            lesson: None,
            preset_n: 0,
            model_id: 0,
        }
    }

    /// The attention options the model runs with.
    pub fn options(&self) -> AttentionOptions {
        let mut o = if self.apply {
            self.variant.options(self.tau, self.mask)
        } else {
            Variant::Scaled.options(1.0, self.mask)
        };
        o.ablate = self.ablate.clone();
        o
    }

    /// The query token the views use: the picked one if it still exists, else the last.
    pub fn query_index(&self) -> Option<usize> {
        let t = self.shown.as_ref()?.trace.dims.t;
        Some(self.query.filter(|&q| q < t).unwrap_or(t - 1))
    }
}

pub enum Action {
    SetLang(Lang),
    Progress {
        loaded: u64,
        total: Option<u64>,
    },
    LoadFailed(String),
    Loaded(ModelInfo),
    BackendReady(Backend),
    /// The GPU failed; the runner continues on the CPU.
    GpuFailed(String),
    SetText(String),
    Result(Shown),
    RunError(String),
    SelectHead(usize, usize),
    SelectQuery(usize),
    FocusCell(Option<(usize, usize)>),
    SetVariant(Variant),
    SetTau(f32),
    SetApply(bool),
    SetMask(bool),
    /// Switch a head (layer, head) off or back on.
    SetAblated((usize, usize), bool),
    Painted(f64),
    Own(OwnLoad),
    /// Open a lesson section (0-based), or close lesson mode.
    SetLesson(Option<usize>),
    /// Put a text in the text box (a lesson preset).
    Preset(String),
    /// The user's model passed validation and replaced the current one.
    OwnLoaded(ModelInfo, String),
}

/// τ slider range.
/// How many sections lesson mode has.
pub const LESSON_SECTIONS: usize = crate::lesson::Section::ALL.len();
pub const TAU_MIN: f32 = 0.05;
pub const TAU_MAX: f32 = 5.0;

impl Reducible for State {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        let mut s = (*self).clone();
        match action {
            Action::SetLang(l) => s.lang = l,
            Action::Progress { loaded, total } => s.load = Load::Fetching { loaded, total },
            Action::LoadFailed(e) => s.load = Load::Failed(e),
            Action::Loaded(info) => {
                s.load = Load::Ready;
                s.layer = s.layer.min(info.config.n_layer - 1);
                s.head = s.head.min(info.config.n_head - 1);
                let (n_layer, n_head) = (info.config.n_layer, info.config.n_head);
                let outside: Vec<_> = s
                    .ablate
                    .iter()
                    .filter(|&&(l, h)| l >= n_layer || h >= n_head)
                    .copied()
                    .collect();
                for (l, h) in outside {
                    s.ablate.remove(&(l, h));
                    s.url_notices.push(format!("ablate={l}.{h}"));
                }
                s.model = Some(info);
                s.model_id += 1;
            }
            Action::BackendReady(b) => s.backend = b,
            Action::GpuFailed(e) => {
                s.backend = Backend::Cpu { reason: e.clone() };
                s.notice = Some(e);
            }
            Action::SetText(t) => {
                if t == s.text {
                    return self;
                }
                s.text = t;
            }
            Action::Result(shown) => {
                if s.shown
                    .as_ref()
                    .is_some_and(|old| old.generation > shown.generation)
                {
                    return self; // stale: a newer result is already on screen
                }
                if let Some((i, j)) = s.cell {
                    let t = shown.trace.dims.t;
                    s.cell = (i < t && j < t).then_some((i, j));
                }
                s.shown = Some(shown);
                s.error = None;
            }
            Action::RunError(e) => {
                s.error = Some(e);
                s.shown = None;
            }
            Action::SelectHead(l, h) => {
                if let Some(m) = &s.model {
                    s.layer = l.min(m.config.n_layer - 1);
                    s.head = h.min(m.config.n_head - 1);
                }
            }
            Action::SelectQuery(q) => s.query = Some(q),
            Action::FocusCell(c) => s.cell = c,
            Action::SetVariant(v) => s.variant = v,
            Action::SetTau(t) => {
                if t.is_finite() {
                    s.tau = t.clamp(TAU_MIN, TAU_MAX);
                }
            }
            Action::SetApply(a) => s.apply = a,
            Action::SetMask(m) => s.mask = m,
            Action::SetAblated(lh, off) => {
                if off {
                    s.ablate.insert(lh);
                } else {
                    s.ablate.remove(&lh);
                }
            }
            Action::Painted(ms) => s.paint_ms = ms,
            Action::Own(o) => s.own = o,
            Action::SetLesson(l) => s.lesson = l.map(|i| i.min(LESSON_SECTIONS - 1)),
            Action::Preset(text) => {
                s.preset_n += 1;
                s.query = None;
                s.text = text;
            }
            Action::OwnLoaded(info, name) => {
                // a different model: the old result, head, token and ablations do not apply
                s.shown = None;
                s.error = None;
                s.cell = None;
                s.query = None;
                s.layer = 0;
                s.head = 0;
                s.ablate.clear();
                s.model = Some(info);
                s.model_id += 1;
                s.own = OwnLoad::Loaded(name);
            }
        }
        Rc::new(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use attnlab_model::testing::random_model;
    use attnlab_model::{forward, LnPlacement};

    fn config() -> Config {
        Config {
            n_embd: 16,
            n_head: 2,
            n_layer: 2,
            n_positions: 8,
            vocab_size: 20,
            ln_placement: LnPlacement::Post,
            ..Config::bundled(20)
        }
    }

    fn shown(generation: u64, tokens: &[u32]) -> Shown {
        let model = random_model(&config(), 1, 0.5);
        let trace = forward(&model, tokens, &AttentionOptions::default()).unwrap();
        Shown {
            generation,
            text: String::new(),
            tokens: Rc::new(vec![]),
            trace: Rc::new(trace),
            baseline: None,
            cpu_because: None,
            forward_ms: 1.0,
            incremental: false,
            input_at: 0.0,
        }
    }

    fn reduce(s: Rc<State>, a: Action) -> Rc<State> {
        s.reduce(a)
    }

    #[test]
    fn an_older_result_never_replaces_a_newer_one() {
        let s = Rc::new(State::new(Lang::Ko));
        let s = reduce(s, Action::Result(shown(5, &[1, 2, 3])));
        let s = reduce(s, Action::Result(shown(4, &[1, 2])));
        assert_eq!(s.shown.as_ref().unwrap().generation, 5);
        let s = reduce(s, Action::Result(shown(6, &[1])));
        assert_eq!(s.shown.as_ref().unwrap().generation, 6);
    }

    #[test]
    fn options_follow_the_applied_variant_only_when_applied() {
        let mut s = State::new(Lang::En);
        s.variant = Variant::Temperature;
        s.tau = 0.5;
        assert_eq!(s.options(), AttentionOptions::default());
        s.apply = true;
        assert_eq!(s.options().temperature, 0.5);
        s.variant = Variant::Unscaled;
        assert!(!s.options().scale && s.options().temperature == 1.0);
        s.mask = false;
        assert!(!s.options().causal_mask);
    }

    #[test]
    fn selections_stay_inside_the_model_and_the_text() {
        let s = Rc::new(State::new(Lang::Ko));
        let info = ModelInfo {
            config: config(),
            has_ln_f: false,
            n_params: 0,
        };
        let s = reduce(s, Action::Loaded(info));
        let s = reduce(s, Action::SelectHead(9, 9));
        assert_eq!((s.layer, s.head), (1, 1));
        let s = reduce(s, Action::SelectQuery(7));
        let s = reduce(s, Action::FocusCell(Some((4, 2))));
        let s = reduce(s, Action::Result(shown(1, &[1, 2, 3])));
        assert_eq!(
            s.query_index(),
            Some(2),
            "a query past the end falls back to the last"
        );
        assert_eq!(s.cell, None, "a focused cell past the end is dropped");
        let s = reduce(s, Action::SetTau(f32::NAN));
        assert_eq!(s.tau, 1.0);
        let s = reduce(s, Action::SetTau(100.0));
        assert_eq!(s.tau, TAU_MAX);
    }

    #[test]
    fn setting_the_same_text_changes_nothing() {
        let s = Rc::new(State::new(Lang::Ko));
        let same = reduce(s.clone(), Action::SetText(LESSON_SENTENCE.into()));
        assert!(Rc::ptr_eq(&s, &same));
    }
}
