//! The app's state as a reducer, in four cohesive parts, each with its own actions:
//! what the user looks at (`View`), what the user changed in the model (`Interventions`),
//! the model and its backend (`ModelStatus`) and the result on screen (`Results`). Timings
//! are not here: they live in `telemetry`, so recording a paint does not re-render the page.
//! Everything heavy (the Trace) is behind an `Rc` and compared by pointer.

use std::collections::BTreeSet;
use std::rc::Rc;

use attnlab_model::flow::Method;
use attnlab_model::AttentionOptions;
use yew::Reducible;

use crate::compare::Variant;
use crate::engine::{Backend, Note, Preference};
use crate::i18n::Lang;
use crate::lesson::LESSON_SECTIONS;
use crate::loader::OwnLoad;

/// The lesson's example sentence, the text box's starting value.
pub const LESSON_SENTENCE: &str = "나는 어제 산 커피를 오늘 마셨다";

mod interventions;
mod model;
mod request;
mod results;
#[cfg(test)]
mod tests;
mod view;

pub use interventions::{InterventionAction, Interventions, TAU_MAX, TAU_MIN};
pub use model::{Arch, LlamaAttn, Load, ModelAction, ModelInfo, ModelSource, ModelStatus, Notice};
pub use request::{
    plan, GenAsk, GenEnd, GenRun, GenSettings, GenStatus, Generated, Plan, Request, GEN_MAX_STEPS,
};
pub use results::{Asked, FlowResult, LensResult, ProbeResult, Results, Shown, Side};
pub use view::{Pin, View, ViewAction};

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
                exact: None,
                input_at: None,
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
                gen_run: None,
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
                source: ModelSource::Bundled,
                asked: None,
                hub: None,
                kept: None,
                engines: 0,
                url_notices: Vec::new(),
            },
            results: Results::default(),
        }
    }

    /// The attention options the model runs with.
    pub fn options(&self) -> AttentionOptions {
        self.interventions.options()
    }

    /// What the page asks the engine now: the text (as generated, when it is a
    /// generation's), the second text, the options, the backend, a generation under way.
    pub fn request(&self) -> Request {
        let v = &self.view;
        let (text, appended, generate) = match v.gen_run.as_ref().filter(|g| g.running()) {
            Some(g) => (g.from.0.clone(), g.from.1.clone(), Some(g.ask.clone())),
            None => match &v.exact {
                Some(e) => (e.0.clone(), e.1.clone(), None),
                None => (v.text.clone(), Vec::new(), None),
            },
        };
        Request {
            text,
            appended: Rc::new(appended),
            compare: v.compare.clone(),
            opts: self.options(),
            preference: self.model.preference,
            generate,
        }
    }

    /// A generation under way ends (`why`, given the tokens it appended).
    fn stop_generation(&mut self, why: fn(usize) -> GenStatus) {
        if let Some(g) = self.view.gen_run.as_mut().filter(|g| g.running()) {
            g.status = why(g.appended.len());
        }
    }

    /// The query token the views use: the picked one if it still exists, else the last.
    pub fn query_index(&self) -> Option<usize> {
        let t = self.results.shown.as_ref()?.run.trace.dims.t;
        Some(self.view.query.filter(|&q| q < t).unwrap_or(t - 1))
    }

    fn reduce_view(&mut self, a: ViewAction) {
        let v = &mut self.view;
        match a {
            ViewAction::SelectHead(l, h) => {
                v.auto_head = false;
                if let Some(m) = &self.model.info {
                    let (n_layer, n_head) = m.heads();
                    v.layer = l.min(n_layer - 1);
                    v.head = h.min(n_head - 1);
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
            ViewAction::Type(text, at) => {
                if v.text != text {
                    v.text = text;
                    v.exact = None;
                    v.input_at = Some(at);
                    self.stop_generation(GenStatus::Changed);
                }
            }
            ViewAction::Preset(text, at) => {
                v.preset_n += 1;
                v.query = None;
                v.pin = None;
                v.text = text;
                v.exact = None;
                v.input_at = Some(at);
                self.stop_generation(GenStatus::Changed);
            }
            ViewAction::FilterRole(r) => v.role_filter = r,
            ViewAction::SetFlow(m) => v.flow = m,
            ViewAction::SetGen(g) => {
                if g.sampling.validate().is_ok() && (1..=GEN_MAX_STEPS).contains(&g.steps) {
                    v.gen = g;
                }
            }
            ViewAction::SetCompare(b) => self.set_compare(b),
            ViewAction::ToggleCompare(on) => {
                // B is the last second text; the first time, A with 커피 → 차 (the lesson's
                // pair), else A itself
                let b = on.then(
                    || match (v.compare_last.is_empty(), v.text.contains("커피")) {
                        (false, _) => v.compare_last.clone(),
                        (true, true) => v.text.replacen("커피", "차", 1),
                        (true, false) => v.text.clone(),
                    },
                );
                self.set_compare(b);
            }
            ViewAction::GenStart => {
                if !v.gen_run.as_ref().is_some_and(|g| g.running()) {
                    let run = GenRun::start(v.gen_run.as_ref(), &v.text, v.exact.as_ref(), &v.gen);
                    v.gen_run = Some(run);
                    v.input_at = None;
                }
            }
            ViewAction::GenStop => self.stop_generation(GenStatus::Stopped),
            ViewAction::Pin(row) => {
                let shown = self.results.shown.as_ref();
                let token = row
                    .zip(shown)
                    .filter(|(r, s)| *r < s.run.trace.dims.t)
                    .map(|(r, s)| r + s.run.trace.dropped);
                let same = token.is_some() && v.pin.as_ref().map(|p| p.token) == token;
                match (token, shown) {
                    (Some(tok), Some(s)) if !same => {
                        v.pin = Pin::of(&s.text, &s.tokens, tok);
                        v.query = v.pin.as_ref().map(|p| p.token - s.run.trace.dropped);
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

    fn set_compare(&mut self, b: Option<String>) {
        let v = &mut self.view;
        if v.compare == b {
            return;
        }
        if let Some(b) = &b {
            v.compare_last = b.clone();
        }
        v.compare = b;
        v.input_at = None;
        self.stop_generation(GenStatus::Stopped);
    }

    fn reduce_model(&mut self, a: ModelAction) {
        let m = &mut self.model;
        match a {
            ModelAction::Progress { loaded, total } => m.load = Load::Fetching { loaded, total },
            ModelAction::LoadFailed(e) => m.load = Load::Failed(e),
            ModelAction::Loaded(info) => {
                m.load = Load::Ready;
                let (n_layer, n_head) = info.heads();
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
            }
            ModelAction::EngineReady(b, n) => {
                m.backend = b;
                m.engines = n;
                self.stop_generation(GenStatus::Stopped);
            }
            ModelAction::Backend(b) => m.backend = b,
            ModelAction::SetPreference(p) => {
                if m.preference != p {
                    m.preference = p;
                    self.view.input_at = None;
                    self.stop_generation(GenStatus::Stopped);
                }
            }
            ModelAction::Own(o) => {
                if matches!(o, OwnLoad::Failed(_)) {
                    m.asked = None;
                }
                m.own = o;
            }
            ModelAction::Kept(k) => m.kept = k,
            ModelAction::OwnLoaded(info, source) => {
                // a different model: the old result, head, token and ablations do not apply
                self.results = Results::default();
                self.view.cell = None;
                self.view.query = None;
                self.view.pin = None;
                self.view.layer = 0;
                self.view.head = 0;
                self.view.auto_head = true;
                // the ids of a generation are the old tokenizer's: the text is tokenized anew
                self.view.exact = None;
                self.view.gen_run = None;
                self.interventions.ablate.clear();
                m.info = Some(info);
                m.own = OwnLoad::Loaded(source.name());
                m.source = source;
                m.asked = None;
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
        if let Some(g) = &shown.generated {
            let run = self.view.gen_run.as_mut().filter(|r| r.running());
            if !run.is_some_and(|r| r.land(g)) {
                return; // a step of a generation stopped meanwhile
            }
            // the text box shows the text with the token that landed
            self.view.text = shown.text.clone();
            self.view.exact = Some(Rc::new((g.base.clone(), g.ids.clone())));
            self.view.preset_n += 1;
        }
        if let Some((i, j)) = self.view.cell {
            let t = shown.run.trace.dims.t;
            self.view.cell = (i < t && j < t).then_some((i, j));
        }
        self.model.backend = shown.run.backend.clone();
        for n in &shown.run.notes {
            match n {
                Note::GpuFailed(e) => self.model.notice = Some(Notice::GpuFailed(e.clone())),
                Note::WorkerRestarted(e) => {
                    self.model.notice = Some(Notice::WorkerRestarted(e.clone()))
                }
                Note::TooLong(_) => {}
            }
        }
        if self.view.auto_head {
            // (a text too short to say leaves the choice to the next result)
            let d = shown.run.trace.dims;
            if let Some((l, h)) = crate::lesson::clearest_head(&shown.roles, d.n_head) {
                (self.view.layer, self.view.head) = (l, h);
                self.view.auto_head = false;
            }
        }
        // the pin follows its token while the text before it is unchanged, else it goes
        if let Some(pin) = &self.view.pin {
            let row = pin.token.checked_sub(shown.run.trace.dropped);
            match row.filter(|_| pin.holds(&shown.text, &shown.tokens)) {
                Some(r) => self.view.query = Some(r),
                None => {
                    self.view.pin = None;
                    self.view.query = None;
                }
            }
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
    /// The text produced no result: why ("" for an empty text).
    RunError(String),
    /// The generation `nonce` appended nothing: the text already fills the context.
    ContextFull(u64),
    /// The loaded model's head-role probe finished (or failed).
    Probe(Result<Rc<ProbeResult>, String>),
    /// A logit lens arrived.
    Lens(Rc<LensResult>),
    /// The prediction after a picked token of a slim result arrived (one row × V).
    Prediction(Rc<LensResult>),
    /// An attention-flow strip arrived.
    Flow(Rc<FlowResult>),
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
            Action::Intervene(a) => {
                let before = s.options();
                s.interventions.reduce(a);
                if s.options() != before {
                    s.view.input_at = None;
                    s.stop_generation(GenStatus::Stopped);
                }
            }
            Action::Model(a) => s.reduce_model(a),
            Action::Result(shown) => s.show(shown),
            Action::RunError(error) => {
                s.stop_generation(GenStatus::Stopped);
                s.results.shown = None;
                s.results.error = Some(error);
            }
            Action::ContextFull(nonce) => {
                if let Some(g) = s.view.gen_run.as_mut() {
                    if g.running() && g.ask.nonce == nonce {
                        g.status = GenStatus::ContextFull;
                    }
                }
            }
            Action::Probe(p) => s.results.probe = Some(p),
            Action::Lens(l) => {
                if s.results.is_shown(l.of) {
                    s.results.lens = Some(l);
                }
            }
            Action::Prediction(p) => {
                if s.results.is_shown(p.of) {
                    s.results.prediction = Some(p);
                }
            }
            Action::Flow(f) => {
                if s.results.is_shown(f.of) {
                    s.results.flow = Some(f);
                }
            }
        }
        if s == *self {
            return self; // nothing changed: no render
        }
        Rc::new(s)
    }
}
