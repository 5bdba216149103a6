//! The app's state as a reducer, in four cohesive parts, each with its own actions:
//! what the user looks at (`View`), what the user changed in the model (`Interventions`),
//! the model and its backend (`ModelStatus`) and the result on screen (`Results`). Timings
//! are not here: they live in `telemetry`, so recording a paint does not re-render the page.
//! Everything heavy (the Trace) is behind an `Rc` and compared by pointer.

use std::collections::BTreeSet;
use std::rc::Rc;

use attnlab_model::flow::Method;
use attnlab_model::roles::{Role, Scores};
use attnlab_model::{AttentionOptions, Config, TokenInfo, Trace};
use yew::Reducible;

use crate::compare::Variant;
use crate::engine::{Backend, Note, Preference};
use crate::i18n::Lang;
use crate::lesson::LESSON_SECTIONS;
use crate::loader::OwnLoad;

/// The lesson's example sentence, the text box's starting value.
pub const LESSON_SENTENCE: &str = "나는 어제 산 커피를 오늘 마셨다";

/// τ slider range.
pub const TAU_MIN: f32 = 0.05;
pub const TAU_MAX: f32 = 5.0;

/// Progress of fetching the model files.
#[derive(Clone, Debug, PartialEq)]
pub enum Load {
    Fetching { loaded: u64, total: Option<u64> },
    Failed(String),
    Ready,
}

/// One forward pass's result as shown on the page.
#[derive(Clone, Debug)]
pub struct Shown {
    /// The runner's request number (increases with every request).
    pub generation: u64,
    pub text: String,
    pub tokens: Rc<Vec<TokenInfo>>,
    pub trace: Rc<Trace>,
    /// The text roles of every head in `trace` (`layer * n_head + head`).
    pub roles: Rc<Vec<Scores>>,
    /// The second text's run, when comparing.
    pub b: Option<Rc<Side>>,
    /// Why this result was computed on the CPU although the GPU engine runs (a text longer
    /// than a big model's GPU buffers hold).
    pub cpu_because: Option<String>,
    /// The unmodified model's trace for the same tokens, when an intervention is on.
    pub baseline: Option<Rc<Trace>>,
    pub forward_ms: f64,
    /// The forward alone, without the transfer (the CPU worker's own clock).
    pub engine_ms: Option<f64>,
    pub incremental: bool,
    pub ran_on_gpu: bool,
    /// The backend after this request, and what else happened on the way.
    pub backend: Backend,
    pub notes: Vec<Note>,
    /// `performance.now()` of the input event this answers, and of the result's arrival,
    /// for the latency measurement.
    pub input_at: f64,
    pub result_at: f64,
    /// A step of a generation: the text it started from and exactly the ids appended to it
    /// (the text box shows the text with the token that landed).
    pub generated: Option<Rc<(String, Vec<u32>)>>,
    /// Every field of `trace` is there (a CPU result carries only what the views read; the
    /// whole-Trace export asks for the rest).
    pub complete: bool,
}

/// The logit lens of a result: every stage's next-token distribution at one position, as
/// the CPU worker computed it from the result's residual rows (or why it could not). Equal
/// by pointer for the numbers (stages × V of them: comparing props must not read them).
#[derive(Clone, Debug)]
pub struct LensResult {
    /// The result (`Shown::generation`) and the position it is of.
    pub of: u64,
    pub position: usize,
    /// (stages × V), the embedding first.
    pub probs: Result<Rc<Vec<f32>>, String>,
}

impl PartialEq for LensResult {
    fn eq(&self, other: &Self) -> bool {
        self.of == other.of
            && self.position == other.position
            && match (&self.probs, &other.probs) {
                (Ok(a), Ok(b)) => Rc::ptr_eq(a, b),
                (Err(a), Err(b)) => a == b,
                _ => false,
            }
    }
}

/// The generation settings (the Generate control; in the URL). `steps` tokens are appended
/// one by one, each chosen by `attnlab_model::sample::Sampling` from these settings.
#[derive(Clone, Debug, PartialEq)]
pub struct GenSettings {
    pub steps: usize,
    pub sampling: attnlab_model::sample::Sampling,
}

/// The most tokens one Generate appends.
pub const GEN_MAX_STEPS: usize = 64;

impl Default for GenSettings {
    fn default() -> Self {
        GenSettings {
            steps: 8,
            sampling: attnlab_model::sample::Sampling::default(),
        }
    }
}

/// The second text of a comparison, run with the same options as the first.
#[derive(Debug)]
pub struct Side {
    pub text: String,
    /// Its tokens and trace, or why there are none ("" for an empty text).
    pub run: Result<(Rc<Vec<TokenInfo>>, Rc<Trace>), String>,
}

impl PartialEq for Side {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
            && match (&self.run, &other.run) {
                (Ok((_, a)), Ok((_, b))) => Rc::ptr_eq(a, b),
                (Err(a), Err(b)) => a == b,
                _ => false,
            }
    }
}

impl PartialEq for Shown {
    fn eq(&self, other: &Self) -> bool {
        self.generation == other.generation && Rc::ptr_eq(&self.trace, &other.trace)
    }
}

/// The head-role probe of the loaded model: induction and duplicate-token scores from a
/// repeated random-token text, run once per model with default options.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeResult {
    /// `layer * n_head + head`; only the probe's roles are set.
    pub scores: Vec<Scores>,
    /// Tokens per copy, the seed of their draw, and why fewer than asked (if so).
    pub half: usize,
    pub seed: u64,
    pub clamped: Option<String>,
}

/// What the loaded model is.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelInfo {
    pub config: Config,
    pub has_ln_f: bool,
    pub n_params: usize,
}

/// What the user looks at: the text and what is selected in it.
#[derive(Clone, Debug, PartialEq)]
pub struct View {
    /// The text of the result on screen (the text box may be ahead of it while typing).
    pub text: String,
    pub layer: usize,
    pub head: usize,
    /// The token picked for the weighted-sum and next-token views (None: the last one).
    pub query: Option<usize>,
    /// The cell under the mouse or keyboard focus in the selected head, (query, key).
    pub cell: Option<(usize, usize)>,
    /// The open lesson section (0-based), or None when lesson mode is off.
    pub lesson: Option<usize>,
    /// Counts the texts the page put in the text box (lesson presets).
    pub preset_n: u32,
    /// Only heads with this role stand out in the all-heads grid.
    pub role_filter: Option<Role>,
    /// The second text compared with the first (None: comparing is off).
    pub compare: Option<String>,
    /// The last second text, kept while comparing is off (switching it on again restores it).
    pub compare_last: String,
    /// A pinned query token: it stays the query, highlighted, across keystrokes while the
    /// text up to it is unchanged.
    pub pin: Option<Pin>,
    /// What the selected head's map shows: raw attention, value-weighted, or rollout.
    pub flow: Method,
    /// The first result picks the head to show (`lesson::clearest_head`): nobody chose one
    /// yet (no head in the link, no click).
    pub auto_head: bool,
    /// How the Generate control samples.
    pub gen: GenSettings,
}

/// A pinned query: the token's index in the text's tokens and the text up to its end.
#[derive(Clone, Debug, PartialEq)]
pub struct Pin {
    pub token: usize,
    pub before: String,
}

impl Pin {
    /// The pin of `tokens[token]` in `text`, if it exists.
    pub fn of(text: &str, tokens: &[TokenInfo], token: usize) -> Option<Pin> {
        let end = tokens.get(token)?.span.1;
        Some(Pin {
            token,
            before: text.chars().take(end).collect(),
        })
    }

    /// Whether `tokens` of `text` still hold the pinned token: the text up to it is unchanged
    /// and the token there ends where it did.
    pub fn holds(&self, text: &str, tokens: &[TokenInfo]) -> bool {
        text.starts_with(&self.before)
            && tokens
                .get(self.token)
                .is_some_and(|t| t.span.1 == self.before.chars().count())
    }
}

pub enum ViewAction {
    SelectHead(usize, usize),
    SelectQuery(usize),
    FocusCell(Option<(usize, usize)>),
    /// Open a lesson section (0-based), or close lesson mode.
    SetLesson(Option<usize>),
    /// Put a text in the text box (a lesson preset).
    Preset(String),
    FilterRole(Option<Role>),
    /// Compare with a second text (its starting value), or stop comparing.
    SetCompare(Option<String>),
    SetFlow(Method),
    /// Pin a query row of the run on screen (a second pin of the same row, or None, unpins).
    Pin(Option<usize>),
    SetGen(GenSettings),
}

/// What the user changed in the model.
#[derive(Clone, Debug, PartialEq)]
pub struct Interventions {
    /// The variant applied to the model (when `apply` is on) and highlighted in the comparison.
    pub variant: Variant,
    pub tau: f32,
    pub apply: bool,
    pub mask: bool,
    /// Heads switched off, as (layer, head).
    pub ablate: BTreeSet<(usize, usize)>,
}

pub enum InterventionAction {
    SetVariant(Variant),
    SetTau(f32),
    SetApply(bool),
    SetMask(bool),
    /// Switch a head (layer, head) off or back on.
    SetAblated((usize, usize), bool),
}

impl Interventions {
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

    fn reduce(&mut self, a: InterventionAction) {
        match a {
            InterventionAction::SetVariant(v) => self.variant = v,
            InterventionAction::SetTau(t) => {
                if t.is_finite() {
                    self.tau = t.clamp(TAU_MIN, TAU_MAX);
                }
            }
            InterventionAction::SetApply(a) => self.apply = a,
            InterventionAction::SetMask(m) => self.mask = m,
            InterventionAction::SetAblated(lh, off) => {
                if off {
                    self.ablate.insert(lh);
                } else {
                    self.ablate.remove(&lh);
                }
            }
        }
    }
}

/// A message that stays on screen until the next one.
#[derive(Clone, Debug, PartialEq)]
pub enum Notice {
    GpuFailed(String),
    WorkerRestarted(String),
}

/// The model and the backend that runs it.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelStatus {
    pub load: Load,
    pub info: Option<ModelInfo>,
    pub backend: Backend,
    /// The backend the user asked for.
    pub preference: Preference,
    pub notice: Option<Notice>,
    pub own: OwnLoad,
    /// A model of the user's kept on this device (`kept`), or why keeping one failed.
    pub kept: Option<Result<crate::kept::KeptInfo, String>>,
    /// Counts the models loaded: a new one re-runs the text.
    pub model_id: u32,
    /// URL parameters that were ignored (shown as plain text).
    pub url_notices: Vec<String>,
}

pub enum ModelAction {
    Progress {
        loaded: u64,
        total: Option<u64>,
    },
    LoadFailed(String),
    Loaded(ModelInfo),
    BackendReady(Backend),
    SetPreference(Preference),
    Own(OwnLoad),
    /// What is kept on this device now (None: nothing), or why keeping failed.
    Kept(Option<Result<crate::kept::KeptInfo, String>>),
    /// The user's model passed validation and replaced the current one.
    OwnLoaded(ModelInfo, String),
}

/// The result on screen, or why there is none.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Results {
    pub shown: Option<Shown>,
    /// Why the current text produced no result (empty input, tokenizer error).
    pub error: Option<String>,
    /// The model's head-role probe: None while it runs, else its result or why it failed.
    pub probe: Option<Result<Rc<ProbeResult>, String>>,
    /// The latest logit lens (of the result on screen, or of an earlier one until the next
    /// arrives).
    pub lens: Option<Rc<LensResult>>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct State {
    pub lang: Lang,
    /// The theme, and one view embedded or presented (`display`).
    pub display: crate::display::Display,
    pub view: View,
    pub interventions: Interventions,
    pub model: ModelStatus,
    pub results: Results,
}

impl State {
    pub fn new(lang: Lang) -> State {
        State {
            lang,
            display: crate::display::Display::new(),
            view: View {
                text: LESSON_SENTENCE.into(),
                layer: 0,
                head: 0,
                query: None,
                cell: None,
                lesson: None,
                preset_n: 0,
                role_filter: None,
                compare: None,
                compare_last: String::new(),
                pin: None,
                flow: Method::Raw,
                auto_head: true,
                gen: GenSettings::default(),
            },
            interventions: Interventions {
                variant: Variant::Scaled,
                tau: 1.0,
                apply: false,
                mask: true,
                ablate: BTreeSet::new(),
            },
            model: ModelStatus {
                load: Load::Fetching {
                    loaded: 0,
                    total: None,
                },
                info: None,
                backend: Backend::Starting,
                preference: Preference::Auto,
                notice: None,
                own: OwnLoad::Idle,
                kept: None,
                model_id: 0,
                url_notices: Vec::new(),
            },
            results: Results::default(),
        }
    }

    /// The attention options the model runs with.
    pub fn options(&self) -> AttentionOptions {
        self.interventions.options()
    }

    /// The query token the views use: the picked one if it still exists, else the last.
    pub fn query_index(&self) -> Option<usize> {
        let t = self.results.shown.as_ref()?.trace.dims.t;
        Some(self.view.query.filter(|&q| q < t).unwrap_or(t - 1))
    }

    fn reduce_view(&mut self, a: ViewAction) {
        let v = &mut self.view;
        match a {
            ViewAction::SelectHead(l, h) => {
                v.auto_head = false;
                if let Some(m) = &self.model.info {
                    v.layer = l.min(m.config.n_layer - 1);
                    v.head = h.min(m.config.n_head - 1);
                }
            }
            ViewAction::SelectQuery(q) => {
                if v.query != Some(q) {
                    v.pin = None; // another query chosen: the pin lets go
                }
                v.query = Some(q);
            }
            ViewAction::FocusCell(c) => v.cell = c,
            ViewAction::SetLesson(l) => v.lesson = l.map(|i| i.min(LESSON_SECTIONS - 1)),
            ViewAction::Preset(text) => {
                v.preset_n += 1;
                v.query = None;
                v.pin = None;
                v.text = text;
            }
            ViewAction::FilterRole(r) => v.role_filter = r,
            ViewAction::SetFlow(m) => v.flow = m,
            ViewAction::SetGen(g) => {
                if g.sampling.validate().is_ok() && (1..=GEN_MAX_STEPS).contains(&g.steps) {
                    v.gen = g;
                }
            }
            ViewAction::SetCompare(b) => {
                if let Some(b) = &b {
                    v.compare_last = b.clone();
                }
                v.compare = b;
            }
            ViewAction::Pin(row) => {
                let shown = self.results.shown.as_ref();
                let token = row
                    .zip(shown)
                    .filter(|(r, s)| *r < s.trace.dims.t)
                    .map(|(r, s)| r + s.trace.dropped);
                let same = token.is_some() && v.pin.as_ref().map(|p| p.token) == token;
                match (token, shown) {
                    (Some(tok), Some(s)) if !same => {
                        v.pin = Pin::of(&s.text, &s.tokens, tok);
                        v.query = v.pin.as_ref().map(|p| p.token - s.trace.dropped);
                    }
                    // a row that is not there changes nothing
                    (None, _) if row.is_some() => {}
                    // unpin (Esc, or a second click on the pinned row)
                    _ => {
                        if v.pin.take().is_some() {
                            v.query = None;
                        }
                    }
                }
            }
        }
    }

    fn reduce_model(&mut self, a: ModelAction) {
        let m = &mut self.model;
        match a {
            ModelAction::Progress { loaded, total } => m.load = Load::Fetching { loaded, total },
            ModelAction::LoadFailed(e) => m.load = Load::Failed(e),
            ModelAction::Loaded(info) => {
                m.load = Load::Ready;
                let (n_layer, n_head) = (info.config.n_layer, info.config.n_head);
                self.view.layer = self.view.layer.min(n_layer - 1);
                self.view.head = self.view.head.min(n_head - 1);
                let ablate = &mut self.interventions.ablate;
                let outside: Vec<_> = ablate
                    .iter()
                    .filter(|&&(l, h)| l >= n_layer || h >= n_head)
                    .copied()
                    .collect();
                for (l, h) in outside {
                    ablate.remove(&(l, h));
                    m.url_notices.push(format!("ablate={l}.{h}"));
                }
                m.info = Some(info);
                m.model_id += 1;
            }
            ModelAction::BackendReady(b) => m.backend = b,
            ModelAction::SetPreference(p) => m.preference = p,
            ModelAction::Own(o) => m.own = o,
            ModelAction::Kept(k) => m.kept = k,
            ModelAction::OwnLoaded(info, name) => {
                // a different model: the old result, head, token and ablations do not apply
                self.results = Results::default();
                self.view.cell = None;
                self.view.query = None;
                self.view.pin = None;
                self.view.layer = 0;
                self.view.head = 0;
                self.view.auto_head = true;
                self.interventions.ablate.clear();
                m.info = Some(info);
                m.model_id += 1;
                m.own = OwnLoad::Loaded(name);
            }
        }
    }

    fn show(&mut self, shown: Shown) {
        if self
            .results
            .shown
            .as_ref()
            .is_some_and(|old| old.generation > shown.generation)
        {
            return; // stale: a newer result is already on screen
        }
        if let Some((i, j)) = self.view.cell {
            let t = shown.trace.dims.t;
            self.view.cell = (i < t && j < t).then_some((i, j));
        }
        self.model.backend = shown.backend.clone();
        for n in &shown.notes {
            match n {
                Note::GpuFailed(e) => self.model.notice = Some(Notice::GpuFailed(e.clone())),
                Note::WorkerRestarted(e) => {
                    self.model.notice = Some(Notice::WorkerRestarted(e.clone()))
                }
                Note::TooLong(_) => {}
            }
        }
        self.view.text = shown.text.clone();
        if shown.generated.is_some() {
            self.view.preset_n += 1; // the text box shows the token that landed
        }
        if self.view.auto_head {
            // (a text too short to say leaves the choice to the next result)
            let d = shown.trace.dims;
            if let Some((l, h)) = crate::lesson::clearest_head(&shown.roles, d.n_head) {
                (self.view.layer, self.view.head) = (l, h);
                self.view.auto_head = false;
            }
        }
        // the pin follows its token while the text before it is unchanged, else it goes
        if let Some(pin) = &self.view.pin {
            let row = pin.token.checked_sub(shown.trace.dropped);
            match row.filter(|_| pin.holds(&shown.text, &shown.tokens)) {
                Some(r) => self.view.query = Some(r),
                None => {
                    self.view.pin = None;
                    self.view.query = None;
                }
            }
        }
        if let (Some(_), Some(b)) = (&self.view.compare, &shown.b) {
            self.view.compare = Some(b.text.clone());
            self.view.compare_last = b.text.clone();
        }
        self.results.shown = Some(shown);
        self.results.error = None;
    }
}

pub enum Action {
    SetLang(Lang),
    SetTheme(crate::display::Theme),
    /// Present this view full-screen (None: back to the page).
    Present(Option<crate::display::Solo>),
    View(ViewAction),
    Intervene(InterventionAction),
    Model(ModelAction),
    /// A result arrived (one render: the text, the result, the backend and its notes).
    Result(Shown),
    /// The text produced no result: the text and why ("" for an empty text).
    RunError {
        text: String,
        error: String,
    },
    /// The loaded model's head-role probe finished (or failed).
    Probe(Result<Rc<ProbeResult>, String>),
    /// A logit lens arrived.
    Lens(Rc<LensResult>),
}

impl Reducible for State {
    type Action = Action;

    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        let mut s = (*self).clone();
        match action {
            Action::SetLang(l) => s.lang = l,
            Action::SetTheme(t) => s.display.theme = t,
            Action::Present(p) => {
                if let Some(crate::display::Solo::Lesson(i)) = p {
                    s.view.lesson = Some(i.min(LESSON_SECTIONS - 1));
                }
                s.display.present = p;
            }
            Action::View(a) => {
                s.reduce_view(a);
                // a presented or embedded lesson shows the section open now; closing the lesson
                // stops presenting it, but an embedded lesson stays (the frame shows nothing else)
                use crate::display::Solo;
                if let Some(Solo::Lesson(_)) = s.display.present {
                    s.display.present = s.view.lesson.map(Solo::Lesson);
                }
                if let Some(Solo::Lesson(i)) = s.display.embed {
                    let i = *s.view.lesson.get_or_insert(i);
                    s.display.embed = Some(Solo::Lesson(i));
                }
            }
            Action::Intervene(a) => s.interventions.reduce(a),
            Action::Model(a) => s.reduce_model(a),
            Action::Result(shown) => s.show(shown),
            Action::RunError { text, error } => {
                s.view.text = text;
                s.results.shown = None;
                s.results.error = Some(error);
            }
            Action::Probe(p) => s.results.probe = Some(p),
            Action::Lens(l) => {
                let of_shown = s.results.shown.as_ref().map(|x| x.generation) == Some(l.of);
                if of_shown {
                    s.results.lens = Some(l);
                }
            }
        }
        if s == *self {
            return self; // nothing changed: no render
        }
        Rc::new(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::CpuWhy;
    use attnlab_model::testing::{random_model, tiny_config};
    use attnlab_model::{forward, LnPlacement};

    fn config() -> Config {
        tiny_config(LnPlacement::Post)
    }

    fn shown(generation: u64, tokens: &[u32]) -> Shown {
        let model = random_model(&config(), 1, 0.5);
        let trace = forward(&model, tokens, &AttentionOptions::default()).unwrap();
        Shown {
            generation,
            text: format!("text {generation}"),
            tokens: Rc::new(vec![]),
            roles: Rc::new(attnlab_model::roles::text_scores(&trace)),
            b: None,
            trace: Rc::new(trace),
            baseline: None,
            cpu_because: None,
            forward_ms: 1.0,
            engine_ms: None,
            incremental: false,
            ran_on_gpu: false,
            backend: Backend::Cpu {
                why: CpuWhy::Chosen,
            },
            notes: vec![],
            input_at: 0.0,
            result_at: 0.0,
            generated: None,
            complete: true,
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
        assert_eq!(s.results.shown.as_ref().unwrap().generation, 5);
        assert_eq!(s.view.text, "text 5");
        let s = reduce(s, Action::Result(shown(6, &[1])));
        assert_eq!(s.results.shown.as_ref().unwrap().generation, 6);
    }

    #[test]
    fn a_result_brings_its_text_backend_and_notices_in_one_action() {
        let s = Rc::new(State::new(Lang::Ko));
        let mut r = shown(1, &[1, 2]);
        r.notes = vec![Note::GpuFailed("lost".into())];
        r.backend = Backend::Cpu {
            why: CpuWhy::GpuFailed("lost".into()),
        };
        let s = reduce(s, Action::Result(r));
        assert_eq!(s.view.text, "text 1");
        assert_eq!(s.model.notice, Some(Notice::GpuFailed("lost".into())));
        assert!(matches!(s.model.backend, Backend::Cpu { .. }));
    }

    #[test]
    fn options_follow_the_applied_variant_only_when_applied() {
        let mut s = State::new(Lang::En);
        s.interventions.variant = Variant::Temperature;
        s.interventions.tau = 0.5;
        assert_eq!(s.options(), AttentionOptions::default());
        s.interventions.apply = true;
        assert_eq!(s.options().temperature, 0.5);
        s.interventions.variant = Variant::Unscaled;
        assert!(!s.options().scale && s.options().temperature == 1.0);
        s.interventions.mask = false;
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
        let s = reduce(s, Action::Model(ModelAction::Loaded(info)));
        let s = reduce(s, Action::View(ViewAction::SelectHead(9, 9)));
        assert_eq!((s.view.layer, s.view.head), (1, 1));
        let s = reduce(s, Action::View(ViewAction::SelectQuery(7)));
        let s = reduce(s, Action::View(ViewAction::FocusCell(Some((4, 2)))));
        let s = reduce(s, Action::Result(shown(1, &[1, 2, 3])));
        assert_eq!(
            s.query_index(),
            Some(2),
            "a query past the end falls back to the last"
        );
        assert_eq!(s.view.cell, None, "a focused cell past the end is dropped");
        let s = reduce(s, Action::Intervene(InterventionAction::SetTau(f32::NAN)));
        assert_eq!(s.interventions.tau, 1.0);
        let s = reduce(s, Action::Intervene(InterventionAction::SetTau(100.0)));
        assert_eq!(s.interventions.tau, TAU_MAX);
    }

    fn shown_text(generation: u64, text: &str, spans: &[(usize, usize)]) -> Shown {
        let mut s = shown(generation, &vec![1; spans.len()]);
        s.text = text.into();
        s.tokens = Rc::new(
            spans
                .iter()
                .map(|&span| TokenInfo {
                    id: 1,
                    piece: String::new(),
                    display: String::new(),
                    span,
                    partial: false,
                })
                .collect(),
        );
        s
    }

    #[test]
    fn a_pin_follows_its_token_while_the_text_before_it_is_unchanged() {
        let s = Rc::new(State::new(Lang::Ko));
        // "나는 커피를 마셨다": tokens 나는 | ␣커피를 | ␣마셨다
        let s = reduce(
            s,
            Action::Result(shown_text(
                1,
                "나는 커피를 마셨다",
                &[(0, 2), (2, 6), (6, 10)],
            )),
        );
        let s = reduce(s, Action::View(ViewAction::Pin(Some(1))));
        assert_eq!(
            s.view.pin.as_ref().map(|p| p.before.as_str()),
            Some("나는 커피를")
        );
        assert_eq!(s.query_index(), Some(1));
        // typing after it: the pin stays on the same token
        let s = reduce(
            s,
            Action::Result(shown_text(
                2,
                "나는 커피를 마셨다 오늘",
                &[(0, 2), (2, 6), (6, 10), (10, 13)],
            )),
        );
        assert_eq!(s.query_index(), Some(1));
        assert!(s.view.pin.is_some());
        // a second click on the same row unpins; pin again
        let s = reduce(s, Action::View(ViewAction::Pin(Some(1))));
        assert_eq!((s.view.pin.clone(), s.query_index()), (None, Some(3)));
        let s = reduce(s, Action::View(ViewAction::Pin(Some(1))));
        // the text before the pin changes: the pin goes, the query is the last token again
        let s = reduce(
            s,
            Action::Result(shown_text(3, "나는 차를 마셨다", &[(0, 2), (2, 5), (5, 9)])),
        );
        assert_eq!((s.view.pin.clone(), s.query_index()), (None, Some(2)));
        // Esc (None) unpins too
        let s = reduce(s, Action::View(ViewAction::Pin(Some(0))));
        assert!(s.view.pin.is_some());
        let s = reduce(s, Action::View(ViewAction::Pin(None)));
        assert_eq!(s.view.pin, None);
    }

    #[test]
    fn a_pin_counts_dropped_tokens_and_lets_go_when_its_token_is_dropped() {
        // the tiny model's context is 8: 10 tokens run the last 8 (2 dropped)
        let spans = |n: usize| (0..n).map(|i| (i, i + 1)).collect::<Vec<_>>();
        let text = |n: usize| "가".repeat(n);
        let s = Rc::new(State::new(Lang::Ko));
        let s = reduce(s, Action::Result(shown_text(1, &text(10), &spans(10))));
        assert_eq!(s.results.shown.as_ref().unwrap().trace.dropped, 2);
        let s = reduce(s, Action::View(ViewAction::Pin(Some(1)))); // row 1 = token 3
        assert_eq!(s.view.pin.as_ref().map(|p| p.token), Some(3));
        // one more token: one more dropped, the same token is one row up
        let s = reduce(s, Action::Result(shown_text(2, &text(11), &spans(11))));
        assert_eq!(
            (s.view.pin.as_ref().map(|p| p.token), s.query_index()),
            (Some(3), Some(0))
        );
        // another: the pinned token is dropped, and the pin goes
        let s = reduce(s, Action::Result(shown_text(3, &text(12), &spans(12))));
        assert_eq!((s.view.pin.clone(), s.query_index()), (None, Some(7)));
        // a row that is not there changes nothing
        let same = reduce(s.clone(), Action::View(ViewAction::Pin(Some(99))));
        assert!(Rc::ptr_eq(&s, &same));
    }

    #[test]
    fn an_action_that_changes_nothing_returns_the_same_state() {
        let s = Rc::new(State::new(Lang::Ko));
        let same = reduce(s.clone(), Action::View(ViewAction::FocusCell(None)));
        assert!(Rc::ptr_eq(&s, &same), "no new state, so no render");
        let other = reduce(s.clone(), Action::View(ViewAction::FocusCell(Some((0, 0)))));
        assert!(!Rc::ptr_eq(&s, &other));
    }
}
