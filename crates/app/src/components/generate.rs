//! The Generate control: appends up to 64 tokens one by one, each chosen from the result on
//! screen by `attnlab_model::sample::Sampling` (greedy, or sampled with an output temperature
//! and top-k / top-p from a seed) and run as the next request, so every step is seen as it
//! lands. The appended ids are kept exactly (`EngineHandle::submit_generated`), which makes
//! a run the CLI's `attnlab generate` with the same settings. It stops when asked, when the
//! text fills the context (and says so), or when the text is changed meanwhile.

use std::rc::Rc;

use attnlab_model::sample::Sampling;
use attnlab_model::TokenInfo;
use yew::prelude::*;

use super::{target_as, TraceRef};
use crate::i18n::{Key, Lang};
use crate::state::{GenSettings, GEN_MAX_STEPS};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub lang: Lang,
    pub trace: TraceRef,
    /// Every token of the text on screen (also any dropped to fit the context).
    pub tokens: Rc<Vec<TokenInfo>>,
    /// The text on screen.
    pub text: AttrValue,
    pub generation: u64,
    /// The model's context length.
    pub context: usize,
    /// Set when the result on screen is itself a generation's step: the text it started from
    /// and the ids appended to it (a new run continues from exactly those ids).
    #[prop_or_default]
    pub generated: Option<Rc<(String, Vec<u32>)>>,
    pub settings: GenSettings,
    pub on_settings: Callback<GenSettings>,
    /// Runs (the text the generation started from, the tokens appended so far).
    pub on_step: Callback<(String, Vec<u32>)>,
}

/// A generation under way.
#[derive(Clone)]
struct Run {
    /// The text the ids are appended to, and the ids appended before this run (a run that
    /// continues a generated result keeps them exactly, not re-tokenized).
    base: String,
    prefix: Vec<u32>,
    /// Every id of the result the run started from, then the ids this run appended.
    base_ids: Vec<u32>,
    appended: Vec<u32>,
    total: usize,
    sampling: Sampling,
    /// Over (done, stopped, cut): kept for what it appended (`data-ids`) until the next run.
    ended: bool,
}

impl Run {
    /// What the next request runs: the base text and every id appended to it.
    fn step(&self) -> (String, Vec<u32>) {
        let mut ids = self.prefix.clone();
        ids.extend(&self.appended);
        (self.base.clone(), ids)
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Status {
    Idle,
    /// Started while the text box was ahead of the result: it begins with that text's result.
    Waiting,
    Running {
        done: usize,
        total: usize,
    },
    Done(usize),
    Stopped(usize),
    Context(usize),
    ContextFull,
    Changed(usize),
}

/// The form's fields as typed.
#[derive(Clone, PartialEq)]
struct Fields {
    steps: String,
    greedy: bool,
    temperature: String,
    top_k: String,
    top_p: String,
    seed: String,
}

impl Fields {
    fn of(s: &GenSettings) -> Fields {
        let opt = |x: Option<String>| x.unwrap_or_default();
        Fields {
            steps: s.steps.to_string(),
            greedy: s.sampling.greedy,
            temperature: s.sampling.temperature.to_string(),
            top_k: opt(s.sampling.top_k.map(|k| k.to_string())),
            top_p: opt(s.sampling.top_p.map(|p| p.to_string())),
            seed: s.sampling.seed.to_string(),
        }
    }

    /// The settings, or what is wrong with each field (every error at once).
    fn parse(&self) -> Result<GenSettings, Vec<Key>> {
        let mut errors = Vec::new();
        let steps = match self.steps.trim().parse::<usize>() {
            Ok(n) if (1..=GEN_MAX_STEPS).contains(&n) => n,
            _ => {
                errors.push(Key::GenBadSteps);
                1
            }
        };
        let temperature = match self.temperature.trim().parse::<f32>() {
            Ok(t) if t.is_finite() && t > 0.0 => t,
            _ if self.greedy => 1.0,
            _ => {
                errors.push(Key::GenBadTemperature);
                1.0
            }
        };
        let top_k = match self.top_k.trim() {
            _ if self.greedy => None,
            "" => None,
            k => match k.parse::<usize>() {
                Ok(k) if k >= 1 => Some(k),
                _ => {
                    errors.push(Key::GenBadTopK);
                    None
                }
            },
        };
        let top_p = match self.top_p.trim() {
            _ if self.greedy => None,
            "" => None,
            p => match p.parse::<f32>() {
                Ok(p) if p.is_finite() && p > 0.0 && p <= 1.0 => Some(p),
                _ => {
                    errors.push(Key::GenBadTopP);
                    None
                }
            },
        };
        let seed = match self.seed.trim().parse::<u64>() {
            Ok(n) => n,
            Err(_) if self.greedy => 0,
            Err(_) => {
                errors.push(Key::GenBadSeed);
                0
            }
        };
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(GenSettings {
            steps,
            sampling: Sampling {
                greedy: self.greedy,
                temperature,
                top_k,
                top_p,
                seed,
            },
        })
    }
}

/// The next token after the last position of `trace`, at generation step `step`.
fn choose(trace: &attnlab_model::Trace, sampling: &Sampling, step: usize) -> u32 {
    sampling.choose(trace.last_logits(), step)
}

/// The main text box's value (it may be ahead of the result on screen while a text runs).
fn text_box() -> Option<String> {
    use wasm_bindgen::JsCast;
    let el = web_sys::window()?.document()?.get_element_by_id("text")?;
    Some(el.dyn_into::<web_sys::HtmlTextAreaElement>().ok()?.value())
}

/// The result on screen, as a run starts from it.
#[derive(Clone)]
struct Origin {
    trace: TraceRef,
    tokens: Rc<Vec<TokenInfo>>,
    text: AttrValue,
    generated: Option<Rc<(String, Vec<u32>)>>,
    context: usize,
}

impl Origin {
    fn of(p: &Props) -> Origin {
        Origin {
            trace: p.trace.clone(),
            tokens: p.tokens.clone(),
            text: p.text.clone(),
            generated: p.generated.clone(),
            context: p.context,
        }
    }

    /// Whether the text box holds this result's text (it may be ahead while a text runs).
    fn is_current(&self) -> bool {
        text_box().is_none_or(|t| t == self.text.as_str())
    }

    /// A run of `settings` from here: its first token chosen, or why none fits.
    fn begin(&self, settings: &GenSettings) -> Result<Run, Status> {
        if self.tokens.len() >= self.context {
            return Err(Status::ContextFull);
        }
        let (base, prefix) = match &self.generated {
            Some(g) => (g.0.clone(), g.1.clone()),
            None => (self.text.to_string(), Vec::new()),
        };
        Ok(Run {
            base,
            prefix,
            base_ids: self.tokens.iter().map(|t| t.id).collect(),
            appended: vec![choose(&self.trace.0, &settings.sampling, 0)],
            total: settings.steps,
            sampling: settings.sampling.clone(),
            ended: false,
        })
    }
}

#[function_component]
pub fn Generate(props: &Props) -> Html {
    let lang = props.lang;
    let fields = use_state(|| Fields::of(&props.settings));
    let run = use_mut_ref(|| None::<Run>);
    // a Generate pressed while the text box was ahead of the result on screen
    let pending = use_mut_ref(|| None::<GenSettings>);
    let status = use_state(|| Status::Idle);
    let launch = {
        let (run, status, on_step) = (run.clone(), status.clone(), props.on_step.clone());
        move |r: Result<Run, Status>| match r {
            Ok(r) => {
                status.set(Status::Running {
                    done: 1,
                    total: r.total,
                });
                on_step.emit(r.step());
                *run.borrow_mut() = Some(r);
            }
            Err(s) => status.set(s),
        }
    };
    // each new result: the next step of a generation under way (or the start it waited for)
    {
        let (run, pending, status, on_step) = (
            run.clone(),
            pending.clone(),
            status.clone(),
            props.on_step.clone(),
        );
        let (launch, origin) = (launch.clone(), Origin::of(props));
        use_effect_with(props.generation, move |_| {
            // a start that waited for the text box's result (the box is read only then)
            if pending.borrow().is_some() && origin.is_current() {
                if let Some(s) = pending.borrow_mut().take() {
                    return launch(origin.begin(&s));
                }
            }
            let mut slot = run.borrow_mut();
            let Some(r) = slot.as_mut().filter(|r| !r.ended) else {
                return;
            };
            let n = r.appended.len();
            // the result on screen is the run's: where it started, then what it appended
            let ours = origin.tokens.iter().map(|t| t.id).eq(r
                .base_ids
                .iter()
                .chain(&r.appended)
                .copied());
            let end = if !ours {
                Some(Status::Changed(n))
            } else if n == r.total {
                Some(Status::Done(n))
            } else if origin.tokens.len() >= origin.context {
                Some(Status::Context(n))
            } else {
                None
            };
            if let Some(st) = end {
                r.ended = true;
                status.set(st);
            } else {
                r.appended.push(choose(&origin.trace.0, &r.sampling, n));
                status.set(Status::Running {
                    done: n + 1,
                    total: r.total,
                });
                on_step.emit(r.step());
            }
        });
    }
    let parsed = fields.parse();
    let running = matches!(*status, Status::Running { .. } | Status::Waiting);
    let toggle = {
        let (run, stop_pending, stop_status) = (run.clone(), pending.clone(), status.clone());
        let (pending, status) = (pending.clone(), status.clone());
        let settings = parsed.clone();
        let origin = Origin::of(props);
        let start = move || match settings.clone() {
            Ok(s) if origin.is_current() => launch(origin.begin(&s)),
            // the text typed last has not run yet: start from its result
            Ok(s) => {
                *pending.borrow_mut() = Some(s);
                status.set(Status::Waiting);
            }
            Err(_) => {}
        };
        Callback::from(move |_: MouseEvent| {
            if running {
                stop_pending.borrow_mut().take();
                let n = run
                    .borrow_mut()
                    .as_mut()
                    .filter(|r| !r.ended)
                    .map_or(0, |r| {
                        r.ended = true;
                        r.appended.len()
                    });
                stop_status.set(Status::Stopped(n));
            } else {
                start();
            }
        })
    };
    // a field edited: kept as typed; valid settings go to the state (and the URL)
    let edit = |set: fn(&mut Fields, String, bool)| {
        let (fields, on_settings) = (fields.clone(), props.on_settings.clone());
        Callback::from(move |e: Event| {
            let Some(i) = target_as::<web_sys::HtmlInputElement>(&e) else {
                return;
            };
            let mut f = (*fields).clone();
            set(&mut f, i.value(), i.checked());
            if let Ok(s) = f.parse() {
                on_settings.emit(s);
            }
            fields.set(f);
        })
    };
    let (state_code, message) = match &*status {
        Status::Idle => ("idle", String::new()),
        Status::Waiting => ("running", Key::GenWaiting.text(lang).to_string()),
        Status::Running { done, total } => (
            "running",
            Key::GenRunning
                .text(lang)
                .replace("{n}", &done.to_string())
                .replace("{total}", &total.to_string()),
        ),
        Status::Done(n) => (
            "done",
            Key::GenDone.text(lang).replace("{n}", &n.to_string()),
        ),
        Status::Stopped(n) => (
            "stopped",
            Key::GenStopped.text(lang).replace("{n}", &n.to_string()),
        ),
        Status::Context(n) => (
            "context",
            Key::GenContext
                .text(lang)
                .replace("{n}", &n.to_string())
                .replace("{ctx}", &props.context.to_string()),
        ),
        Status::ContextFull => (
            "context",
            Key::GenContextFull
                .text(lang)
                .replace("{ctx}", &props.context.to_string()),
        ),
        Status::Changed(n) => (
            "changed",
            Key::GenTextChanged
                .text(lang)
                .replace("{n}", &n.to_string()),
        ),
    };
    // what the last run appended (for the tests and the curious)
    let ids_attr = run.borrow().as_ref().map_or_else(String::new, |r| {
        r.appended
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(",")
    });
    let f = &*fields;
    // a sampling field: off while greedy (greedy ignores it)
    let text_field = |key: Key,
                      id: &'static str,
                      mode: &'static str,
                      value: &str,
                      onchange: Callback<Event>| {
        html! {
            <label>{ key.text(lang) }
                <input type="text" inputmode={mode} {id} disabled={f.greedy} value={value.to_string()} {onchange} /></label>
        }
    };
    let errors = parsed.as_ref().err().cloned().unwrap_or_default();
    html! {
        <section class="card gen-card" id="generate" aria-labelledby="gen-h">
            <h2 id="gen-h">{ Key::GenTitle.text(lang) }</h2>
            <p class="help">{ Key::GenHelp.text(lang) }</p>
            <div class="gen-fields">
                <label>{ Key::GenSteps.text(lang) }
                    <input type="number" id="gen-steps" min="1" max={GEN_MAX_STEPS.to_string()} step="1"
                        value={f.steps.clone()} onchange={edit(|f, v, _| f.steps = v)} /></label>
                <label class="check"><input type="checkbox" id="gen-greedy" checked={f.greedy}
                    onchange={edit(|f, _, c| f.greedy = c)} />{ Key::GenGreedy.text(lang) }</label>
                { text_field(Key::GenTemperature, "gen-temperature", "decimal", &f.temperature, edit(|f, v, _| f.temperature = v)) }
                { text_field(Key::GenTopK, "gen-top-k", "numeric", &f.top_k, edit(|f, v, _| f.top_k = v)) }
                { text_field(Key::GenTopP, "gen-top-p", "decimal", &f.top_p, edit(|f, v, _| f.top_p = v)) }
                { text_field(Key::GenSeed, "gen-seed", "numeric", &f.seed, edit(|f, v, _| f.seed = v)) }
            </div>
            if !errors.is_empty() {
                <ul class="error gen-errors" role="alert" id="gen-errors">
                    { for errors.iter().map(|k| html! { <li>{ k.text(lang) }</li> }) }
                </ul>
            }
            <div class="gen-actions">
                // one button that turns into Stop while running, so the keyboard focus stays
                <button type="button" id={if running { "gen-stop" } else { "gen-start" }}
                    class={classes!(running.then_some("stop"))}
                    disabled={!running && parsed.is_err()} onclick={toggle}>
                    { if running { Key::GenStop } else { Key::GenStart }.text(lang) }</button>
                <output id="gen-status" role="status" data-state={state_code} data-ids={ids_attr}>{ message }</output>
            </div>
        </section>
    }
}

#[cfg(test)]
mod tests;
